// Type-level test, checked by `npm run typecheck` (tsc): each `@ts-expect-error` below
// fails the build if the line after it stops being a compile error, i.e. if the handler
// types stop enforcing the contract.
import type { Handler } from '../../src/contract/handler.js';
import { Serialized } from '../../src/db/serialized.js';
import type { Pet } from '../../src/catalogue/pets.js';

const pet = { id: 1, name: 'Rex', categoryId: 2, status: 'available' as const, createdAt: '2026-11-26T10:00:00.000Z', updatedAt: '2026-11-26T10:00:00.000Z' };
const error = { code: 'not_found', message: 'Pet 1 does not exist', status: 404 };
const ETag = '"kY3zBq9TQ0mFv1cXo2aR8w"';

// The well-typed answers compile.
export const found: Handler<'getPet'> = async () => ({ status: 200, body: pet, headers: { ETag } });
export const missing: Handler<'getPet'> = async () => ({ status: 404, body: error });
export const created: Handler<'createPet'> = async () => ({ status: 201, body: pet, headers: { Location: '/v1/pets/1', ETag } });
export const notModified: Handler<'getPet'> = async () => ({ status: 304, body: undefined, headers: { ETag } });
export const removed: Handler<'deletePet'> = async () => ({ status: 204, body: undefined });
export const listed: Handler<'listPets'> = async ({ query }) => ({ status: 200, body: query.status ? [pet] : [] });

// A Pet without `id` is not a getPet answer.
// @ts-expect-error Property 'id' is missing
export const noId: Handler<'getPet'> = async () => ({ status: 200, body: { name: 'Rex', categoryId: 2 } });

// 418 is not a status that getPet declares.
// @ts-expect-error Type '418' is not assignable
export const teapot: Handler<'getPet'> = async () => ({ status: 418, body: error });

// A 404 must carry the Error body, not a Pet.
// @ts-expect-error Property 'code' is missing
export const wrongBody: Handler<'getPet'> = async () => ({ status: 404, body: pet });

// createPet's 201 must set the Location header the contract declares.
// @ts-expect-error Property 'headers' is missing
export const noLocation: Handler<'createPet'> = async () => ({ status: 201, body: pet });

// getPet's 200, and updatePet's, must set the ETag header the contract declares.
// @ts-expect-error Property 'headers' is missing
export const noETag: Handler<'getPet'> = async () => ({ status: 200, body: pet });
// @ts-expect-error Property 'ETag' is missing
export const noUpdatedETag: Handler<'updatePet'> = async () => ({ status: 200, body: pet, headers: {} });

// A 304 has no body.
// @ts-expect-error Type 'Pet' is not assignable to 'undefined'
export const notModifiedWithBody: Handler<'getPet'> = async () => ({ status: 304, body: pet, headers: { ETag } });

// A status outside the enumeration does not fit PetStatus.
// @ts-expect-error Type '"lost"' is not assignable
export const badStatus: Handler<'getPet'> = async () => ({ status: 200, body: { ...pet, status: 'lost' } });

// The handler reads only the inputs the operation declares.
export const wrongParam: Handler<'getPet'> = async ({ params }) => {
  // @ts-expect-error Property 'id' does not exist (the path parameter is petId)
  const id: number = params.id;
  return { status: 200, body: { ...pet, id }, headers: { ETag } };
};

// A body the database wrote as JSON (src/db/serialized.ts) is typed by the body it
// stands for: it answers where that body is declared, and nowhere else.
const petJson = new Serialized<Pet>(JSON.stringify(pet));
export const foundJson: Handler<'getPet'> = async () => ({ status: 200, body: petJson, headers: { ETag } });
export const updatedJson: Handler<'updatePet'> = async () => ({ status: 200, body: petJson, headers: { ETag } });
export const listedJson: Handler<'listPets'> = async () => ({ status: 200, body: new Serialized<Pet[]>(`[${petJson.json}]`) });

// A pet's JSON is not the Error body of a 404.
// @ts-expect-error Type 'Pet' is missing the properties of the Error body
export const errorJson: Handler<'getPet'> = async () => ({ status: 404, body: petJson });

// One pet's JSON is not a page.
// @ts-expect-error Type 'Pet' is not an array
export const pageJson: Handler<'listPets'> = async () => ({ status: 200, body: petJson });
