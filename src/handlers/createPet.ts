import { operationPath } from '../contract/spec.js';
import type { Handler } from '../contract/handler.js';
import type { Services } from './services.js';

// `/v1/pets/{petId}` → `/v1/pets/` + id (split once, not replaced per request).
const [beforeId, afterId] = operationPath('getPet').split('{petId}') as [string, string];
const locationOf = (id: number): string => `${beforeId}${id}${afterId}`;
const location = { before: beforeId, after: afterId };

// With an Idempotency-Key (claimed by src/plugins/idempotency.ts), the pet and the stored
// answer are written in one statement.
export const createPet: Handler<'createPet', Services> = async ({ body, context }, { store, recentWriters }) => {
  const pet = context.idempotency ? await store.createPetIdempotently(body, context.idempotency, location) : await store.createPet(body);
  if (context.apiKeyId !== undefined) recentWriters.wrote(context.apiKeyId);
  return { status: 201, body: pet, headers: { Location: locationOf(pet.id) } };
};
