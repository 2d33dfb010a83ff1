import { errorBody } from '../errors.js';
import type { Handler } from '../contract/handler.js';
import type { Services } from './services.js';

// Deprecated in the contract: the Deprecation/Sunset/Link headers are added for every
// answer by the deprecation hook (src/plugins/contract.ts), not here.
export const getPet: Handler<'getPet', Services> = async ({ params, context }, { store, recentWriters }) => {
  const pet = await store.getPet(params.petId, recentWriters.readFrom(context.apiKeyId));
  if (!pet) return { status: 404, body: errorBody('not_found', 404, `Pet ${params.petId} does not exist`) };
  return { status: 200, body: pet };
};
