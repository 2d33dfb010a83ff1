// @animal-store/client: a typed client for the Animal Store API, built on openapi-fetch with
// the types openapi-typescript generates from the contract (src/generated/, written by the
// repository's `npm run generate`). Every path, parameter, body and answer is checked by the
// compiler against the contract.
//
// Each method is one line over `call(operationId, ...)`, which reads what it needs from the
// generated operation table: method, path, whether the contract gives the operation an
// Idempotency-Key (then one is generated unless the caller passes their own), whether it is
// deprecated (then the result carries the notice). Paginated operations share `paginate`.
// An operation whose answer carries the pet's `ETag` (getPet, createPet, updatePet) resolves
// with it as `etag`; one that takes `If-Match` (updatePet, deletePet) takes it as `ifMatch`.
// createApiKey and rotateApiKey answer a secret once: they take no Idempotency-Key, so they
// are never repeated (src/retry.ts), and a caller's own key header does not change that; so
// do createWebhookEndpoint and rotateWebhookEndpointSecret. The events feed has no last
// page: `listAllEvents` stops at the first empty one and keeps the cursor to resume from.
// `verifyWebhook` (src/webhooks.ts) checks a delivery's signature with `standardwebhooks`.
import createClient, { type Client } from 'openapi-fetch';
import { deprecationNotice, type DeprecationNotice } from './deprecation.js';
import { AnimalStoreConnectionError, AnimalStoreError } from './errors.js';
import { operationTable } from './generated/operations.js';
import type { components, operations, paths } from './generated/v1.js';
import { retryingFetch, type RetryOptions } from './retry.js';
import type { AnswersETag, BodyOf, DataOf, ETagOperationId, IsDeprecated, ItemOf, OperationId, PaginatedOperationId, ParamsOf, PathOf, QueryOf, TakesIdempotencyKey, TakesIfMatch } from './types.js';

export { AnimalStoreConnectionError, AnimalStoreError, UNEXPECTED_RESPONSE, type ApiError, type ErrorDetail } from './errors.js';
export { contractVersion, operationTable } from './generated/operations.js';
export { DEFAULT_RETRY, type RetryEvent, type RetryOptions } from './retry.js';
export type { AnswersETag, BodyOf, DataOf, DeprecationNotice, ETagOperationId, ItemOf, OperationId, PaginatedOperationId, ParamsOf, PathOf, QueryOf, TakesIdempotencyKey, TakesIfMatch };
export type { components, operations, paths };
export { WEBHOOK_EVENT_TYPES, type WebhookEvent, type WebhookEventType, type WebhookPayloads } from './generated/webhooks.js';
export { verifyWebhook, WebhookVerificationError, type WebhookHeaders, type WebhookRefusal } from './webhooks.js';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
export type Order = components['schemas']['Order'];
export type NewOrder = components['schemas']['NewOrder'];
export type OrderStatus = components['schemas']['OrderStatus'];
export type Inventory = components['schemas']['Inventory'];
export type PetPatch = components['schemas']['PetPatch'];
export type Category = components['schemas']['Category'];
export type Scope = components['schemas']['Scope'];
export type NewApiKey = components['schemas']['NewApiKey'];
export type ApiKey = components['schemas']['ApiKey'];
export type ApiKeyWithSecret = components['schemas']['ApiKeyWithSecret'];
export type Event = components['schemas']['Event'];
export type EventType = components['schemas']['EventType'];
export type NewWebhookEndpoint = components['schemas']['NewWebhookEndpoint'];
export type WebhookEndpointPatch = components['schemas']['WebhookEndpointPatch'];
export type WebhookEndpoint = components['schemas']['WebhookEndpoint'];
export type WebhookEndpointWithSecret = components['schemas']['WebhookEndpointWithSecret'];
export type WebhookDelivery = components['schemas']['WebhookDelivery'];

/**
 * A walk over the events feed (`listAllEvents`): iterate it to get every event after its
 * position, up to the first empty page (nothing newer yet). Iterate it again later to get
 * what came since; or keep `cursor` and resume in another process.
 */
