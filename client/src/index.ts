// @animal-store/client: a typed client for the Animal Store API, built on openapi-fetch with
// the types openapi-typescript generates from the contract (src/generated/, written by the
// repository's `npm run generate`). Every path, parameter, body and answer is checked by the
// compiler against the contract.
//
// Each method is one line over `call(operationId, ...)`, which reads what it needs from the
// generated operation table: method, path, whether the contract gives the operation an
// Idempotency-Key (then one is generated unless the caller passes their own), whether it is
// deprecated (then the result carries the notice). Paginated operations share `paginate`.
import createClient, { type Client } from 'openapi-fetch';
import { deprecationNotice, type DeprecationNotice } from './deprecation.js';
import { AnimalStoreConnectionError, AnimalStoreError } from './errors.js';
import { operationTable } from './generated/operations.js';
import type { components, operations, paths } from './generated/v1.js';
import { retryingFetch, type RetryOptions } from './retry.js';
import type { BodyOf, DataOf, IsDeprecated, ItemOf, OperationId, PaginatedOperationId, PathOf, QueryOf, TakesIdempotencyKey } from './types.js';

export { AnimalStoreConnectionError, AnimalStoreError, UNEXPECTED_RESPONSE, type ApiError, type ErrorDetail } from './errors.js';
export { contractVersion, operationTable } from './generated/operations.js';
export { DEFAULT_RETRY, type RetryEvent, type RetryOptions } from './retry.js';
export type { BodyOf, DataOf, DeprecationNotice, ItemOf, OperationId, PaginatedOperationId, PathOf, QueryOf, TakesIdempotencyKey };
export type { components, operations, paths };

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
export type Order = components['schemas']['Order'];
export type NewOrder = components['schemas']['NewOrder'];
export type OrderStatus = components['schemas']['OrderStatus'];
export type Inventory = components['schemas']['Inventory'];

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

export type CallOptions<K extends OperationId> = TakesIdempotencyKey<K> extends true ? IdempotentRequestOptions : RequestOptions;

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
  (IsDeprecated<K> extends true ? { deprecation: DeprecationNotice } : unknown);

interface Params {
  query?: object | undefined;
  path?: object | undefined;
  body?: unknown;
}

/** What openapi-fetch's `request` is called with here: any operation, so checked by call()'s signature instead. */
type LooseRequest = (
  method: string,
  path: string,
  init: { params: { query?: object; path?: object; header?: Record<string, string> }; body?: unknown; signal?: AbortSignal; headers?: Record<string, string> },
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

/** The `cursor` of a `Link: <...>; rel="next"` header, if there is a next page. */
function nextCursor(link: string | null): string | undefined {
  const target = /<([^>]*)>\s*;\s*rel="?next"?/.exec(link ?? '')?.[1];
  return target ? (new URL(target, 'http://relative.invalid').searchParams.get('cursor') ?? undefined) : undefined;
}

export function createAnimalStoreClient(options: AnimalStoreClientOptions) {
  const raw: Client<paths> = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/$/, ''),
    headers: { Authorization: `Bearer ${options.apiKey}` },
    // Looked up at each call, not now: a fetch installed later (a test's, a polyfill) is used.
    fetch: retryingFetch((input, init) => (options.fetch ?? globalThis.fetch)(input, init), options.retry),
  });

  // `raw` calls of an operation that takes an Idempotency-Key get one too, unless they set it.
  const takesKey = new Set(Object.values(operationTable).flatMap((o) => (o.idempotencyKey ? [`${o.method} ${o.path}`] : [])));
  raw.use({
    onRequest({ request, schemaPath }) {
      if (takesKey.has(`${request.method} ${schemaPath}`) && !request.headers.has('idempotency-key')) request.headers.set('Idempotency-Key', newIdempotencyKey());
      return undefined;
    },
  });

  async function call<K extends OperationId>(operation: K, params: Params, callOptions: RequestOptions & { idempotencyKey?: string } = {}): Promise<Result<K>> {
    const { method, path, idempotencyKey: takesIdempotencyKey, deprecated } = operationTable[operation];
    const idempotencyKey = takesIdempotencyKey ? (callOptions.idempotencyKey ?? newIdempotencyKey()) : undefined;
    let answer: Awaited<ReturnType<LooseRequest>>;
    try {
      answer = await (raw.request as unknown as LooseRequest)(method, path, {
        params: {
          ...(params.query ? { query: params.query } : {}),
          ...(params.path ? { path: params.path } : {}),
          ...(idempotencyKey ? { header: { 'Idempotency-Key': idempotencyKey } } : {}),
        },
        ...(params.body !== undefined ? { body: params.body } : {}),
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
    } as Result<K>;
  }

  /**
   * Every item, page after page, following `Link: rel="next"`. Throws AnimalStoreError on an
   * error answer. A page may be empty and still name a next one: listOrders stops before
   * orders that a transaction still open could precede. Then the next page is asked after a
   * pause (50 ms, doubling to 2 s), not at once in a loop.
   */
  async function* paginate<K extends PaginatedOperationId>(operation: K, query: Omit<QueryOf<K>, 'cursor'> | undefined, callOptions?: RequestOptions): AsyncGenerator<ItemOf<K>> {
    let cursor: string | undefined;
    let pauseMs = 0;
    do {
      if (pauseMs > 0) await pause(pauseMs, callOptions?.signal);
      const { data, response } = await call(operation, { query: { ...query, ...(cursor ? { cursor } : {}) } }, callOptions);
      const items = data as ItemOf<K>[];
      yield* items;
      cursor = nextCursor(response.headers.get('link'));
      pauseMs = items.length > 0 ? 0 : Math.min(2000, Math.max(50, pauseMs * 2));
    } while (cursor);
  }

  return {
    /** The underlying openapi-fetch client (with the same retries and default Idempotency-Keys), for anything the methods do not cover. */
    raw,

    /** `listPets`: one page of pets; `response.headers.get('link')` names the next. */
    listPets: (query?: QueryOf<'listPets'>, callOptions?: CallOptions<'listPets'>) => call('listPets', { query }, callOptions),

    /** Every pet matching `query`, each exactly once even while others are added. */
    listAllPets: (query?: Omit<QueryOf<'listPets'>, 'cursor'>, callOptions?: RequestOptions) => paginate('listPets', query, callOptions),

    /** `createPet`: the stored Pet, `response.headers.get('location')`, the `idempotencyKey` sent and whether the answer was `replayed`. */
    createPet: (pet: BodyOf<'createPet'>, callOptions?: CallOptions<'createPet'>) => call('createPet', { body: pet }, callOptions),

    /** `getPet` (deprecated, sunset 2030-12-05; use `listPets({ id: [petId] })`): the Pet and the `deprecation` notice sent with every answer. */
    getPet: (petId: PathOf<'getPet'>['petId'], callOptions?: CallOptions<'getPet'>) => call('getPet', { path: { petId } }, callOptions),

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
  };
}

export type AnimalStoreClient = ReturnType<typeof createAnimalStoreClient>;
