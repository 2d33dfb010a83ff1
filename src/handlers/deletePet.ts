import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';
import { ifMatchCondition } from '../http/conditional.js';
import { callerOf } from '../api-keys/caller.js';
import { changedSince, unlessHeld } from '../store/holds.js';

// Removes a pet from the catalogue (soft: its orders keep naming it), in one statement under
// its row lock (src/catalogue/pets.ts). A pet a placed order holds is 409 whatever If-Match
// says: its order must be closed first.
export const deletePet: Handler<'deletePet'> = async ({ params, headers, context }, { pets, orders }) => {
  const id = params.petId;
  const ifMatch = ifMatchCondition(headers['If-Match']);
  const removal = await unlessHeld(id, callerOf(context), (tx) => pets.remove(id, ifMatch, tx), { pets, orders }, context.transaction);
  switch (removal.outcome) {
    case 'removed':
      return { status: 204, body: undefined };
    case 'not-found':
      return errorAnswer('not_found', `Pet ${id} does not exist`);
    case 'precondition-failed':
      return errorAnswer('precondition_failed', changedSince(id, ifMatch ?? []));
    case 'held':
      return errorAnswer(
        'pet_reserved',
        removal.holder === "another key's"
          ? `Pet ${id} is held by an order, which is placed: it can be removed once the order is completed, cancelled or expires`
          : `Pet ${id} is held by order ${removal.holder}, which is placed: complete or cancel the order first, then remove the animal`,
      );
  }
};