export interface EventFeed extends AsyncIterable<Event> {
  /**
   * Where the walk stands: the `cursor` of the `rel="next"` link of the last page whose
   * events were all yielded (undefined until one was, when the walk started without one).
   * Store it with the state those events built, and resume with
   * `listAllEvents({ ...sameQuery, cursor })`: nothing is missed. If you stopped in the middle
   * of a page, the events of that page you already had come again (skip them by `id`).
   */
  readonly cursor: string | undefined;
}

export interface AnimalStoreClientOptions {
  /** The API's base URL including `/v1`, e.g. `https://api.animal-store.example/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` on every call. */
  apiKey: string;
  /** A fetch implementation (defaults to the global one). */
  fetch?: typeof globalThis.fetch;
  /** Retries of 429, 503 and lost answers (see README); `false` turns them off. */
  retry?: RetryOptions | false;
}

/** Per call. */
export interface RequestOptions {
  /** Aborts the call, waits between retries included. */
  signal?: AbortSignal;
  /** More headers, e.g. your own `X-Request-Id`. */
  headers?: Record<string, string>;
}

/** Per call of an operation that takes an Idempotency-Key. */
export interface IdempotentRequestOptions extends RequestOptions {
  /** Your own key (1 to 255 visible ASCII characters), to repeat a call safely across processes. Default: a new UUID per call. */
  idempotencyKey?: string;
}

/** Per call of an operation that takes If-Match (updatePet, deletePet). */
export interface ConditionalRequestOptions extends RequestOptions {
  /**
   * The `etag` of an earlier answer about the pet (createPet, getPet, updatePet), sent as
   * `If-Match`: the change is made only if the pet is still as that answer showed it;
   * otherwise nothing changes and `412 precondition_failed` throws. Without it, the last
   * change wins.
   */
  ifMatch?: string;
}

export type CallOptions<K extends OperationId> = (TakesIdempotencyKey<K> extends true ? IdempotentRequestOptions : RequestOptions) &
  (TakesIfMatch<K> extends true ? ConditionalRequestOptions : unknown);

/** What every method resolves with; an error answer throws AnimalStoreError instead. */
export type Result<K extends OperationId> = {
  /** The answer's body. */
  data: DataOf<K>;
  response: Response;
  /** `X-Request-Id` of the answer. */
  requestId: string | undefined;
} & (TakesIdempotencyKey<K> extends true
  ? {
      /** The key sent (the same on every retry of this call). */
      idempotencyKey: string;
      /** True when this is the stored answer to an earlier request with the same key (nothing was done again). */
      replayed: boolean;
    }
  : unknown) &
  (IsDeprecated<K> extends true ? { deprecation: DeprecationNotice } : unknown) &
  (AnswersETag<K> extends true
    ? {
        /**
         * The pet's entity tag (`ETag`, strong), to send back as `ifMatch`. Undefined only when
         * something on the way removed it (a proxy that compresses answers may drop or weaken
         * strong tags; a weak `W/"..."` one never matches `If-Match`).
         */
        etag: string | undefined;
      }
    : unknown);

interface Params {
  query?: object | undefined;
  path?: object | undefined;
  body?: unknown;
  /** The body's media type, when not `application/json`. */
  contentType?: string;
  /** The media type asked for (`Accept`), for an answer that is not JSON (exportPets). */
  accept?: string;
  /** The body is sent as it is (text, bytes or a stream of them), not as JSON (createPetImport). */
  rawBody?: boolean;
}

/** A body sent as it is: a file's text or bytes, or a stream of them, read as it is sent. */
export type RawBody = string | Uint8Array | Blob | ReadableStream<Uint8Array>;

/** An import's progress: each reading `waitForImport` takes. */
export type PetImport = components['schemas']['PetImport'];

const ENDED_IMPORT: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled']);

/** The media type of a JSON Merge Patch (RFC 7396), updatePet's body. */
export const MERGE_PATCH = 'application/merge-patch+json';

/** The operations whose answer carries the pet's ETag; the compiler holds this list to the contract's (AnswersETag). */
const answersETag: ReadonlySet<string> = new Set(Object.keys({ getPet: true, createPet: true, updatePet: true } satisfies Record<ETagOperationId, true>));

