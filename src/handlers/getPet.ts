import { errorAnswer } from '../errors/catalogue.js';
import type { Handler } from '../contract/handler.js';
import { petETag } from '../catalogue/pets.js';
import { noneMatch } from '../http/conditional.js';

// Deprecated in the contract: the Deprecation/Sunset/Link headers are added for every
// answer by the deprecation middleware (src/middleware/deprecation.ts), not here. The ETag
// is that of the JSON sent; If-None-Match naming it (or `*`) is 304, without a body.
export const getPet: Handler<'getPet'> = async ({ params, headers, context }, { pets }) => {
  const pet = await pets.get(params.petId, context.readFrom);
  if (!pet) return errorAnswer('not_found', `Pet ${params.petId} does not exist`);
  const etag = petETag(pet.json);
  if (noneMatch(headers['If-None-Match'], etag)) return { status: 304, body: undefined, headers: { ETag: etag } };
  return { status: 200, body: pet, headers: { ETag: etag } };
};
