import type { Handler } from '../contract/handler.js';
import { closeOrder } from './closeOrder.js';
import type { Services } from './services.js';

// placed → cancelled, and the pet available again, in one transaction.
export const cancelOrder: Handler<'cancelOrder', Services> = async ({ params, context }, services) => closeOrder(params.orderId, 'cancelled', context, services);
