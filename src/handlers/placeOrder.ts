import { operationPath } from '../contract/spec.js';
import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors.js';
import { callerOf } from './caller.js';
import type { Services } from './services.js';

// A new order's Location is its item under the collection it was posted to.
const collection = operationPath('placeOrder');

// The pet's status and the order change in one statement (src/db/orders.ts); with an
// Idempotency-Key, inside the transaction that stores the answer.
export const placeOrder: Handler<'placeOrder', Services> = async ({ body, context }, { orders, orderHoldSeconds }) => {
  const placed = await orders.place({ apiKeyId: callerOf(context), petId: body.petId, holdSeconds: orderHoldSeconds }, context.transaction);
  switch (placed.outcome) {
    case 'placed':
      return { status: 201, body: placed.order, headers: { Location: `${collection}/${placed.order.id}` } };
    case 'pet-not-found':
      return errorAnswer('pet_not_found', `Pet ${body.petId} does not exist`);
    case 'pet-not-available':
      return errorAnswer(
        'pet_not_available',
        placed.petStatus ? `Pet ${body.petId} is ${placed.petStatus}, not available` : `Pet ${body.petId} has no status, so it is not available`,
      );
  }
};
