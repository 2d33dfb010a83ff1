// The client's retry policy and typed errors on answers the service does not give (an
// HTTP-date Retry-After, an hour's Retry-After, a proxy's HTML page, a 503 forever, a
// network that never answers): the client is given a fetch that answers with the test's
// Responses, through its public `fetch` option. What the real service answers is covered by
// test/e2e/client-retries.test.ts and test/e2e/client-package.test.ts.
import { describe, expect, it } from 'vitest';
import { AnimalStoreConnectionError, AnimalStoreError, createAnimalStoreClient, DEFAULT_RETRY, type RetryEvent, type RetryOptions } from '../../client/src/index.js';

type Answer = Response | Error | (() => Response);

/** A client whose fetch gives `answers` in turn (the last one again once they run out), recording each request. */
function clientAnswering(answers: Answer[], retry?: RetryOptions | false) {
  const requests: Request[] = [];
  const events: RetryEvent[] = [];
  const store = createAnimalStoreClient({
    baseUrl: 'http://127.0.0.1:9/v1',
    apiKey: 'ask_test',
    retry: retry === false ? false : { ...retry, onRetry: (event) => events.push(event) },
    fetch: async (input, init) => {
      requests.push(new Request(input, init));
      const answer = answers[Math.min(requests.length, answers.length) - 1] as Answer;
      if (answer instanceof Error) throw answer;
      return typeof answer === 'function' ? answer() : answer.clone();
    },
  });
  return { store, requests, events };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'x-request-id': `req-${status}`, ...headers } });
const errorBody = (status: number, code: string, headers: Record<string, string> = {}) => json(status, { code, message: `a ${code}`, status }, headers);
const pets = () => json(200, [{ id: 1, name: 'Rex', categoryId: 2 }]);
const rejection = async (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => expect.fail('resolved'),
    (error: unknown) => error,
  );

