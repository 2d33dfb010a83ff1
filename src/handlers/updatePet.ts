import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';
import { ifMatchCondition } from '../http/conditional.js';
import { callerOf } from '../api-keys/caller.js';
import { changedSince, unlessHeld } from '../store/holds.js';

// A JSON Merge Patch of name, categoryId and status, decided and written in one statement
// under the pet's row lock (src/catalogue/pets.ts): If-Match, then the rule that the status
// of a pet a placed order holds is the order's to change. `{}` changes nothing and answers
// the pet and its ETag.
export const updatePet: Handler<'updatePet'> = async ({ params, headers, body, context }, { pets, orders }) => {
  const id = params.petId;
  const ifMatch = ifMatchCondition(headers['If-Match']);
  const change = await unlessHeld(id, callerOf(context), (tx) => pets.update(id, body, ifMatch, tx), { pets, orders }, context.transaction);
  switch (change.outcome) {
    case 'changed':
      return { status: 200, body: change.pet, headers: { ETag: change.etag } };
    case 'not-found':
      return errorAnswer('not_found', `Pet ${id} does not exist`);
    case 'precondition-failed':
      return errorAnswer('precondition_failed', changedSince(id, ifMatch ?? []));
    case 'held':
      return errorAnswer(
        'pet_reserved',
        `Pet ${id} is held by ${change.holder === "another key's" ? 'an order' : `order ${change.holder}`}, which is placed: its status changes when the order is completed, cancelled or expires`,
      );
  }
};
