import { errorAnswer } from '../errors.js';
import type { Handler } from '../contract/handler.js';
import type { Services } from './services.js';

// Deprecated in the contract: the Deprecation/Sunset/Link headers are added for every
// answer by the deprecation middleware (src/middleware/deprecation.ts), not here.
export const getPet: Handler<'getPet', Services> = async ({ params, context }, { pets }) => {
  const pet = await pets.get(params.petId, context.readFrom);
  if (!pet) return errorAnswer('not_found', `Pet ${params.petId} does not exist`);
  return { status: 200, body: pet };
};
