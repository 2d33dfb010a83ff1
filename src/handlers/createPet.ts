import { operationPath } from '../contract/spec.js';
import type { Handler } from '../contract/handler.js';

// A stored pet's Location is its item under createPet's own collection path
// (`/v1/pets/{id}`): not derived from getPet, which may be removed at its sunset.
const collection = operationPath('createPet');

// With an Idempotency-Key, the idempotency middleware has opened a transaction, which the
// pet is stored in with the stored answer (src/middleware/idempotency.ts).
export const createPet: Handler<'createPet'> = async ({ body, context }, { pets }) => {
  const { pet, etag } = await pets.create(body, context.transaction);
  return { status: 201, body: pet, headers: { Location: `${collection}/${pet.id}`, ETag: etag } };
};
