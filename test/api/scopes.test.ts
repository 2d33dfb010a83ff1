// Scopes: each operation needs the one its security requirement names (contract 1.3.0),
// checked after authentication (401 first) and before validation (400 after); a key never
// reaches a scope it does not hold, by any route (OWASP API5, broken function-level
// authorization).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import openapi from '../../generated/openapi.js';
import { operationTable, type PathOperationId } from '../../generated/operations.js';
import { buildTestApp, keysSettled, type ApiRequest, type TestApp } from '../helper.js';
import { everyOperation, scopesOf } from '../support/operation-requests.js';

// Every operation's scopes, as its security requirement names them in the contract: an
// operation with two alternatives takes either; one with none is open to every key.
const operationIds = everyOperation.map(([operationId]) => operationId);
const SCOPES: Scope[] = [...new Set(operationIds.flatMap(scopesOf))] as Scope[];
type Scope = 'pets:read' | 'pets:write' | 'orders:read' | 'orders:write' | 'keys:manage' | 'webhooks:manage';
/** Operations any key may call, whatever its scopes: a key rotates its own secret. */
const ANY_KEY: readonly string[] = operationIds.filter((operationId) => scopesOf(operationId).length === 0);

// One request per operation (test/support/operation-requests.ts): unknown ids, `{}` as a
// body, so that past its scope it is a 400 or a 404 that changes nothing.
const json = { 'content-type': 'application/json' };
const REQUESTS = Object.fromEntries(everyOperation) as Record<PathOperationId, ApiRequest>;
/** placeOrder of a pet that does not exist: 422 from a key that may order. */
const ORDER_UNKNOWN_PET: ApiRequest = { method: 'POST', url: '/v1/store/orders', headers: json, payload: '{"petId":999999}' };

const challenge = (scope: string) => `Bearer realm="animal-store", error="insufficient_scope", scope="${scope}"`;
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

let t: TestApp;
/** A key holding only that scope, for each scope. */
const only = {} as Record<Scope, string>;

/** A new key with these scopes, made through createApiKey with the test's key (every scope): its secret and id. */
async function keyWith(scopes: string[], name = 'scoped', as = t.key): Promise<{ secret: string; id: number }> {
  const created = await t.api({ method: 'POST', url: '/v1/api-keys', headers: { ...bearer(as), ...json }, payload: JSON.stringify({ name, scopes }) });
  expect(created.statusCode, created.body).toBe(201);
  return { secret: created.json().secret, id: created.json().id };
}

const settled = () => keysSettled(t.pool, async (key) => (await t.app.inject({ method: 'GET', url: '/v1/store/inventory', headers: bearer(key) })).statusCode === 200);

beforeAll(async () => {
  // Refused requests spend the address's budget; this file sends many.
  t = await buildTestApp({ env: { RATE_LIMIT_ANONYMOUS_MAX: '100000', RATE_LIMIT_MAX: '100000' } });
  for (const scope of SCOPES) only[scope] = (await keyWith([scope], `only ${scope}`)).secret;
  await settled();
});
afterAll(async () => t.close());

describe('the scope of every operation', () => {
  it('every alternative of an operation\'s security names one scope, or none, and every scope is the contract\'s', () => {
    for (const o of Object.values(operationTable)) {
      for (const requirement of o.security) expect(requirement.scopes.bearerAuth?.length ?? 0, `${o.operationId}: each alternative names one scope, or none`).toBeLessThanOrEqual(1);
    }
    expect([...SCOPES].sort()).toEqual([...openapi.components.schemas.Scope.enum].sort());
  });

  describe.each(SCOPES)('a key holding only %s', (scope) => {
    it.each(operationIds)('%s', async (operationId) => {
      const response = await t.api({ ...REQUESTS[operationId], headers: { ...REQUESTS[operationId].headers, ...bearer(only[scope]) } });
      if (ANY_KEY.includes(operationId)) {
        // No scope to lack: refused for what it asks (another key's rotation), never for a scope.
        expect(response.json().code).not.toBe('insufficient_scope');
        return;
      }
      if (scopesOf(operationId).includes(scope)) {
        expect([401, 403]).not.toContain(response.statusCode);
        return;
      }
      const [needed, ...or] = scopesOf(operationId);
      expect(response.statusCode).toBe(403);
      expect(response.headers['www-authenticate']).toBe(challenge([needed, ...or].join(' ')));
      const either = or.length > 0 ? ` (or ${or.join(', or ')})` : '';
      expect(response.json()).toEqual({ code: 'insufficient_scope', message: `This API key lacks the scope ${needed}, which ${operationId} needs${either}: use a key that holds it`, status: 403 });
    });
  });

  it('a key holding every scope is refused none', async () => {
    for (const [operationId, request] of Object.entries(REQUESTS)) {
      const response = await t.api({ ...request, headers: { ...request.headers, ...bearer(t.key) } });
      // rotateApiKey names another key here: forbidden to any key (test/security/keys.test.ts).
      if (ANY_KEY.includes(operationId)) expect(response.json().code, operationId).toBe('forbidden');
      else expect([401, 403], operationId).not.toContain(response.statusCode);
    }
  });
});

