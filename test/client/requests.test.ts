// What the typed client sends for the operations of contract 1.3.0 and what it reads from
// their answers: updatePet's JSON Merge Patch (its media type, `null` kept), `If-Match`,
// the `etag` of getPet, createPet and updatePet, the categories and their pages, the API
// keys (a secret shown once, rotation, revocation, their pages), the scope a 403 names, and
// which of these calls are repeated after a 503. The client is given a fetch that records each
// request and answers as the contract says the service does, through its public `fetch`
// option (as test/client/retry-policy.test.ts). What the real service answers is covered by
// test/e2e/client.test.ts and test/e2e/client-package.test.ts.
import { describe, expect, it } from 'vitest';
import { AnimalStoreError, createAnimalStoreClient, MERGE_PATCH } from '../../client/src/index.js';

type Answer = Response | ((request: Request) => Response);

/** A client whose fetch gives `answers` in turn (the last one again once they run out), recording each request. */
function clientAnswering(answers: Answer[]) {
  const requests: Request[] = [];
  const store = createAnimalStoreClient({
    baseUrl: 'http://127.0.0.1:9/v1',
    apiKey: 'ask_test',
    retry: { baseDelayMs: 1 },
    fetch: async (input, init) => {
      const request = new Request(input, init);
      requests.push(request.clone());
      const answer = answers[Math.min(requests.length, answers.length) - 1] as Answer;
      return typeof answer === 'function' ? answer(request) : answer.clone();
    },
  });
  return { store, requests };
}

const ETAG = '"kY3zBq9TQ0mFv1cXo2aR8w"';
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'x-request-id': `req-${status}`, ...headers } });
const errorBody = (status: number, code: string, headers: Record<string, string> = {}) => json(status, { code, message: `a ${code}`, status }, headers);
const noContent = () => new Response(null, { status: 204, headers: { 'x-request-id': 'req-204' } });
const rex = { id: 1, name: 'Rex', categoryId: 2 };
const rejection = async (promise: Promise<unknown>): Promise<AnimalStoreError> =>
  promise.then(
    () => expect.fail('resolved'),
    (error: unknown) => {
      expect(error).toBeInstanceOf(AnimalStoreError);
      return error as AnimalStoreError;
    },
  );

describe('updatePet', () => {
  it('sends PATCH /pets/{petId} with the patch as application/merge-patch+json, null kept, and resolves with the pet and its new ETag', async () => {
    const { store, requests } = clientAnswering([json(200, rex, { etag: ETAG })]);
    const updated = await store.updatePet(1, { name: 'Rex', status: null });
    expect(updated.data).toEqual(rex);
    expect(updated.etag).toBe(ETAG);
    expect(updated.requestId).toBe('req-200');
    const [request] = requests;
    expect(request?.method).toBe('PATCH');
    expect(request?.url).toBe('http://127.0.0.1:9/v1/pets/1');
    expect(request?.headers.get('content-type')).toBe(MERGE_PATCH);
    expect(MERGE_PATCH).toBe('application/merge-patch+json');
    expect(await request?.text()).toBe('{"name":"Rex","status":null}');
    // No condition unless asked, and no Idempotency-Key (the operation takes none).
    expect(request?.headers.has('if-match')).toBe(false);
    expect(request?.headers.has('idempotency-key')).toBe(false);
    expect(request?.headers.get('authorization')).toBe('Bearer ask_test');
  });

  it('sends ifMatch as If-Match, as given', async () => {
    const { store, requests } = clientAnswering([json(200, rex, { etag: '"next"' })]);
    expect((await store.updatePet(1, {}, { ifMatch: ETAG })).etag).toBe('"next"');
    expect(requests[0]?.headers.get('if-match')).toBe(ETAG);
    expect(await requests[0]?.text()).toBe('{}');
  });

  it.each([
    ['412 precondition_failed', 412, 'precondition_failed'],
    ['409 pet_reserved', 409, 'pet_reserved'],
    ['404 not_found', 404, 'not_found'],
    ['415 unsupported_media_type', 415, 'unsupported_media_type'],
  ])('throws %s as an AnimalStoreError, without retrying', async (_title, status, code) => {
    const { store, requests } = clientAnswering([errorBody(status, code), json(200, rex, { etag: ETAG })]);
    expect(await rejection(store.updatePet(1, { status: 'available' }, { ifMatch: ETAG }))).toMatchObject({ status, code, operation: 'updatePet', idempotencyKey: undefined });
    expect(requests).toHaveLength(1);
  });

  it('is not repeated after a 503 (PATCH is not an idempotent method)', async () => {
    const { store, requests } = clientAnswering([errorBody(503, 'unavailable', { 'retry-after': '0' }), json(200, rex, { etag: ETAG })]);
    expect(await rejection(store.updatePet(1, { name: 'Rex' }))).toMatchObject({ status: 503, code: 'unavailable' });
    expect(requests).toHaveLength(1);
  });

  it('resolves with etag undefined when something on the way removed the header', async () => {
    const { store } = clientAnswering([json(200, rex)]);
    const updated = await store.updatePet(1, {});
    expect(updated).toHaveProperty('etag', undefined);
  });
});

