// One handler module per operationId. The mapped type makes the compiler refuse a spec
// operation without a handler, and a handler for an operation the spec does not have.
import type { Handler, OperationId } from '../contract/handler.js';
import { untyped, type OperationHandler } from '../contract/middleware.js';
import { cancelOrder } from './cancelOrder.js';
import { completeOrder } from './completeOrder.js';
import { createPet } from './createPet.js';
import { getInventory } from './getInventory.js';
import { getOrder } from './getOrder.js';
import { getPet } from './getPet.js';
import { listOrders } from './listOrders.js';
import { listPets } from './listPets.js';
import { placeOrder } from './placeOrder.js';
import type { Services } from './services.js';

export const handlers = {
  listPets,
  createPet,
  getPet,
  placeOrder,
  listOrders,
  getOrder,
  cancelOrder,
  completeOrder,
  getInventory,
} satisfies { [K in OperationId]: Handler<K, Services> };

/** Every operation's handler with the app's services bound, as middleware sees it. */
export function bindHandlers(services: Services): Record<OperationId, OperationHandler> {
  const bound = {} as Record<OperationId, OperationHandler>;
  for (const operationId of Object.keys(handlers) as OperationId[]) {
    const handler = handlers[operationId] as Handler<OperationId, Services>;
    bound[operationId] = untyped((input) => handler(input, services));
  }
  return bound;
}
