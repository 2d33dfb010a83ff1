import type { Handler } from '../contract/handler.js';

// One statement stores every pet or none (src/catalogue/pets.ts createMany); the contract's
// schema has refused a bad item, by its index and field, before this runs. With an
// Idempotency-Key, the statement runs in the middleware's transaction with the stored
// answer (src/middleware/idempotency.ts).
export const batchCreatePets: Handler<'batchCreatePets'> = async ({ body, context }, { pets }) => ({
  status: 200,
  body: await pets.createMany(body.requests, context.transaction),
});