describe('the ETag of getPet and createPet', () => {
  it('getPet resolves with the ETag of its answer, beside the deprecation notice', async () => {
    const { store } = clientAnswering([json(200, rex, { etag: ETAG, sunset: 'Thu, 05 Dec 2030 00:00:00 GMT' })]);
    const fetched = await store.getPet(1);
    expect(fetched.etag).toBe(ETAG);
    expect(fetched.deprecation.sunset?.toISOString()).toBe('2030-12-05T00:00:00.000Z');
  });

  it('createPet resolves with the ETag of its 201, beside its Idempotency-Key', async () => {
    const { store } = clientAnswering([json(201, rex, { etag: ETAG, location: '/v1/pets/1' })]);
    const created = await store.createPet({ name: 'Rex', categoryId: 2 });
    expect(created.etag).toBe(ETAG);
    expect(created.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('operations whose answer has no ETag have no etag', async () => {
    const { store } = clientAnswering([json(200, [rex], { etag: '"a list"' })]);
    expect(await store.listPets({ categoryId: 2 })).not.toHaveProperty('etag');
  });
});

describe('deletePet', () => {
  it('sends DELETE /pets/{petId}, with If-Match when given, and resolves on 204 without data', async () => {
    const { store, requests } = clientAnswering([noContent()]);
    const removed = await store.deletePet(7, { ifMatch: ETAG });
    expect(removed.response.status).toBe(204);
    expect(removed.data).toBeUndefined();
    expect(requests[0]?.method).toBe('DELETE');
    expect(requests[0]?.url).toBe('http://127.0.0.1:9/v1/pets/7');
    expect(requests[0]?.headers.get('if-match')).toBe(ETAG);
    expect(requests[0]?.headers.has('content-type')).toBe(false);
  });

  it('is repeated after a 503 (DELETE is idempotent): a pet the first attempt removed then answers 404', async () => {
    const { store, requests } = clientAnswering([errorBody(503, 'unavailable', { 'retry-after': '0' }), errorBody(404, 'not_found')]);
    expect(await rejection(store.deletePet(7))).toMatchObject({ status: 404, code: 'not_found', operation: 'deletePet' });
    expect(requests).toHaveLength(2);
  });

  it('throws 409 pet_reserved', async () => {
    const { store } = clientAnswering([errorBody(409, 'pet_reserved')]);
    expect(await rejection(store.deletePet(7))).toMatchObject({ status: 409, code: 'pet_reserved' });
  });
});

describe('categories', () => {
  it('putCategory sends PUT /categories/{categoryId} with {"name"}; 201 and 200 both resolve', async () => {
    const dogs = { id: 2, name: 'Dogs' };
    const { store, requests } = clientAnswering([json(201, dogs, { location: '/v1/categories/2' }), json(200, dogs)]);
    const named = await store.putCategory(2, 'Dogs');
    expect(named.response.status).toBe(201);
    expect(named.data).toEqual(dogs);
    expect((await store.putCategory(2, 'Dogs')).response.status).toBe(200);
    expect(requests.map((r) => `${r.method} ${r.url} ${r.headers.get('content-type')}`)).toEqual([
      'PUT http://127.0.0.1:9/v1/categories/2 application/json',
      'PUT http://127.0.0.1:9/v1/categories/2 application/json',
    ]);
    expect(await requests[0]?.text()).toBe('{"name":"Dogs"}');
  });

  it('putCategory is repeated after a 503 (PUT is idempotent); 409 category_name_taken throws', async () => {
    const { store, requests } = clientAnswering([errorBody(503, 'unavailable', { 'retry-after': '0' }), errorBody(409, 'category_name_taken')]);
    expect(await rejection(store.putCategory(3, 'dogs'))).toMatchObject({ status: 409, code: 'category_name_taken', operation: 'putCategory' });
    expect(requests).toHaveLength(2);
  });

  it('getCategory and deleteCategory name the category in the path; an id without a name throws 404', async () => {
    const { store, requests } = clientAnswering([json(200, { id: 5, name: 'Cats' }), noContent(), errorBody(404, 'not_found')]);
    expect((await store.getCategory(5)).data).toEqual({ id: 5, name: 'Cats' });
    expect((await store.deleteCategory(5)).response.status).toBe(204);
    expect(await rejection(store.getCategory(5))).toMatchObject({ status: 404, code: 'not_found', operation: 'getCategory' });
    expect(requests.map((r) => `${r.method} ${new URL(r.url).pathname}`)).toEqual(['GET /v1/categories/5', 'DELETE /v1/categories/5', 'GET /v1/categories/5']);
  });

  it('listAllCategories follows Link: rel="next" with its cursor until there is none', async () => {
    const page = (request: Request): Response => {
      const cursor = new URL(request.url).searchParams.get('cursor');
      if (cursor === null) return json(200, [{ id: 1, name: 'Birds' }, { id: 2, name: 'Dogs' }], { link: '</v1/categories?limit=2&cursor=c2.sig>; rel="next"' });
      if (cursor === 'c2.sig') return json(200, [{ id: 3, name: 'Cats' }], {});
      return errorBody(400, 'bad_request');
    };
    const { store, requests } = clientAnswering([page]);
    const names: string[] = [];
    for await (const category of store.listAllCategories({ limit: 2 })) names.push(category.name);
    expect(names).toEqual(['Birds', 'Dogs', 'Cats']);
    expect(requests.map((r) => `${new URL(r.url).pathname}${new URL(r.url).search}`)).toEqual(['/v1/categories?limit=2', '/v1/categories?limit=2&cursor=c2.sig']);
  });

  it('listPets sends the categoryId filter', async () => {
    const { store, requests } = clientAnswering([json(200, [rex])]);
    expect((await store.listPets({ categoryId: 2, limit: 5 })).data).toEqual([rex]);
    expect(new URL(requests[0]?.url ?? '').search).toBe('?categoryId=2&limit=5');
  });
});

const WRITE_CHALLENGE = 'Bearer realm="animal-store", error="insufficient_scope", scope="pets:write"';
const SECRET = 'ask_x7LmQ2cVh0mZ1pR8sT4uW6yB3nD5fG7jK9aL0eX2iOq';
const storefront = { id: 2, name: 'storefront', prefix: 'ask_x7Lm', scopes: ['pets:read'], createdAt: '2026-11-26T10:00:00.000Z' };

describe('API keys', () => {
  it('createApiKey sends POST /api-keys with the key as JSON, no Idempotency-Key, and resolves with the key and its secret', async () => {
    const { store, requests } = clientAnswering([json(201, { ...storefront, expiresAt: '2030-01-01T00:00:00.000Z', secret: SECRET }, { location: '/v1/api-keys/2' })]);
    const created = await store.createApiKey({ name: 'storefront', scopes: ['pets:read'], expiresAt: '2030-01-01T00:00:00.000Z' });
    expect(created.response.status).toBe(201);
    expect(created.data.secret).toBe(SECRET);
    expect(created.data.scopes).toEqual(['pets:read']);
    expect(created.response.headers.get('location')).toBe('/v1/api-keys/2');
    expect(created).not.toHaveProperty('idempotencyKey');
    const [request] = requests;
    expect(`${request?.method} ${request?.url}`).toBe('POST http://127.0.0.1:9/v1/api-keys');
    expect(request?.headers.get('content-type')).toBe('application/json');
    expect(request?.headers.has('idempotency-key')).toBe(false);
    expect(request?.headers.get('authorization')).toBe('Bearer ask_test');
    expect(await request?.text()).toBe('{"name":"storefront","scopes":["pets:read"],"expiresAt":"2030-01-01T00:00:00.000Z"}');
  });

  it('rotateApiKey sends POST /api-keys/{keyId}/rotate with graceSeconds, or no body at all when not given', async () => {
    const rotated = { ...storefront, prefix: 'ask_Q2cV', previousSecretExpiresAt: '2026-11-26T11:00:00.000Z', secret: `ask_Q2cV${SECRET.slice(8)}` };
    const { store, requests } = clientAnswering([json(200, rotated), json(200, rotated)]);
    const first = await store.rotateApiKey(2, { graceSeconds: 3600 });
    expect(first.data.secret).toBe(rotated.secret);
    expect(first.data.previousSecretExpiresAt).toBe('2026-11-26T11:00:00.000Z');
    await store.rotateApiKey(2);
    expect(requests.map((r) => `${r.method} ${r.url} ${r.headers.get('content-type')} ${r.headers.has('idempotency-key')}`)).toEqual([
      'POST http://127.0.0.1:9/v1/api-keys/2/rotate application/json false',
      'POST http://127.0.0.1:9/v1/api-keys/2/rotate null false',
    ]);
    expect(await requests[0]?.text()).toBe('{"graceSeconds":3600}');
    expect(await requests[1]?.text()).toBe('');
  });

  it('revokeApiKey sends POST /api-keys/{keyId}/revoke without a body; getApiKey GET /api-keys/{keyId}', async () => {
    const revoked = { ...storefront, revokedAt: '2026-11-26T11:00:00.000Z' };
    const { store, requests } = clientAnswering([json(200, revoked), json(200, revoked)]);
    expect((await store.revokeApiKey(2)).data.revokedAt).toBe('2026-11-26T11:00:00.000Z');
    expect((await store.getApiKey(2)).data).toEqual(revoked);
    expect(requests.map((r) => `${r.method} ${new URL(r.url).pathname} ${r.headers.get('content-type')}`)).toEqual(['POST /v1/api-keys/2/revoke null', 'GET /v1/api-keys/2 null']);
    expect(await requests[0]?.text()).toBe('');
  });

  it('listAllApiKeys follows Link: rel="next" with its cursor until there is none', async () => {
    const page = (request: Request): Response => {
      const cursor = new URL(request.url).searchParams.get('cursor');
      if (cursor === null) return json(200, [{ ...storefront, id: 1, name: 'operators' }, storefront], { link: '</v1/api-keys?limit=2&cursor=k2.sig>; rel="next"' });
      if (cursor === 'k2.sig') return json(200, [{ ...storefront, id: 3, name: 'batch' }]);
      return errorBody(400, 'bad_request');
    };
    const { store, requests } = clientAnswering([page]);
    const names: string[] = [];
    for await (const key of store.listAllApiKeys({ limit: 2 })) names.push(key.name);
    expect(names).toEqual(['operators', 'storefront', 'batch']);
    expect(requests.map((r) => `${new URL(r.url).pathname}${new URL(r.url).search}`)).toEqual(['/v1/api-keys?limit=2', '/v1/api-keys?limit=2&cursor=k2.sig']);
  });

  it.each([
    ['rotateApiKey of a revoked key: 409 api_key_inactive', (store: Store) => store.rotateApiKey(2, { graceSeconds: 0 }), errorBody(409, 'api_key_inactive'), 'rotateApiKey'],
    ['getApiKey of an unknown id: 404 not_found', (store: Store) => store.getApiKey(42), errorBody(404, 'not_found'), 'getApiKey'],
    ['createApiKey with an expiresAt in the past: 400 bad_request', (store: Store) => store.createApiKey({ name: 'x', scopes: ['pets:read'], expiresAt: '2020-01-01T00:00:00.000Z' }), errorBody(400, 'bad_request'), 'createApiKey'],
  ] as const)('throws %s as an AnimalStoreError without a scope', async (_title, call, answer, operation) => {
    const { store } = clientAnswering([answer]);
    const error = await rejection(call(store));
    expect(error).toMatchObject({ status: answer.status, operation, scope: undefined });
  });
});

describe('a 403 insufficient_scope', () => {
  it("throws an AnimalStoreError whose scope is the one WWW-Authenticate names, and is not repeated", async () => {
    const forbidden = json(403, { code: 'insufficient_scope', message: 'This API key lacks the scope pets:write, which createPet needs: use a key that holds it', status: 403 }, { 'www-authenticate': WRITE_CHALLENGE });
    const { store, requests } = clientAnswering([forbidden, json(201, rex)]);
    const error = await rejection(store.createPet({ name: 'Rex', categoryId: 2 }));
    expect(error).toMatchObject({ status: 403, code: 'insufficient_scope', scope: 'pets:write', operation: 'createPet' });
    expect(error.message).toBe('createPet: 403 insufficient_scope: This API key lacks the scope pets:write, which createPet needs: use a key that holds it (request req-403)');
    expect(error.response.headers.get('www-authenticate')).toBe(WRITE_CHALLENGE);
    expect(requests).toHaveLength(1);
  });

  it.each([
    ['createApiKey asking for a scope the calling key lacks', 'Bearer realm="animal-store", error="insufficient_scope", scope="keys:manage"', 'keys:manage'],
    ['several scopes, space-separated (RFC 6750)', 'Bearer realm="animal-store", error="insufficient_scope", scope="orders:read orders:write"', 'orders:read orders:write'],
    ['the parameters in another order, the scheme in lower case', 'bearer scope="pets:read", error="insufficient_scope", realm="animal-store"', 'pets:read'],
    ['a token rather than a quoted string', 'Bearer realm="animal-store", error=insufficient_scope, scope=pets:read', 'pets:read'],
  ])('reads the scope of %s', async (_title, challenge, scope) => {
    const { store } = clientAnswering([json(403, { code: 'insufficient_scope', message: 'lacks a scope', status: 403 }, { 'www-authenticate': challenge })]);
    expect((await rejection(store.createApiKey({ name: 'x', scopes: ['pets:read'] }))).scope).toBe(scope);
  });

  it("a 401's challenge names no scope: scope is undefined", async () => {
    const { store } = clientAnswering([json(401, { code: 'unauthorized', message: 'unknown key', status: 401 }, { 'www-authenticate': 'Bearer realm="animal-store"' })]);
    expect(await rejection(store.listPets())).toMatchObject({ status: 401, code: 'unauthorized', scope: undefined });
  });
});

type Store = ReturnType<typeof clientAnswering>['store'];
