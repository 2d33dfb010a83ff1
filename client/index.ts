// A typed client for the Animal Store API, built on openapi-fetch with the types that
// openapi-typescript generates from the contract. Every path, parameter, body and answer
// is checked by the compiler against openapi/v1.yaml.
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from '../generated/v1.js';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
export type ApiError = components['schemas']['Error'];
export type { paths };

export interface AnimalStoreClientOptions {
  /** The API's base URL including `/v1`, e.g. `https://api.animal-store.example/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` on every call. */
  apiKey: string;
  /** A fetch implementation (defaults to the global one). */
  fetch?: typeof globalThis.fetch;
}

/** What a deprecated operation announces on every answer (RFC 9745, RFC 8594, RFC 8288). */
export interface DeprecationNotice {
  /** When the operation was deprecated. */
  deprecation: Date | undefined;
  /** When it may be removed. */
  sunset: Date | undefined;
  /** The `Link` header, naming the successor. */
  link: string | undefined;
}

function deprecationNotice(response: Response): DeprecationNotice {
  const deprecation = /^@(\d+)$/.exec(response.headers.get('deprecation') ?? '');
  const sunset = response.headers.get('sunset');
  return {
    deprecation: deprecation ? new Date(Number(deprecation[1]) * 1000) : undefined,
    sunset: sunset ? new Date(sunset) : undefined,
    link: response.headers.get('link') ?? undefined,
  };
}

/** The `cursor` of a `Link: <...>; rel="next"` header, if there is a next page. */
function nextCursor(link: string | null): string | undefined {
  const target = /<([^>]*)>\s*;\s*rel="?next"?/.exec(link ?? '')?.[1];
  return target ? (new URL(target, 'http://relative.invalid').searchParams.get('cursor') ?? undefined) : undefined;
}

export function createAnimalStoreClient(options: AnimalStoreClientOptions) {
  const client: Client<paths> = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/$/, ''),
    headers: { Authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  return {
    /** The underlying openapi-fetch client, for anything the helpers below do not cover. */
    raw: client,

    /** `listPets`: `{ data }` with the pets, or `{ error }` with the Error body. */
    listPets(query: paths['/pets']['get']['parameters']['query'] = {}) {
      return client.GET('/pets', { params: { query } });
    },

    /**
     * Every pet matching `query`, page after page, following `Link: rel="next"`. Each pet
     * comes exactly once, even while others are being added. Throws on an error answer.
     */
    async *listAllPets(query: Omit<NonNullable<paths['/pets']['get']['parameters']['query']>, 'cursor'> = {}): AsyncGenerator<Pet> {
      let cursor: string | undefined;
      do {
        const { data, error, response } = await client.GET('/pets', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } } });
        if (error || !data) throw new Error(`listPets failed: ${error ? `${error.status} ${error.code}: ${error.message}` : 'no body'}`);
        yield* data;
        cursor = nextCursor(response.headers.get('link'));
      } while (cursor);
    },

    /** `createPet`: `{ data }` with the stored Pet (and `response.headers.get('location')`), or `{ error }`. */
    createPet(pet: NewPet) {
      return client.POST('/pets', { body: pet });
    },

    /**
     * `getPet` (deprecated, sunset 2030-12-05; use `listPets`): the result of the call plus
     * the deprecation notice the service sends with every answer.
     */
    async getPet(petId: number) {
      const result = await client.GET('/pets/{petId}', { params: { path: { petId } } });
      return { ...result, deprecation: deprecationNotice(result.response) };
    },

    /** `listOrders` (experimental): answers 501 until it is designed. */
    listOrders() {
      return client.GET('/store/orders');
    },
  };
}

export type AnimalStoreClient = ReturnType<typeof createAnimalStoreClient>;
