// One handler module per operationId. The mapped type makes the compiler refuse a spec
// operation without a handler, and a handler for an operation the spec does not have.
import type { Handler, OperationId } from '../contract/handler.js';
import { untyped, type OperationHandler } from '../contract/middleware.js';
import { cancelOrder } from './cancelOrder.js';
import { createApiKey } from './createApiKey.js';
import { completeOrder } from './completeOrder.js';
import { createPet } from './createPet.js';
import { deleteCategory } from './deleteCategory.js';
import { deletePet } from './deletePet.js';
import { getApiKey } from './getApiKey.js';
import { getCategory } from './getCategory.js';
import { getInventory } from './getInventory.js';
import { getOrder } from './getOrder.js';
import { getPet } from './getPet.js';
import { listApiKeys } from './listApiKeys.js';
import { listCategories } from './listCategories.js';
import { listOrders } from './listOrders.js';
import { listPets } from './listPets.js';
import { placeOrder } from './placeOrder.js';
import { putCategory } from './putCategory.js';
import { revokeApiKey } from './revokeApiKey.js';
import { rotateApiKey } from './rotateApiKey.js';
import { listEvents } from './listEvents.js';
import { getEvent } from './getEvent.js';
import { createWebhookEndpoint } from './createWebhookEndpoint.js';
import { listWebhookEndpoints } from './listWebhookEndpoints.js';
import { getWebhookEndpoint } from './getWebhookEndpoint.js';
import { updateWebhookEndpoint } from './updateWebhookEndpoint.js';
import { deleteWebhookEndpoint } from './deleteWebhookEndpoint.js';
import { rotateWebhookEndpointSecret } from './rotateWebhookEndpointSecret.js';
import { listWebhookDeliveries } from './listWebhookDeliveries.js';
import type { Services } from './services.js';
import { updatePet } from './updatePet.js';

export const handlers = {
  listPets,
  createPet,
  getPet,
  updatePet,
  deletePet,
  placeOrder,
  listOrders,
  getOrder,
  cancelOrder,
  completeOrder,
  getInventory,
  listCategories,
  getCategory,
  putCategory,
  deleteCategory,
  createApiKey,
  listApiKeys,
  getApiKey,
  revokeApiKey,
  rotateApiKey,
  listEvents,
  getEvent,
  createWebhookEndpoint,
  listWebhookEndpoints,
  getWebhookEndpoint,
  updateWebhookEndpoint,
  deleteWebhookEndpoint,
  rotateWebhookEndpointSecret,
  listWebhookDeliveries,
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
