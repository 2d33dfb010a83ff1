import { operationPath } from '../contract/spec.js';
import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';
import { callerOf } from '../api-keys/caller.js';

// A new order's Location is its item under the collection it was posted to.
const collection = operationPath('placeOrder');

// The pet's status and the order change in one statement (src/store/orders.ts); with an
// Idempotency-Key, inside the transaction that stores the answer.
export const placeOrder: Handler<'placeOrder'> = async ({ body, context }, { orders, config }) => {
  const placed = await orders.place({ apiKeyId: callerOf(context), petId: body.petId, holdSeconds: config.ORDER_HOLD_SECONDS }, context.transaction);
  switch (placed.outcome) {
    case 'placed':
      return { status: 201, body: placed.order, headers: { Location: `${collection}/${placed.order.id}` } };
    case 'pet-not-found':
      return errorAnswer('pet_not_found', `Pet ${body.petId} does not exist`);
    case 'pet-not-available':
      return errorAnswer(
        'pet_not_available',
        `${placed.petStatus ? `Pet ${body.petId} is ${placed.petStatus}, not available` : `Pet ${body.petId} has no status, so it is not available`}: only an available animal can be ordered (listPets with status=available lists them; updatePet with {"status":"available"} makes one available that no placed order holds)`,
      );
  }
};
