import type { Handler } from '../contract/handler.js';
import { closeOrder } from '../store/closing.js';

// placed → completed, and the pet sold, in one transaction; never past its expiresAt.
export const completeOrder: Handler<'completeOrder'> = async ({ params, context }, { orders }) => closeOrder(params.orderId, 'completed', context, orders);
