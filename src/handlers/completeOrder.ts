import type { Handler } from '../contract/handler.js';
import { closeOrder } from './closeOrder.js';
import type { Services } from './services.js';

// placed → completed, and the pet sold, in one transaction; never past its expiresAt.
export const completeOrder: Handler<'completeOrder', Services> = async ({ params, context }, services) => closeOrder(params.orderId, 'completed', context, services);
