// Bearer authentication on every operation: docs/interface.md 5 and 7, RFC 6750.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createApiKey, keysSettled, type TestApp } from '../helper.js';

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

const operations = [
  ['listPets', { method: 'GET', url: '/v1/pets' }],
  ['createPet', { method: 'POST', url: '/v1/pets', payload: { name: 'Rex', categoryId: 1 } }],
  ['getPet', { method: 'GET', url: '/v1/pets/1' }],
  ['updatePet', { method: 'PATCH', url: '/v1/pets/999999', payload: { name: 'Max' } }],
  ['deletePet', { method: 'DELETE', url: '/v1/pets/999999' }],
  ['listOrders', { method: 'GET', url: '/v1/store/orders' }],
  ['placeOrder', { method: 'POST', url: '/v1/store/orders', payload: { petId: 1 } }],
  ['getOrder', { method: 'GET', url: '/v1/store/orders/1' }],
  ['cancelOrder', { method: 'POST', url: '/v1/store/orders/1/cancel' }],
  ['completeOrder', { method: 'POST', url: '/v1/store/orders/1/complete' }],
  ['getInventory', { method: 'GET', url: '/v1/store/inventory' }],
  ['listCategories', { method: 'GET', url: '/v1/categories' }],
  ['getCategory', { method: 'GET', url: '/v1/categories/1' }],
  ['putCategory', { method: 'PUT', url: '/v1/categories/1', payload: { name: 'Dogs' } }],
  ['deleteCategory', { method: 'DELETE', url: '/v1/categories/1' }],
  ['createApiKey', { method: 'POST', url: '/v1/api-keys', payload: { name: 'made by auth.test', scopes: ['pets:read'] } }],
  ['listApiKeys', { method: 'GET', url: '/v1/api-keys' }],
  ['getApiKey', { method: 'GET', url: '/v1/api-keys/1' }],
  ['revokeApiKey', { method: 'POST', url: '/v1/api-keys/999999/revoke' }],
  ['rotateApiKey', { method: 'POST', url: '/v1/api-keys/999999/rotate' }],
  ['listEvents', { method: 'GET', url: '/v1/events' }],
  ['getEvent', { method: 'GET', url: '/v1/events/1' }],
  ['createWebhookEndpoint', { method: 'POST', url: '/v1/webhook-endpoints', payload: { url: 'https://127.0.0.1/in', eventTypes: ['pet.created'] } }],
  ['listWebhookEndpoints', { method: 'GET', url: '/v1/webhook-endpoints' }],
  ['getWebhookEndpoint', { method: 'GET', url: '/v1/webhook-endpoints/1' }],
  ['updateWebhookEndpoint', { method: 'PATCH', url: '/v1/webhook-endpoints/1', payload: { enabled: false } }],
  ['deleteWebhookEndpoint', { method: 'DELETE', url: '/v1/webhook-endpoints/999999' }],
  ['rotateWebhookEndpointSecret', { method: 'POST', url: '/v1/webhook-endpoints/999999/rotate-secret' }],
  ['listWebhookDeliveries', { method: 'GET', url: '/v1/webhook-endpoints/1/deliveries' }],
] as const;

it('the table above has every operation of the contract', async () => {
  const { operations: all } = await import('../../src/contract/spec.js');
  expect(operations.map(([id]) => id).sort()).toEqual(all.map((o) => o.operationId).sort());
});

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
    const response = await t.api({ ...request, headers: given() });
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe(challenge);
    expect(response.json()).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(Object.keys(response.json()).sort()).toEqual(['code', 'message', 'status']);
    expect((await t.pool.query('SELECT count(*) FROM pets')).rows).toEqual(before.rows);
  });

  it('accepts a valid key, whatever the case of the scheme', async () => {
    const response = await t.api({ ...request, headers: { authorization: `bearer ${t.key}` } });
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
