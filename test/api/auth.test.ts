// Bearer authentication on every operation: docs/interface.md 5 and 7, RFC 6750.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createApiKey, keysSettled, type TestApp } from '../helper.js';
import { everyOperation } from '../support/operation-requests.js';

let t: TestApp;
let revokedKey: string;
beforeAll(async () => {
  // Every refused request spends its address's budget (60 a minute by default), and this
  // file sends more than that; the budget is not what it is about.
  t = await buildTestApp({ env: { RATE_LIMIT_ANONYMOUS_MAX: '100000' } });
  const revoked = await createApiKey(t.pool, 'to revoke');
  await t.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [revoked.id]);
  revokedKey = revoked.key;
  await keysSettled(t.pool, async (key) => (await t.api({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })).statusCode === 200);
});
afterAll(async () => t.close());

// Every operation of the contract (test/support/operation-requests.ts).
const operations = everyOperation;

const realm = 'Bearer realm="animal-store"';
const credentials: [string, { given: () => Record<string, string>; challenge: string }][] = [
  ['no Authorization header', { given: () => ({}), challenge: realm }],
  ['another scheme (Basic)', { given: () => ({ authorization: 'Basic dXNlcjpwYXNz' }), challenge: realm }],
  ['the key without a scheme', { given: () => ({ authorization: t.key }), challenge: realm }],
  ['an empty bearer token', { given: () => ({ authorization: 'Bearer ' }), challenge: `${realm}, error="invalid_token"` }],
  ['a token with spaces', { given: () => ({ authorization: 'Bearer a b' }), challenge: `${realm}, error="invalid_token"` }],
  ['an unknown key', { given: () => ({ authorization: 'Bearer ask_not-a-key' }), challenge: `${realm}, error="invalid_token"` }],
  ['a revoked key', { given: () => ({ authorization: `Bearer ${revokedKey}` }), challenge: `${realm}, error="invalid_token"` }],
];

describe.each(operations)('%s', (_id, request) => {
  it.each(credentials)('refuses %s with 401, the Error body and a Bearer challenge', async (_title, { given, challenge }) => {
    const before = await t.pool.query('SELECT count(*) FROM pets');
    const response = await t.api({ ...request, headers: { ...request.headers, ...given() } });
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe(challenge);
    expect(response.json()).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(Object.keys(response.json()).sort()).toEqual(['code', 'message', 'status']);
    expect((await t.pool.query('SELECT count(*) FROM pets')).rows).toEqual(before.rows);
  });

  it('accepts a valid key, whatever the case of the scheme', async () => {
    const response = await t.api({ ...request, headers: { ...request.headers, authorization: `bearer ${t.key}` } });
    expect(response.statusCode).not.toBe(401);
  });
});

describe('authentication comes before everything else', () => {
  it.each([
    ['a bad parameter', { method: 'GET', url: '/v1/pets?limit=0' }],
    ['a bad path parameter', { method: 'GET', url: '/v1/pets/abc' }],
    ['a bad body', { method: 'POST', url: '/v1/pets', payload: { nope: true } }],
    ['malformed JSON', { method: 'POST', url: '/v1/pets', payload: '{', headers: { 'content-type': 'application/json' } }],
    ['a non-JSON body', { method: 'POST', url: '/v1/pets', payload: 'x', headers: { 'content-type': 'text/plain' } }],
    ['an oversized body', { method: 'POST', url: '/v1/pets', payload: 'x'.repeat(70_000), headers: { 'content-type': 'application/json' } }],
  ])('%s without a key is 401', async (_title, request) => {
    const response = await t.api(request);
    expect(response.statusCode).toBe(401);
  });
});

describe('listOrders', () => {
  it('answers 200 with a valid key (it answered 501 while experimental, up to 1.1.0)', async () => {
    const response = await t.api({ method: 'GET', url: '/v1/store/orders', headers: t.auth });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual([]);
  });
});