/** What openapi-fetch's `request` is called with here: any operation, so checked by call()'s signature instead. */
type LooseRequest = (
  method: string,
  path: string,
  init: {
    params: { query?: object; path?: object; header?: Record<string, string> };
    body?: unknown;
    bodySerializer?: (body: unknown) => unknown;
    duplex?: 'half';
    signal?: AbortSignal;
    headers?: Record<string, string>;
    parseAs?: 'stream';
  },
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

const newIdempotencyKey = (): string => globalThis.crypto.randomUUID();

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

/**
 * Whether a request is to an operation of the contract that takes an Idempotency-Key (its
 * method, and its path under `basePath`). Only there does a key make a POST repeatable.
 */
function keyedOperations(basePath: string): (request: Request) => boolean {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const keyed = Object.values(operationTable).flatMap((o) =>
    o.idempotencyKey ? [{ method: o.method as string, path: new RegExp(`^${o.path.split(/\{[^}]+\}/).map(escape).join('[^/]+')}$`) }] : [],
  );
  return (request) => {
    const { pathname } = new URL(request.url);
    if (!pathname.startsWith(`${basePath}/`)) return false;
    const path = pathname.slice(basePath.length);
    return keyed.some((o) => o.method === request.method && o.path.test(path));
  };
}

/** The `cursor` of a `Link: <...>; rel="next"` header, if there is a next page. */
function nextCursor(link: string | null): string | undefined {
  const target = /<([^>]*)>\s*;\s*rel="?next"?/.exec(link ?? '')?.[1];
  return target ? (new URL(target, 'http://relative.invalid').searchParams.get('cursor') ?? undefined) : undefined;
}

export function createAnimalStoreClient(options: AnimalStoreClientOptions) {
  const baseUrl = options.baseUrl.replace(/\/$/, '');
  const raw: Client<paths> = createClient<paths>({
    baseUrl,
    headers: { Authorization: `Bearer ${options.apiKey}` },
    // Looked up at each call, not now: a fetch installed later (a test's, a polyfill) is used.
    fetch: retryingFetch(
      (input, init) => (options.fetch ?? globalThis.fetch)(input, init),
      options.retry,
      keyedOperations(new URL(baseUrl, 'http://relative.invalid').pathname.replace(/\/$/, '')),
    ),
  });

  // `raw` calls of an operation that takes an Idempotency-Key get one too, unless they set it.
  const takesKey = new Set(Object.values(operationTable).flatMap((o) => (o.idempotencyKey ? [`${o.method} ${o.path}`] : [])));
  raw.use({
    onRequest({ request, schemaPath }) {
      if (takesKey.has(`${request.method} ${schemaPath}`) && !request.headers.has('idempotency-key')) request.headers.set('Idempotency-Key', newIdempotencyKey());
      return undefined;
    },
  });

  async function call<K extends OperationId>(operation: K, params: Params, callOptions: RequestOptions & { idempotencyKey?: string; ifMatch?: string } = {}): Promise<Result<K>> {
    const { method, path, idempotencyKey: takesIdempotencyKey, deprecated } = operationTable[operation];
    const idempotencyKey = takesIdempotencyKey ? (callOptions.idempotencyKey ?? newIdempotencyKey()) : undefined;
    const header = {
      ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}),
      ...(callOptions.ifMatch !== undefined ? { 'If-Match': callOptions.ifMatch } : {}),
      ...(params.contentType ? { 'Content-Type': params.contentType } : {}),
      ...(params.accept ? { Accept: params.accept } : {}),
    };
    let answer: Awaited<ReturnType<LooseRequest>>;
    try {
      answer = await (raw.request as unknown as LooseRequest)(method, path, {
        params: {
          ...(params.query ? { query: params.query } : {}),
          ...(params.path ? { path: params.path } : {}),
          ...(Object.keys(header).length > 0 ? { header } : {}),
        },
        ...(params.body !== undefined ? { body: params.body } : {}),
        // A raw body goes as it is; a stream of it needs `duplex: 'half'` (fetch's rule in Node).
        ...(params.rawBody ? { bodySerializer: (body: unknown) => body, ...(params.body instanceof ReadableStream ? { duplex: 'half' } : {}) } : {}),
        // A streamed answer's body is handed over unread (openapi-fetch's parseAs); errors are still JSON.
        ...(params.accept ? { parseAs: 'stream' as const } : {}),
        ...(callOptions.signal ? { signal: callOptions.signal } : {}),
        ...(callOptions.headers ? { headers: callOptions.headers } : {}),
      });
    } catch (error) {
      // fetch rejects with a TypeError when no answer came; an abort or a bad body is not that.
      if (error instanceof TypeError && !callOptions.signal?.aborted) throw new AnimalStoreConnectionError(operation, idempotencyKey, error);
      throw error;
    }
    const { response } = answer;
    const deprecation = deprecated ? deprecationNotice(response) : undefined;
    if (!response.ok) throw new AnimalStoreError({ operation, response, body: answer.error, idempotencyKey, deprecation });
    return {
      data: answer.data,
      response,
      requestId: response.headers.get('x-request-id') ?? undefined,
      ...(idempotencyKey ? { idempotencyKey, replayed: response.headers.get('idempotent-replayed') === 'true' } : {}),
      ...(deprecation ? { deprecation } : {}),
      ...(answersETag.has(operation) ? { etag: response.headers.get('etag') ?? undefined } : {}),
    } as Result<K>;
  }

  /**
   * Every item, page after page, following `Link: rel="next"`. Throws AnimalStoreError on an
   * error answer. A page may be empty and still name a next one: a page that read its most
   * rows without a match goes on at once; one whose next is the page just asked (a list in id
   * order stops before items that a transaction still open could precede) is asked again
   * after a pause (50 ms, doubling to 2 s), not at once in a loop.
   */
  async function* paginate<K extends PaginatedOperationId>(
    operation: K,
    query: Omit<QueryOf<K>, 'cursor'> | undefined,
    callOptions?: RequestOptions,
    path?: object,
  ): AsyncGenerator<ItemOf<K>> {
    let cursor: string | undefined;
    let pauseMs = 0;
    do {
      if (pauseMs > 0) await pause(pauseMs, callOptions?.signal);
      const { data, response } = await call(operation, { query: { ...query, ...(cursor ? { cursor } : {}) }, ...(path ? { path } : {}) }, callOptions);
      const items = data as ItemOf<K>[];
      yield* items;
      const asked = cursor;
      cursor = nextCursor(response.headers.get('link'));
      pauseMs = items.length > 0 || cursor !== asked ? 0 : Math.min(2000, Math.max(50, pauseMs * 2));
    } while (cursor);
  }

  /** The events feed from `query.cursor` (or its start) to its first empty page; see EventFeed. */
  function eventFeed(query: QueryOf<'listEvents'> | undefined, callOptions?: RequestOptions): EventFeed {
    const { cursor: start, ...filters } = query ?? {};
    let cursor = start;
    return {
      get cursor() {
        return cursor;
      },
      async *[Symbol.asyncIterator]() {
        for (;;) {
          const { data, response } = await call('listEvents', { query: { ...filters, ...(cursor ? { cursor } : {}) } }, callOptions);
          yield* data;
          // Only now, every event of the page taken: a walk stopped mid-page resumes before it.
          const next = nextCursor(response.headers.get('link'));
          if (next) cursor = next;
          if (data.length === 0 || !next) return;
        }
      },
    };
  }

  return {
    /** The underlying openapi-fetch client (with the same retries and default Idempotency-Keys), for anything the methods do not cover. */
    raw,

    /**
     * Any operation of the contract by its operationId, typed by it: what every method below
     * calls (`store.call('getCategory', { path: { categoryId: 1 } })`). An operation added to
     * the contract is callable this way before it has a method of its own.
     */
    call: <K extends OperationId>(operation: K, params: ParamsOf<K>, callOptions?: CallOptions<K>) => call(operation, params as Params, callOptions),

    /** `listPets`: one page of pets; `response.headers.get('link')` names the next. */
    listPets: (query?: QueryOf<'listPets'>, callOptions?: CallOptions<'listPets'>) => call('listPets', { query }, callOptions),

    /** Every pet matching `query`, each exactly once even while others are added. */
    listAllPets: (query?: Omit<QueryOf<'listPets'>, 'cursor'>, callOptions?: RequestOptions) => paginate('listPets', query, callOptions),

    /** `createPet`: the stored Pet, its `etag`, `response.headers.get('location')`, the `idempotencyKey` sent and whether the answer was `replayed`. */
    createPet: (pet: BodyOf<'createPet'>, callOptions?: CallOptions<'createPet'>) => call('createPet', { body: pet }, callOptions),

    /**
     * `batchCreatePets`: up to 1,000 pets in one request, all stored or none; `{ pets }` in
     * the order given, the `idempotencyKey` sent and whether the answer was `replayed`. A
     * refused batch throws with `details` naming each bad item by index (`/requests/3/name`).
     */
    batchCreatePets: (pets: BodyOf<'batchCreatePets'>['requests'], callOptions?: CallOptions<'batchCreatePets'>) => call('batchCreatePets', { body: { requests: pets } }, callOptions),

    /**
     * `exportPets`: every pet that matches listPets' filters, in id order, from one snapshot;
     * `data` is the answer's body as a ReadableStream, CSV with a header row (the default)
     * or NDJSON (`format`), read as it arrives.
     */
    exportPets: (query?: QueryOf<'exportPets'>, callOptions?: CallOptions<'exportPets'> & { format?: 'text/csv' | 'application/x-ndjson' }) =>
      call('exportPets', { query, accept: callOptions?.format ?? 'text/csv' }, callOptions),

    /**
     * `createPetImport`: submits a file of pets, CSV with a header row (the default `format`)
     * or NDJSON, as an import; resolves with the import, `queued`, once the service has
     * stored the whole body (a 4xx throws: a bad header row, a body over the limit). `file`
     * is the text or bytes, or a stream of them (a large file: read as it is sent). Follow
     * it with `waitForImport`. Never repeated: after a connection error, `listAllPetImports`
     * tells whether it was stored.
     */
    createPetImport: (file: RawBody, options: QueryOf<'createPetImport'> & { format?: 'text/csv' | 'application/x-ndjson' } = {}, callOptions?: CallOptions<'createPetImport'>) => {
      const { format = 'text/csv', ...query } = options;
      return call('createPetImport', { query, body: file, contentType: format, rawBody: true }, callOptions);
    },

    /** `listPetImports`: one page of imports, oldest first; `response.headers.get('link')` names the next. */
    listPetImports: (query?: QueryOf<'listPetImports'>, callOptions?: CallOptions<'listPetImports'>) => call('listPetImports', { query }, callOptions),

    /** Every import, page after page, oldest first. */
    listAllPetImports: (query?: Omit<QueryOf<'listPetImports'>, 'cursor'>, callOptions?: RequestOptions) => paginate('listPetImports', query, callOptions),

    /** `getPetImport`: the import as it stands (its status and counts); an unknown id throws 404. */
    getPetImport: (importId: PathOf<'getPetImport'>['importId'], callOptions?: CallOptions<'getPetImport'>) => call('getPetImport', { path: { importId } }, callOptions),

    /** `cancelPetImport`: a queued or running import stops (pets it added stay); an ended one throws 409 `import_finished`. */
    cancelPetImport: (importId: PathOf<'cancelPetImport'>['importId'], callOptions?: CallOptions<'cancelPetImport'>) => call('cancelPetImport', { path: { importId } }, callOptions),

    /**
     * Reads the import every `intervalMs` (500) until it ends, telling `onProgress` of each
     * reading; resolves with the import as it ended (`succeeded`, `failed` or `cancelled`:
     * an import that failed resolves too, its `message` and `errors` saying why).
     */
    waitForImport: async (importId: number, options: { intervalMs?: number; onProgress?: (petImport: PetImport) => void } & RequestOptions = {}): Promise<PetImport> => {
      const { intervalMs = 500, onProgress, ...callOptions } = options;
      for (;;) {
        const { data } = await call('getPetImport', { path: { importId } }, callOptions);
        onProgress?.(data);
        if (ENDED_IMPORT.has(data.status)) return data;
        await pause(intervalMs, callOptions.signal);
      }
    },

    /** `getPet` (deprecated, sunset 2030-12-05; use `listPets({ id: [petId] })`): the Pet, its `etag` and the `deprecation` notice sent with every answer. */
    getPet: (petId: PathOf<'getPet'>['petId'], callOptions?: CallOptions<'getPet'>) => call('getPet', { path: { petId } }, callOptions),

    /**
     * `updatePet`: a JSON Merge Patch (sent as `application/merge-patch+json`): the fields given
     * replace the stored ones, `status: null` takes the status away, `{}` changes nothing.
     * Resolves with the Pet as it is now and its new `etag`; with `ifMatch`, a pet changed
     * meanwhile throws 412 `precondition_failed`. 409 `pet_reserved` (a status set while an
     * order holds the pet) and 404 throw. Not retried (PATCH is not idempotent by definition).
     */
    updatePet: (petId: PathOf<'updatePet'>['petId'], patch: BodyOf<'updatePet'>, callOptions?: CallOptions<'updatePet'>) => call('updatePet', { path: { petId }, body: patch, contentType: MERGE_PATCH }, callOptions),

    /** `deletePet`: removes the pet (204); its orders stay readable. 409 `pet_reserved`, 412 (with `ifMatch`) and 404 throw. */
    deletePet: (petId: PathOf<'deletePet'>['petId'], callOptions?: CallOptions<'deletePet'>) => call('deletePet', { path: { petId } }, callOptions),

    /** `listCategories`: one page of named categories; `response.headers.get('link')` names the next. */
    listCategories: (query?: QueryOf<'listCategories'>, callOptions?: CallOptions<'listCategories'>) => call('listCategories', { query }, callOptions),

    /** Every named category, page after page. */
    listAllCategories: (query?: Omit<QueryOf<'listCategories'>, 'cursor'>, callOptions?: RequestOptions) => paginate('listCategories', query, callOptions),

    /** `getCategory`: the category's name; an id without a name throws 404 `not_found`. */
    getCategory: (categoryId: PathOf<'getCategory'>['categoryId'], callOptions?: CallOptions<'getCategory'>) => call('getCategory', { path: { categoryId } }, callOptions),

    /** `putCategory`: names the category (`response.status` 201 when it had no name, 200 when renamed); 409 `category_name_taken` throws. */
    putCategory: (categoryId: PathOf<'putCategory'>['categoryId'], name: BodyOf<'putCategory'>['name'], callOptions?: CallOptions<'putCategory'>) => call('putCategory', { path: { categoryId }, body: { name } }, callOptions),

    /** `deleteCategory`: removes the category's name (204); pets keep their `categoryId`. An id without a name throws 404. */
    deleteCategory: (categoryId: PathOf<'deleteCategory'>['categoryId'], callOptions?: CallOptions<'deleteCategory'>) => call('deleteCategory', { path: { categoryId } }, callOptions),

    /** `placeOrder`: the Order (`placed`, the pet now `pending`); 409 `pet_not_available`, 422 `pet_not_found` throw. */
    placeOrder: (order: BodyOf<'placeOrder'>, callOptions?: CallOptions<'placeOrder'>) => call('placeOrder', { body: order }, callOptions),

    /** `listOrders`: one page of the caller's orders; `response.headers.get('link')` names the next. */
    listOrders: (query?: QueryOf<'listOrders'>, callOptions?: CallOptions<'listOrders'>) => call('listOrders', { query }, callOptions),

    /** Every order of the caller matching `query`, each exactly once even while others are placed. */
    listAllOrders: (query?: Omit<QueryOf<'listOrders'>, 'cursor'>, callOptions?: RequestOptions) => paginate('listOrders', query, callOptions),

    /** `getOrder`: one of the caller's orders (another key's is 404, as if it did not exist). */
    getOrder: (orderId: PathOf<'getOrder'>['orderId'], callOptions?: CallOptions<'getOrder'>) => call('getOrder', { path: { orderId } }, callOptions),

    /** `cancelOrder`: `placed` → `cancelled`, the pet `available` again; 409 `order_closed` throws. */
    cancelOrder: (orderId: PathOf<'cancelOrder'>['orderId'], callOptions?: CallOptions<'cancelOrder'>) => call('cancelOrder', { path: { orderId } }, callOptions),

    /** `completeOrder`: `placed` → `completed`, the pet `sold`; 409 `order_closed` throws (also past `expiresAt`). */
    completeOrder: (orderId: PathOf<'completeOrder'>['orderId'], callOptions?: CallOptions<'completeOrder'>) => call('completeOrder', { path: { orderId } }, callOptions),

    /** `getInventory`: how many pets are available, pending, sold, and have no status. */
    getInventory: (callOptions?: CallOptions<'getInventory'>) => call('getInventory', {}, callOptions),

    /**
     * `createApiKey`: a new key holding `scopes` (each one the calling key holds; asking for
     * another throws 403 `insufficient_scope`, its `scope` naming it), optionally ending at
     * `expiresAt`. Resolves with the key and its `secret`, which no later answer shows: store
     * it now. Never repeated (a repeat would mint a second key): after a connection error,
     * look for the key by name in `listAllApiKeys()` before creating it again.
     */
    createApiKey: (key: BodyOf<'createApiKey'>, callOptions?: CallOptions<'createApiKey'>) => call('createApiKey', { body: key }, callOptions),

    /** `listApiKeys`: one page of the deployment's keys (revoked and expired included, never a secret); `response.headers.get('link')` names the next. */
    listApiKeys: (query?: QueryOf<'listApiKeys'>, callOptions?: CallOptions<'listApiKeys'>) => call('listApiKeys', { query }, callOptions),

    /** Every API key of the deployment, page after page, in ascending id. */
    listAllApiKeys: (query?: Omit<QueryOf<'listApiKeys'>, 'cursor'>, callOptions?: RequestOptions) => paginate('listApiKeys', query, callOptions),

    /** `getApiKey`: the key (its scopes, `lastUsedAt`, `revokedAt`, `previousSecretExpiresAt`), never its secret; an unknown id throws 404. */
    getApiKey: (keyId: PathOf<'getApiKey'>['keyId'], callOptions?: CallOptions<'getApiKey'>) => call('getApiKey', { path: { keyId } }, callOptions),

    /**
     * `revokeApiKey`: the key's secrets (the current one and any in a rotation's grace) stop
     * working on every instance within 2 s; resolves with the key and its `revokedAt`.
     * Revoking a revoked key answers it as it is, so a call that failed can be made again.
     */
    revokeApiKey: (keyId: PathOf<'revokeApiKey'>['keyId'], callOptions?: CallOptions<'revokeApiKey'>) => call('revokeApiKey', { path: { keyId } }, callOptions),

    // `Partial`: the generated type makes graceSeconds required, as the contract gives it a default.
    /**
     * `rotateApiKey`: a new secret for the key (same id, scopes and orders), shown in this
     * answer only. The previous secret keeps working for `graceSeconds` (0 to 604800; the
     * service's default, 86400, when not given), until `previousSecretExpiresAt`: deploy the
     * new one meanwhile. A revoked or expired key throws 409 `api_key_inactive`. Never
     * repeated: a repeat would rotate again, and rotating again ends at once the grace of the
     * secret still deployed. After a connection error, `getApiKey` tells (a new `prefix`).
     */
    rotateApiKey: (keyId: PathOf<'rotateApiKey'>['keyId'], rotation?: Partial<BodyOf<'rotateApiKey'>>, callOptions?: CallOptions<'rotateApiKey'>) =>
      call('rotateApiKey', { path: { keyId }, body: rotation }, callOptions),

    /**
     * `listEvents`: one page of the events this key may see, in the order they were written.
     * The feed has no last page: `response.headers.get('link')` always names the next, also
     * when this one is empty (nothing newer yet). An expired cursor throws 410 `cursor_expired`.
     */
    listEvents: (query?: QueryOf<'listEvents'>, callOptions?: CallOptions<'listEvents'>) => call('listEvents', { query }, callOptions),

    /**
     * Every event after `query.cursor` (or from the oldest kept), page after page, to the first
     * empty page: each exactly once, in the order written. The returned feed's `cursor` is
     * where to resume (iterate the same feed again, or pass it to a later `listAllEvents`).
     */
    listAllEvents: (query?: QueryOf<'listEvents'>, callOptions?: RequestOptions) => eventFeed(query, callOptions),

    /** `getEvent`: one event this key may see; another's, or one no longer kept, throws 404. */
    getEvent: (eventId: PathOf<'getEvent'>['eventId'], callOptions?: CallOptions<'getEvent'>) => call('getEvent', { path: { eventId } }, callOptions),

    /**
     * `createWebhookEndpoint`: the endpoint and its signing `secret` (`whsec_…`), which no
     * later answer shows: store it now. A URL that is not https, or whose host is not a public
     * address, throws 400. Never repeated (a repeat would make a second endpoint): after a
     * connection error, look for it in `listAllWebhookEndpoints()` first.
     */
    createWebhookEndpoint: (endpoint: BodyOf<'createWebhookEndpoint'>, callOptions?: CallOptions<'createWebhookEndpoint'>) => call('createWebhookEndpoint', { body: endpoint }, callOptions),

    /** `listWebhookEndpoints`: one page of this key's endpoints, never a secret. */
    listWebhookEndpoints: (query?: QueryOf<'listWebhookEndpoints'>, callOptions?: CallOptions<'listWebhookEndpoints'>) => call('listWebhookEndpoints', { query }, callOptions),

    /** Every webhook endpoint of this key, page after page. */
    listAllWebhookEndpoints: (query?: Omit<QueryOf<'listWebhookEndpoints'>, 'cursor'>, callOptions?: RequestOptions) => paginate('listWebhookEndpoints', query, callOptions),

    /** `getWebhookEndpoint`: the endpoint (`enabled`, `disabledReason`, `previousSecretExpiresAt`), never its secret; another key's throws 404. */
    getWebhookEndpoint: (endpointId: PathOf<'getWebhookEndpoint'>['endpointId'], callOptions?: CallOptions<'getWebhookEndpoint'>) => call('getWebhookEndpoint', { path: { endpointId } }, callOptions),

    /** `updateWebhookEndpoint`: a JSON Merge Patch of `url`, `eventTypes`, `description` (null removes it), `enabled` (`true` enables it again and clears `disabledReason`). */
    updateWebhookEndpoint: (endpointId: PathOf<'updateWebhookEndpoint'>['endpointId'], patch: BodyOf<'updateWebhookEndpoint'>, callOptions?: CallOptions<'updateWebhookEndpoint'>) =>
      call('updateWebhookEndpoint', { path: { endpointId }, body: patch, contentType: MERGE_PATCH }, callOptions),

    /** `deleteWebhookEndpoint`: removes the endpoint and its delivery log (204). */
    deleteWebhookEndpoint: (endpointId: PathOf<'deleteWebhookEndpoint'>['endpointId'], callOptions?: CallOptions<'deleteWebhookEndpoint'>) => call('deleteWebhookEndpoint', { path: { endpointId } }, callOptions),

    /**
     * `rotateWebhookEndpointSecret`: a new secret, shown in this answer only; for 24 h every
     * delivery is signed with both (verify with either). Never repeated: a repeat would rotate
     * again and end the previous secret at once.
     */
    rotateWebhookEndpointSecret: (endpointId: PathOf<'rotateWebhookEndpointSecret'>['endpointId'], callOptions?: CallOptions<'rotateWebhookEndpointSecret'>) =>
      call('rotateWebhookEndpointSecret', { path: { endpointId } }, callOptions),

    /** `listWebhookDeliveries`: one page of the endpoint's delivery attempts (event, attempt, status code or error, duration, time). */
    listWebhookDeliveries: (endpointId: PathOf<'listWebhookDeliveries'>['endpointId'], query?: QueryOf<'listWebhookDeliveries'>, callOptions?: CallOptions<'listWebhookDeliveries'>) =>
      call('listWebhookDeliveries', { path: { endpointId }, query }, callOptions),

    /** Every delivery attempt of the endpoint, page after page, in the order made. */
    listAllWebhookDeliveries: (endpointId: PathOf<'listWebhookDeliveries'>['endpointId'], query?: Omit<QueryOf<'listWebhookDeliveries'>, 'cursor'>, callOptions?: RequestOptions) =>
      paginate('listWebhookDeliveries', query, callOptions, { endpointId }),
  };
}

export type AnimalStoreClient = ReturnType<typeof createAnimalStoreClient>;