describe('retry policy', () => {
  it('defaults: 3 attempts, at most 30 s a wait, 500 ms backoff', () => {
    expect(DEFAULT_RETRY).toEqual({ maxAttempts: 3, maxDelayMs: 30_000, baseDelayMs: 500 });
  });

  it('honours a Retry-After given as an HTTP-date', async () => {
    const when = new Date(Date.now() + 3000).toUTCString();
    const { store, requests, events } = clientAnswering([errorBody(503, 'unavailable', { 'retry-after': when }), pets()]);
    expect((await store.listPets()).data).toHaveLength(1);
    expect(requests).toHaveLength(2);
    // The date has whole seconds: between 2 and 3 s from when it was made, less the time since.
    expect(events[0]?.delayMs).toBeGreaterThan(1000);
    expect(events[0]?.delayMs).toBeLessThanOrEqual(3000);
  });

  it('does not wait out a Retry-After over maxDelayMs: the error says how long was asked', async () => {
    const { store, requests, events } = clientAnswering([errorBody(429, 'rate_limited', { 'retry-after': '3600' }), pets()]);
    const error = await rejection(store.listPets());
    expect(error).toBeInstanceOf(AnimalStoreError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 3600, requestId: 'req-429', operation: 'listPets' });
    expect(requests).toHaveLength(1);
    expect(events).toEqual([]);
  });

  it('makes at most maxAttempts attempts, then throws the last answer', async () => {
    const { store, requests, events } = clientAnswering([errorBody(503, 'unavailable', { 'retry-after': '0' })], { maxAttempts: 4 });
    expect(await rejection(store.listPets())).toMatchObject({ status: 503, code: 'unavailable', retryAfter: 0 });
    expect(requests).toHaveLength(4);
    expect(events.map((e) => [e.attempt, e.status, e.delayMs])).toEqual([
      [1, 503, 0],
      [2, 503, 0],
      [3, 503, 0],
    ]);
  });

  it('retry: false makes one attempt', async () => {
    const { store, requests } = clientAnswering([errorBody(429, 'rate_limited', { 'retry-after': '0' }), pets()], false);
    expect(await rejection(store.listPets())).toMatchObject({ status: 429 });
    expect(requests).toHaveLength(1);
  });

  it('never repeats a POST without an Idempotency-Key', async () => {
    const { store, requests } = clientAnswering([errorBody(503, 'unavailable', { 'retry-after': '0' }), json(201, {})]);
    // A path the contract does not have, through raw (the contract's own POSTs without a key are below).
    const post = store.raw.POST as unknown as (path: string, init: object) => Promise<{ response: Response }>;
    expect((await post('/store/orders/1/refund', {})).response.status).toBe(503);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.headers.has('idempotency-key')).toBe(false);
  });

  it('gives raw calls of an operation that takes a key a key of their own, and repeats them with it', async () => {
    const { store, requests } = clientAnswering([errorBody(503, 'unavailable', { 'retry-after': '0' }), json(201, { id: 1, name: 'Rex', categoryId: 1 })]);
    expect((await store.raw.POST('/pets', { body: { name: 'Rex', categoryId: 1 } })).response.status).toBe(201);
    expect(requests).toHaveLength(2);
    const keys = requests.map((r) => r.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(await requests[1]?.text()).toBe('{"name":"Rex","categoryId":1}');
  });

  // createApiKey and rotateApiKey answer a secret once and take no Idempotency-Key: a repeat
  // would mint a second key, or rotate again (ending at once the grace of the secret still
  // deployed). revokeApiKey is a POST without a key too.
  const secretAnswer = () => json(201, { id: 2, name: 'storefront', prefix: 'ask_x7Lm', scopes: ['pets:read'], createdAt: '2026-11-26T10:00:00.000Z', secret: `ask_x7Lm${'Q'.repeat(39)}` });
  const lost = () => new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
  type Store = ReturnType<typeof createAnimalStoreClient>;
  const secretCalls = [
    ['createApiKey', (store: Store) => store.createApiKey({ name: 'storefront', scopes: ['pets:read'] })],
    ['rotateApiKey', (store: Store) => store.rotateApiKey(2, { graceSeconds: 3600 })],
    ['revokeApiKey', (store: Store) => store.revokeApiKey(2)],
  ] as const;

  it.each(secretCalls)('never repeats %s after a 503, a 429 or a 409 with Retry-After: 0', async (operation, call) => {
    for (const answer of [errorBody(503, 'unavailable', { 'retry-after': '0' }), errorBody(429, 'rate_limited', { 'retry-after': '0' }), errorBody(409, 'idempotency_in_flight', { 'retry-after': '0' })]) {
      const { store, requests, events } = clientAnswering([answer, secretAnswer()]);
      expect(await rejection(call(store))).toMatchObject({ status: answer.status, operation, idempotencyKey: undefined });
      expect(requests).toHaveLength(1);
      expect(requests[0]?.headers.has('idempotency-key')).toBe(false);
      expect(events).toEqual([]);
    }
  });

  it.each(secretCalls)('never repeats %s after a lost answer: AnimalStoreConnectionError, without a key to repeat it with', async (operation, call) => {
    const failure = lost();
    const { store, requests } = clientAnswering([failure, secretAnswer()], { baseDelayMs: 1 });
    const error = await rejection(call(store));
    expect(error).toBeInstanceOf(AnimalStoreConnectionError);
    expect(error).toMatchObject({ operation, idempotencyKey: undefined, cause: failure });
    expect(requests).toHaveLength(1);
  });

  it('an Idempotency-Key the caller adds to createApiKey or rotateApiKey does not make them repeatable (the contract gives them none)', async () => {
    for (const call of [
      (store: Store) => store.createApiKey({ name: 'storefront', scopes: ['pets:read'] }, { headers: { 'Idempotency-Key': 'mine' } }),
      (store: Store) => store.rotateApiKey(2, {}, { headers: { 'Idempotency-Key': 'mine' } }),
    ]) {
      const { store, requests } = clientAnswering([errorBody(503, 'unavailable', { 'retry-after': '0' }), secretAnswer()], { baseDelayMs: 1 });
      expect(await rejection(call(store))).toMatchObject({ status: 503 });
      expect(requests).toHaveLength(1);
      expect(requests[0]?.headers.get('idempotency-key')).toBe('mine');
    }
    // raw alike; and the same for a lost answer.
    const { store, requests } = clientAnswering([lost(), secretAnswer()], { baseDelayMs: 1 });
    const post = store.raw.POST as unknown as (path: string, init: object) => Promise<{ response: Response }>;
    expect(await rejection(post('/api-keys', { body: { name: 'storefront', scopes: ['pets:read'] }, headers: { 'Idempotency-Key': 'mine' } }))).toBeInstanceOf(TypeError);
    expect(requests).toHaveLength(1);
  });

  it('repeats the reads of API keys (GET) after a 503', async () => {
    const key = { id: 2, name: 'storefront', prefix: 'ask_x7Lm', scopes: ['pets:read'], createdAt: '2026-11-26T10:00:00.000Z' };
    const { store, requests } = clientAnswering([errorBody(503, 'unavailable', { 'retry-after': '0' }), json(200, key), errorBody(503, 'unavailable', { 'retry-after': '0' }), json(200, [key])]);
    expect((await store.getApiKey(2)).data).toEqual(key);
    expect((await store.listApiKeys()).data).toEqual([key]);
    expect(requests.map((r) => `${r.method} ${new URL(r.url).pathname}`)).toEqual(['GET /v1/api-keys/2', 'GET /v1/api-keys/2', 'GET /v1/api-keys', 'GET /v1/api-keys']);
  });

  it('still repeats, with their key, the keyed operations under any base URL (no path, a trailing slash)', async () => {
    for (const baseUrl of ['http://127.0.0.1:9', 'http://127.0.0.1:9/v1/', 'http://127.0.0.1:9/api/v1']) {
      const requests: Request[] = [];
      const answers = [errorBody(503, 'unavailable', { 'retry-after': '0' }), json(201, { id: 1, petId: 1, status: 'placed' })];
      const store = createAnimalStoreClient({
        baseUrl,
        apiKey: 'ask_test',
        fetch: async (input, init) => {
          requests.push(new Request(input, init));
          return (answers[requests.length - 1] ?? answers[1] as Response).clone();
        },
      });
      expect((await store.placeOrder({ petId: 1 })).response.status, baseUrl).toBe(201);
      expect(requests.map((r) => new URL(r.url).pathname), baseUrl).toEqual([`${new URL(baseUrl).pathname.replace(/\/$/, '')}/store/orders`, `${new URL(baseUrl).pathname.replace(/\/$/, '')}/store/orders`]);
      expect(new Set(requests.map((r) => r.headers.get('idempotency-key'))).size).toBe(1);
    }
  });

  it.each([
    ['500', errorBody(500, 'internal')],
    ['400', errorBody(400, 'bad_request')],
    ['409 other than idempotency_in_flight', errorBody(409, 'conflict', { 'retry-after': '0' })],
    ['422', errorBody(422, 'idempotency_key_reused')],
  ])('does not retry %s', async (_title, answer) => {
    const { store, requests } = clientAnswering([answer, json(201, { id: 1, name: 'Rex', categoryId: 1 })]);
    expect(await rejection(store.createPet({ name: 'Rex', categoryId: 1 }))).toMatchObject({ status: answer.status });
    expect(requests).toHaveLength(1);
  });

  it('retries a network failure with backoff and the same key, then throws AnimalStoreConnectionError with that key', async () => {
    const failure = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    const { store, requests, events } = clientAnswering([failure], { baseDelayMs: 8, maxAttempts: 3 });
    const error = await rejection(store.createPet({ name: 'Rex', categoryId: 1 }));
    expect(error).toBeInstanceOf(AnimalStoreConnectionError);
    const keys = new Set(requests.map((r) => r.headers.get('idempotency-key')));
    expect(keys.size).toBe(1);
    expect(error).toMatchObject({ operation: 'createPet', idempotencyKey: [...keys][0], cause: failure });
    expect(requests).toHaveLength(3);
    // Backoff: the n-th wait is between half and all of 8 * 2^(n-1) ms.
    expect(events.map((e) => e.delayMs)).toEqual([expect.any(Number), expect.any(Number)]);
    expect(events[0]?.delayMs).toBeGreaterThanOrEqual(4);
    expect(events[0]?.delayMs).toBeLessThanOrEqual(8);
    expect(events[1]?.delayMs).toBeGreaterThanOrEqual(8);
    expect(events[1]?.delayMs).toBeLessThanOrEqual(16);
  });

  it('an abort during a wait ends the call at once, with the abort', async () => {
    const controller = new AbortController();
    const { store, requests } = clientAnswering([errorBody(503, 'unavailable', { 'retry-after': '20' }), pets()]);
    const call = store.listPets({}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(await rejection(call)).toMatchObject({ name: 'AbortError' });
    expect(requests).toHaveLength(1);
  });

  it('refuses options it cannot follow', () => {
    for (const retry of [{ maxAttempts: 0 }, { maxAttempts: 1.5 }, { maxDelayMs: -1 }, { baseDelayMs: Number.NaN }]) {
      expect(() => createAnimalStoreClient({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'k', retry })).toThrow(RangeError);
    }
  });
});

describe('typed errors', () => {
  it("an answer without the contract's Error body is an AnimalStoreError unexpected_response", async () => {
    const html = () => new Response('<html>Bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } });
    const { store } = clientAnswering([html]);
    const error = await rejection(store.getPet(1));
    expect(error).toBeInstanceOf(AnimalStoreError);
    expect(error).toMatchObject({ status: 502, code: 'unexpected_response', requestId: undefined, body: { code: 'unexpected_response', status: 502 } });
    expect((error as AnimalStoreError).message).toBe('getPet: 502 unexpected_response: HTTP 502 without the API\'s Error body: <html>Bad gateway</html>');
  });
});
