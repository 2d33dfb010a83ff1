import type { HandlerResult, RequestContext } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';
import { callerOf } from '../api-keys/caller.js';
import type { OrdersRepository } from './orders.js';

/**
 * cancelOrder and completeOrder: the same transition, to another status (one statement:
 * src/store/orders.ts). Another key's order is the same 404 as no order.
 */
export async function closeOrder(
  orderId: number,
  to: 'completed' | 'cancelled',
  context: RequestContext,
  orders: OrdersRepository,
): Promise<HandlerResult<'cancelOrder'>> {
  const closing = await orders.close(callerOf(context), orderId, to, context.transaction);
  switch (closing.outcome) {
    case 'closed':
      return { status: 200, body: closing.order };
    case 'not-found':
      return errorAnswer('not_found', `Order ${orderId} does not exist`);
    case 'not-placed':
      return errorAnswer('order_closed', `Order ${orderId} is ${closing.status}, not placed: only a placed order can be completed or cancelled`);
  }
}