describe('401, then 403, then validation', () => {
  // A key without pets:write, with what createPet would refuse with 400, 413 or 415.
  const invalid: [string, ApiRequest][] = [
    ['an invalid body', { method: 'POST', url: '/v1/pets', headers: json, payload: '{"nope":true}' }],
    ['malformed JSON', { method: 'POST', url: '/v1/pets', headers: json, payload: '{' }],
    ['a body that is not JSON', { method: 'POST', url: '/v1/pets', headers: { 'content-type': 'text/plain' }, payload: 'Rex' }],
    ['an oversized body', { method: 'POST', url: '/v1/pets', headers: json, payload: 'x'.repeat(70_000) }],
    ['no body', { method: 'POST', url: '/v1/pets' }],
    ['a bad path parameter (getPet)', { method: 'GET', url: '/v1/pets/abc' }],
    ['a bad query parameter (listPets)', { method: 'GET', url: '/v1/pets?limit=0' }],
    ['an unknown scope asked of createApiKey', { method: 'POST', url: '/v1/api-keys', headers: json, payload: '{"name":"x","scopes":["root"]}' }],
  ];

  it.each(invalid)('%s, from a key that lacks the scope: 403, not 400', async (_title, request) => {
    const response = await t.api({ ...request, headers: { ...request.headers, ...bearer(only['orders:read']) } });
    expect(response.statusCode).toBe(403);
    expect(response.json().code).toBe('insufficient_scope');
  });

  it.each(invalid)('%s, from an unknown key: 401, not 403', async (_title, request) => {
    const response = await t.api({ ...request, headers: { ...request.headers, authorization: 'Bearer ask_not-a-key' } });
    expect(response.statusCode).toBe(401);
  });

  it('a revoked or expired key that lacks the scope is 401, not 403', async () => {
    const revoked = await keyWith(['orders:read'], 'to revoke');
    const expired = await keyWith(['orders:read'], 'to expire');
    await t.api({ method: 'POST', url: `/v1/api-keys/${revoked.id}/revoke`, headers: bearer(t.key) });
    await t.pool.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [expired.id]);
    await settled();
    for (const key of [revoked.secret, expired.secret]) {
      const response = await t.api({ ...REQUESTS.createPet, headers: { ...json, ...bearer(key) } });
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer realm="animal-store", error="invalid_token"');
    }
  });

  it('with the scope, the invalid request is answered by validation', async () => {
    const response = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...json, ...bearer(only['pets:write']) }, payload: '{"nope":true}' });
    expect(response.statusCode).toBe(400);
  });
});

describe('a 403 says nothing of what the request named', () => {
  it.each([
    ['an order of another key, or none', 'orders:read', (id: number) => `/v1/store/orders/${id}`],
    ['an API key, or none', 'keys:manage', (id: number) => `/v1/api-keys/${id}`],
  ] as const)('%s: the same answer whether it exists or not', async (_title, needed, url) => {
    // One that exists (the test's key placed order 1 on a pet of its own; key 1 is the test's), one that does not.
    const pet = (await t.pool.query<{ id: string }>("INSERT INTO pets (name, category_id, status) VALUES ('Held', 1, 'available') RETURNING id")).rows[0]?.id;
    const placed = await t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...json, ...bearer(t.key) }, payload: JSON.stringify({ petId: Number(pet) }) });
    const existing = needed === 'orders:read' ? placed.json().id : 1;
    const answers = await Promise.all([existing, 999_999].map((id) => t.api({ method: 'GET', url: url(id), headers: bearer(only['pets:read']) })));
    for (const answer of answers) {
      expect(answer.statusCode).toBe(403);
      expect(Object.keys(answer.json()).sort()).toEqual(['code', 'message', 'status']);
      expect(answer.json().message).not.toMatch(/\d|test/);
    }
    expect(answers[0]?.body).toBe(answers[1]?.body);
    expect(answers[0]?.headers['www-authenticate']).toBe(challenge(needed));
  });
});

