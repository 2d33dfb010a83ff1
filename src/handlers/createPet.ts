import { operationPath } from '../contract/spec.js';
import type { Handler } from '../contract/handler.js';
import type { Services } from './services.js';

const petPath = operationPath('getPet');
const locationOf = (id: number): string => petPath.replace('{petId}', String(id));

// With an Idempotency-Key (claimed by src/plugins/idempotency.ts), the pet and the stored
// answer are written in one transaction.
export const createPet: Handler<'createPet', Services> = async ({ body, context }, { store, recentWriters }) => {
  const pet = context.idempotency ? await store.createPetIdempotently(body, context.idempotency, locationOf) : await store.createPet(body);
  if (context.apiKeyId !== undefined) recentWriters.wrote(context.apiKeyId);
  return { status: 201, body: pet, headers: { Location: locationOf(pet.id) } };
};
