import type { Handler } from '../contract/handler.js';
import { closeOrder } from '../store/closing.js';

// placed → cancelled, and the pet available again, in one transaction.
export const cancelOrder: Handler<'cancelOrder'> = async ({ params, context }, { orders }) => closeOrder(params.orderId, 'cancelled', context, orders);