describe('no key reaches a scope it does not hold (OWASP API5)', () => {
  let manager: { secret: string; id: number };
  const count = async () => Number((await t.pool.query<{ n: string }>('SELECT count(*) AS n FROM api_keys')).rows[0]?.n);
  const asManager = (request: ApiRequest) => t.api({ ...request, headers: { ...json, ...request.headers, ...bearer(manager.secret) } });
  const ordersWrite: PathOperationId[] = ['placeOrder', 'cancelOrder', 'completeOrder'];
  const refusedOrdersWrite = async (secret: string) => {
    for (const operationId of ordersWrite) {
      const response = await t.api({ ...REQUESTS[operationId], headers: { ...REQUESTS[operationId].headers, ...bearer(secret) } });
      expect(response.statusCode, operationId).toBe(403);
    }
  };

  beforeAll(async () => {
    manager = await keyWith(['keys:manage', 'pets:read'], 'manager');
    await settled();
  });

  it.each([
    ['orders:write alone', ['orders:write'], 'orders:write'],
    ['a scope it holds and one it lacks', ['pets:read', 'orders:write'], 'orders:write'],
    ['every scope', ['pets:read', 'pets:write', 'orders:read', 'orders:write', 'keys:manage'], 'pets:write'],
  ])('createApiKey asking for %s is 403 naming the first it lacks, and stores nothing', async (_title, scopes, missing) => {
    const before = await count();
    const response = await asManager({ method: 'POST', url: '/v1/api-keys', payload: JSON.stringify({ name: 'wider', scopes }) });
    expect(response.statusCode).toBe(403);
    expect(response.headers['www-authenticate']).toBe(challenge(missing));
    expect(response.json()).toEqual({ code: 'insufficient_scope', message: `This API key lacks the scope ${missing}, so it cannot grant it: ask for scopes it holds`, status: 403 });
    expect(await count()).toBe(before);
  });

  it('rotating a key that holds more is 403, and that key keeps its secret', async () => {
    const wider = await keyWith(['pets:read', 'orders:write'], 'wider');
    const response = await asManager({ method: 'POST', url: `/v1/api-keys/${wider.id}/rotate`, payload: '{"graceSeconds":0}' });
    expect(response.statusCode).toBe(403);
    expect(response.json().code).toBe('forbidden');
    expect((await t.api({ method: 'GET', url: '/v1/store/orders', headers: bearer(wider.secret) })).statusCode).toBe(403);
    expect((await t.api({ ...ORDER_UNKNOWN_PET, headers: { ...json, ...bearer(wider.secret) } })).statusCode).toBe(422);
  });

  it('by every route it has, it gains nothing: the keys it makes hold its scopes at most, and orders:write stays out of reach', async () => {
    const made = await asManager({ method: 'POST', url: '/v1/api-keys', payload: '{"name":"made by manager","scopes":["keys:manage"]}' });
    expect(made.statusCode).toBe(201);
    expect(made.json().scopes).toEqual(['keys:manage']);
    const child = made.json() as { secret: string; id: number };
    // Its own secret rotated: the same scopes, a new secret.
    const rotated = await asManager({ method: 'POST', url: `/v1/api-keys/${manager.id}/rotate`, payload: '{"graceSeconds":60}' });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().scopes).toEqual(['pets:read', 'keys:manage']);
    await asManager({ method: 'GET', url: '/v1/api-keys' });
    await asManager({ method: 'POST', url: `/v1/api-keys/${child.id}/revoke` });
    await settled();
    // The child (keys:manage only) cannot widen either.
    for (const secret of [manager.secret, rotated.json().secret as string]) {
      await refusedOrdersWrite(secret);
      const wider = await t.api({ method: 'POST', url: '/v1/api-keys', headers: { ...json, ...bearer(secret) }, payload: '{"name":"x","scopes":["orders:write"]}' });
      expect(wider.statusCode).toBe(403);
    }
    const stored = (await t.pool.query<{ scopes: string[] }>("SELECT scopes FROM api_keys WHERE name IN ('manager', 'made by manager')")).rows;
    for (const { scopes } of stored) expect(scopes.every((s) => s === 'pets:read' || s === 'keys:manage')).toBe(true);
    // Made with the manager's current secret (its previous one, in its grace, manages no key).
    const fresh = await keyWith(['keys:manage'], 'child of child', rotated.json().secret);
    await settled();
    const grandchild = await t.api({ method: 'POST', url: '/v1/api-keys', headers: { ...json, ...bearer(fresh.secret) }, payload: '{"name":"y","scopes":["pets:read"]}' });
    expect(grandchild.statusCode).toBe(403);
    expect(grandchild.json().message).toBe('This API key lacks the scope pets:read, so it cannot grant it: ask for scopes it holds');
  });
});
