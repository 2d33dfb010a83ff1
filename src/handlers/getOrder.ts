import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';
import { callerOf } from '../api-keys/caller.js';

// Another key's order is the same 404 as no order: no key learns which ids exist.
export const getOrder: Handler<'getOrder'> = async ({ params, context }, { orders }) => {
  const order = await orders.get(callerOf(context), params.orderId);
  if (!order) return errorAnswer('not_found', `Order ${params.orderId} does not exist`);
  return { status: 200, body: order };
};
