// An example in the contract is what the service answers: every Error example of
// openapi/v1.yaml (what SDK users and /docs readers copy their error handling from) is
// produced here by a real request, and compared whole, details included. An example with
// no case below fails the first test, so a new one cannot drift from the service either.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/pool.js';
import { specDocument } from '../contract.js';
import { buildTestApp, keysSettled, lapseOrder, type ApiRequest, type TestApp } from '../helper.js';
import { within, WAIT_MS } from '../process.js';

type Json = Record<string, any>;

/** Every example whose value is an Error body, by JSON pointer into the contract. */
function errorExamples(): Map<string, Json> {
  const found = new Map<string, Json>();
  const walk = (node: unknown, pointer: string): void => {
    if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${pointer}/${i}`));
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node as Json)) {
      const at = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      if (key === 'examples' && value && typeof value === 'object' && !Array.isArray(value)) {
        for (const [name, example] of Object.entries(value as Json)) {
          if (example?.value && typeof example.value === 'object' && 'code' in example.value) found.set(`${at}/${name}`, example.value as Json);
        }
      }
      walk(value, at);
    }
  };
  walk(specDocument, '#');
  return found;
}

let t: TestApp;
let limited: TestApp;
const json = { 'content-type': 'application/json' };

beforeAll(async () => {
  // The ids the examples name, on a database of its own: order 1 completed, order 2 expired,
  // pet 1 pending, pet 2 without a status, no pet or order 42.
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '100000', RATE_LIMIT_ANONYMOUS_MAX: '100000' } });
  await t.pool.query("INSERT INTO pets (name, category_id, status) VALUES ('One', 1, 'available'), ('Two', 1, NULL), ('Three', 1, 'available'), ('Four', 1, 'available')");
  const place = async (petId: number) => (await t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: JSON.stringify({ petId }) })).json().id as number;
  const first = await place(1);
  await t.api({ method: 'POST', url: `/v1/store/orders/${first}/complete`, headers: t.auth });
  const second = await place(3);
  await lapseOrder(t.pool, second);
  await t.api({ method: 'POST', url: `/v1/store/orders/${second}/complete`, headers: t.auth });
  // Pet 1 was sold with order 1; the 409 example shows a pending one.
  await t.pool.query("UPDATE pets SET status = 'pending' WHERE id = 1");
  // The production budget, for the 429 example.
  limited = await buildTestApp({ env: { RATE_LIMIT_MAX: '1000', RATE_LIMIT_WINDOW_MS: '60000' } });
  // The keys the examples name: key 1 is the test's (every scope), key 2 revoked; a read-only
  // key and a key that manages keys and holds nothing else.
  const made = async (scopes: string[]) => {
    const answer = await request({ method: 'POST', url: '/v1/api-keys', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: scopes.join(' '), scopes }) });
    expect(answer.statusCode, answer.body).toBe(201);
    return answer.json();
  };
  // Key 2 is revoked while it rotates itself (the KeyInactive example).
  inactive = await made(['pets:read']);
  readOnly = { authorization: `Bearer ${(await made(['pets:read'])).secret}` };
  keysOnly = { authorization: `Bearer ${(await made(['keys:manage'])).secret}` };
  ordersReadOnly = { authorization: `Bearer ${(await made(['orders:read'])).secret}` };
  hooksCatalogue = { authorization: `Bearer ${(await made(['pets:read', 'webhooks:manage'])).secret}` };
  const orderHooks = await made(['orders:read', 'webhooks:manage']);
  hooksOrders = { authorization: `Bearer ${orderHooks.secret}` };
  // Key 8 rotated with a grace: its previous secret (the previousSecret example).
  const rotated = await made(['pets:read']);
  await keysSettled(t.pool, async (key) => (await t.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })).statusCode === 200);
  const next = await request({ method: 'POST', url: `/v1/api-keys/${rotated.id}/rotate`, headers: { authorization: `Bearer ${rotated.secret}`, ...json }, payload: '{"graceSeconds":3600}' });
  expect(next.statusCode, next.body).toBe(200);
  previousSecret = { authorization: `Bearer ${rotated.secret}` };
  // That key has 16 endpoints (disabled: nothing is ever delivered to them).
  await t.pool.query(
    "INSERT INTO webhook_endpoints (api_key_id, url, event_types, secret, enabled, disabled_at) SELECT $1, 'https://warehouse.example/hooks', ARRAY['order.placed'], 'whsec_' || repeat('A', 32), false, now() FROM generate_series(1, 16)",
    [orderHooks.id],
  );
  await keysSettled(t.pool, async (key) => (await t.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })).statusCode === 200);
});
let readOnly: Record<string, string>;
let inactive: { id: number; secret: string };
let previousSecret: Record<string, string>;
let keysOnly: Record<string, string>;
/** Sees only its own order events, and has placed no order: no event 42 for it. */
let ordersReadOnly: Record<string, string>;
/** Manages webhooks and holds pets:read, not orders:read. */
let hooksCatalogue: Record<string, string>;
/** Manages webhooks and holds orders:read, not pets:read; has 16 endpoints. */
let hooksOrders: Record<string, string>;
afterAll(async () => {
  await t.close();
  await limited.close();
});

const request = (r: ApiRequest) => t.api(r);
const bodyOf = async (r: ApiRequest): Promise<unknown> => (await request(r)).json();
const mergePatch = { 'content-type': 'application/merge-patch+json' };

/** What `produce` answers while order 1 is placed again, holding pet 1 (pending): the PetReserved examples name them. */
async function whileOrderOneHoldsPetOne(produce: () => Promise<unknown>): Promise<unknown> {
  const { rows } = await t.pool.query<{ status: string; closed_at: Date }>("UPDATE orders SET status = 'placed', closed_at = NULL FROM (SELECT status, closed_at FROM orders WHERE id = 1) AS was WHERE orders.id = 1 RETURNING was.status, was.closed_at");
  try {
    return await produce();
  } finally {
    await t.pool.query('UPDATE orders SET status = $1, closed_at = $2 WHERE id = 1', [rows[0]?.status, rows[0]?.closed_at]);
  }
}

/** How each example is produced. */
const cases: Record<string, () => Promise<unknown>> = {
  '#/paths/~1pets~1{petId}/get/responses/404/content/application~1json/examples/notFound': () => bodyOf({ method: 'GET', url: '/v1/pets/42', headers: t.auth }),
  '#/paths/~1store~1orders/post/responses/400/content/application~1json/examples/missingPetId': () => bodyOf({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: '{}' }),
  '#/paths/~1store~1orders/post/responses/409/content/application~1json/examples/notAvailable': () => bodyOf({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: '{"petId":1}' }),
  '#/paths/~1store~1orders/post/responses/409/content/application~1json/examples/noStatus': () => bodyOf({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: '{"petId":2}' }),
  '#/paths/~1store~1orders/post/responses/422/content/application~1json/examples/petNotFound': () => bodyOf({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: '{"petId":42}' }),
  '#/components/examples/IdempotencyInFlight': async () => {
    // A claim left by a request that is still running.
    const apiKeyId = (await t.pool.query<{ id: string }>('SELECT id FROM api_keys ORDER BY id LIMIT 1')).rows[0]?.id;
    const hash = createHash('sha256').update('{"categoryId":1,"name":"Slow"}').digest();
    await t.pool.query("INSERT INTO idempotency_keys (api_key_id, operation, key, request_hash, locked_until) VALUES ($1, 'createPet', 'in-flight', $2, now() + interval '1 minute')", [apiKeyId, hash]);
    return bodyOf({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json, 'idempotency-key': 'in-flight' }, payload: '{"name":"Slow","categoryId":1}' });
  },
  '#/components/examples/IdempotencyKeyReused': async () => {
    await request({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json, 'idempotency-key': 'reused' }, payload: '{"name":"A","categoryId":1}' });
    return bodyOf({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json, 'idempotency-key': 'reused' }, payload: '{"name":"B","categoryId":1}' });
  },
  '#/components/responses/IdempotencyKeyReused/content/application~1json/examples/reusedOnAnotherOrder': async () => {
    const held = await Promise.all([4, 5].map(async () => Number((await t.pool.query<{ id: string }>("INSERT INTO pets (name, category_id, status) VALUES ('Held', 1, 'available') RETURNING id")).rows[0]?.id)));
    const orders = await Promise.all(held.map(async (petId) => (await request({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: JSON.stringify({ petId }) })).json().id as number));
    await request({ method: 'POST', url: `/v1/store/orders/${orders[0]}/cancel`, headers: { ...t.auth, 'idempotency-key': 'one-cancel' } });
    return bodyOf({ method: 'POST', url: `/v1/store/orders/${orders[1]}/cancel`, headers: { ...t.auth, 'idempotency-key': 'one-cancel' } });
  },
  '#/components/examples/RateLimited': async () => {
    const headers = { authorization: `Bearer ${limited.key}` };
    for (let i = 0; i < 1000; i++) await limited.app.inject({ method: 'GET', url: '/v1/store/inventory', headers });
    return (await limited.api({ method: 'GET', url: '/v1/store/inventory', headers })).json();
  },
  '#/components/examples/Internal': async () => {
    // The database breaks under the service (a table gone).
    await t.pool.query('ALTER TABLE pet_status_totals RENAME TO pet_status_totals_gone');
    try {
      return await bodyOf({ method: 'GET', url: '/v1/store/inventory', headers: t.auth });
    } finally {
      await t.pool.query('ALTER TABLE pet_status_totals_gone RENAME TO pet_status_totals');
    }
  },
  '#/components/examples/Unavailable': async () => {
    // The database does not answer in time: a statement held behind a lock past its timeout.
    const pool = createPool({ DATABASE_URL: t.url, DB_POOL_MAX: 2, DB_CONNECT_TIMEOUT_MS: 10_000, DB_STATEMENT_TIMEOUT_MS: 200 });
    const slow = await buildTestApp({ url: t.url, pool });
    const locker = new pg.Client({ connectionString: t.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE pet_status_totals IN ACCESS EXCLUSIVE MODE');
      return (await slow.api({ method: 'GET', url: '/v1/store/inventory', headers: { authorization: `Bearer ${t.key}` } })).json();
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
      await slow.close();
      await pool.end();
    }
  },
  '#/components/examples/Unauthorized': () => bodyOf({ method: 'GET', url: '/v1/pets' }),
  '#/components/examples/BadPetId': () => bodyOf({ method: 'GET', url: '/v1/pets/abc', headers: t.auth }),
  '#/components/responses/BadParameter/content/application~1json/examples/limitTooSmall': () => bodyOf({ method: 'GET', url: '/v1/pets?limit=0', headers: t.auth }),
  '#/components/responses/BadParameter/content/application~1json/examples/unknownStatus': () => bodyOf({ method: 'GET', url: '/v1/pets?status=lost', headers: t.auth }),
  '#/components/responses/BadParameter/content/application~1json/examples/unknownParameter': () => bodyOf({ method: 'GET', url: '/v1/pets?stauts=sold', headers: t.auth }),
  '#/components/responses/BadParameter/content/application~1json/examples/repeated': () => bodyOf({ method: 'GET', url: '/v1/pets?limit=1&limit=2', headers: t.auth }),
  '#/components/responses/BadBody/content/application~1json/examples/missingName': () => bodyOf({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: '{"categoryId":1}' }),
  '#/components/responses/BadBody/content/application~1json/examples/malformedJson': () => bodyOf({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: '{"name":' }),
  '#/components/responses/PayloadTooLarge/content/application~1json/examples/tooLarge': () =>
    bodyOf({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: 'x'.repeat(70_000), categoryId: 1 }) }),
  '#/paths/~1pets:batchCreate/post/responses/400/content/application~1json/examples/badItems': () =>
    bodyOf({ method: 'POST', url: '/v1/pets:batchCreate', headers: { ...t.auth, ...json }, payload: '{"requests":[{"name":"Rex","categoryId":1},{"categoryId":1},{"name":"Tom","categoryId":"3"}]}' }),
  '#/paths/~1pets:batchCreate/post/responses/400/content/application~1json/examples/tooMany': () =>
    bodyOf({ method: 'POST', url: '/v1/pets:batchCreate', headers: { ...t.auth, ...json }, payload: JSON.stringify({ requests: Array.from({ length: 1001 }, () => ({ name: 'Rex', categoryId: 1 })) }) }),
  '#/paths/~1pets:batchCreate/post/responses/413/content/application~1json/examples/tooLarge': () =>
    bodyOf({ method: 'POST', url: '/v1/pets:batchCreate', headers: { ...t.auth, ...json }, payload: JSON.stringify({ requests: [{ name: 'x'.repeat(1_100_000), categoryId: 1 }] }) }),
  '#/paths/~1pets:export/get/responses/406/content/application~1json/examples/notAcceptable': () => bodyOf({ method: 'GET', url: '/v1/pets:export', headers: { ...t.auth, accept: 'application/json' } }),
  '#/components/responses/UnsupportedMediaType/content/application~1json/examples/notJson': () => bodyOf({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, 'content-type': 'text/plain' }, payload: 'Rex' }),
  '#/paths/~1pet-imports/post/responses/400/content/application~1json/examples/missingColumn': () =>
    bodyOf({ method: 'POST', url: '/v1/pet-imports', headers: { ...t.auth, 'content-type': 'text/csv' }, payload: 'name,status\nRex,available\n' }),
  '#/paths/~1pet-imports/post/responses/400/content/application~1json/examples/unknownColumn': () =>
    bodyOf({ method: 'POST', url: '/v1/pet-imports', headers: { ...t.auth, 'content-type': 'text/csv' }, payload: 'name,categoryId,colour\nRex,1,red\n' }),
  // One chunk of 65,536 bytes, the last one not UTF-8.
  '#/paths/~1pet-imports/post/responses/400/content/application~1json/examples/notUtf8': () =>
    bodyOf({ method: 'POST', url: '/v1/pet-imports', headers: { ...t.auth, 'content-type': 'text/csv' }, payload: Buffer.concat([Buffer.from('name,categoryId\n'.padEnd(65_535, 'x')), Buffer.from([0xff])]) }),
  // A Content-Length past the limit is refused before any byte of the body is read.
  '#/paths/~1pet-imports/post/responses/413/content/application~1json/examples/tooLarge': () =>
    bodyOf({ method: 'POST', url: '/v1/pet-imports', headers: { ...t.auth, 'content-type': 'text/csv', 'content-length': String(1024 ** 3 + 1) }, payload: 'name,categoryId\n' }),
  '#/paths/~1pet-imports/post/responses/415/content/application~1json/examples/json': () =>
    bodyOf({ method: 'POST', url: '/v1/pet-imports', headers: { ...t.auth, ...json }, payload: '{"name":"Rex","categoryId":1}' }),
  '#/paths/~1pet-imports~1{importId}~1cancel/post/responses/409/content/application~1json/examples/finished': async () => {
    const submitted = await request({ method: 'POST', url: '/v1/pet-imports', headers: { ...t.auth, 'content-type': 'text/csv' }, payload: 'name,categoryId\nImported,1\n' });
    expect(submitted.json()).toMatchObject({ id: 1 });
    await within(WAIT_MS, async () => (await request({ method: 'GET', url: '/v1/pet-imports/1', headers: t.auth })).json<{ status: string }>().status === 'succeeded');
    return bodyOf({ method: 'POST', url: '/v1/pet-imports/1/cancel', headers: t.auth });
  },
  '#/components/examples/BadImportId': () => bodyOf({ method: 'GET', url: '/v1/pet-imports/abc', headers: t.auth }),
  '#/components/responses/ImportNotFound/content/application~1json/examples/notFound': () => bodyOf({ method: 'GET', url: '/v1/pet-imports/42', headers: t.auth }),
  '#/components/responses/BadOrderId/content/application~1json/examples/badOrderId': () => bodyOf({ method: 'GET', url: '/v1/store/orders/abc', headers: t.auth }),
  '#/components/responses/BadOrderAction/content/application~1json/examples/badOrderId': () => bodyOf({ method: 'POST', url: '/v1/store/orders/abc/cancel', headers: t.auth }),
  '#/components/responses/CursorExpired/content/application~1json/examples/expired': async () => {
    // A walk that has read the first event, then retention deletes up to the second.
    const first = await request({ method: 'GET', url: '/v1/events?limit=1', headers: t.auth });
    const next = /^<([^>]+)>/.exec(String(first.headers.link))?.[1] as string;
    const purged = (await t.pool.query<{ p: string }>('SELECT purged_through AS p FROM events_retention')).rows[0]?.p;
    await t.pool.query('UPDATE events_retention SET purged_through = $1', [(first.json() as { id: number }[])[0]?.id as number + 1]);
    try {
      return await bodyOf({ method: 'GET', url: next, headers: t.auth });
    } finally {
      await t.pool.query('UPDATE events_retention SET purged_through = $1', [purged]);
    }
  },
  '#/components/responses/BadEventId/content/application~1json/examples/badEventId': () => bodyOf({ method: 'GET', url: '/v1/events/abc', headers: t.auth }),
  '#/components/responses/EventNotFound/content/application~1json/examples/notFound': () => bodyOf({ method: 'GET', url: '/v1/events/42', headers: ordersReadOnly }),
  '#/components/responses/OrderNotFound/content/application~1json/examples/notFound': () => bodyOf({ method: 'GET', url: '/v1/store/orders/42', headers: t.auth }),
  '#/components/responses/OrderClosed/content/application~1json/examples/closed': () => bodyOf({ method: 'POST', url: '/v1/store/orders/1/cancel', headers: t.auth }),
  '#/components/responses/OrderClosed/content/application~1json/examples/expired': () => bodyOf({ method: 'POST', url: '/v1/store/orders/2/complete', headers: t.auth }),
  '#/components/responses/BadPetPatch/content/application~1json/examples/pending': () => bodyOf({ method: 'PATCH', url: '/v1/pets/2', headers: { ...t.auth, ...mergePatch }, payload: '{"status":"pending"}' }),
  '#/components/responses/PetNotFound/content/application~1json/examples/notFound': () => bodyOf({ method: 'PATCH', url: '/v1/pets/42', headers: { ...t.auth, ...mergePatch }, payload: '{"name":"Rex"}' }),
  '#/components/responses/PetReserved/content/application~1json/examples/reserved': () =>
    whileOrderOneHoldsPetOne(() => bodyOf({ method: 'PATCH', url: '/v1/pets/1', headers: { ...t.auth, ...mergePatch }, payload: '{"status":"available"}' })),
  '#/components/responses/PetReserved/content/application~1json/examples/reservedDelete': () => whileOrderOneHoldsPetOne(() => bodyOf({ method: 'DELETE', url: '/v1/pets/1', headers: t.auth })),
  '#/components/responses/PreconditionFailed/content/application~1json/examples/changed': () =>
    bodyOf({ method: 'PATCH', url: '/v1/pets/1', headers: { ...t.auth, ...mergePatch, 'if-match': '"kY3zBq9TQ0mFv1cXo2aR8w"' }, payload: '{"name":"One"}' }),
  '#/components/responses/BadCategoryId/content/application~1json/examples/badCategoryId': () => bodyOf({ method: 'GET', url: '/v1/categories/abc', headers: t.auth }),
  '#/components/responses/BadCategory/content/application~1json/examples/emptyName': () => bodyOf({ method: 'PUT', url: '/v1/categories/2', headers: { ...t.auth, ...json }, payload: '{"name":""}' }),
  '#/components/responses/CategoryNotFound/content/application~1json/examples/notFound': () => bodyOf({ method: 'GET', url: '/v1/categories/42', headers: t.auth }),
  '#/components/responses/InsufficientScope/content/application~1json/examples/insufficientScope': () =>
    bodyOf({ method: 'POST', url: '/v1/pets', headers: { ...readOnly, ...json }, payload: '{"name":"Rex","categoryId":1}' }),
  '#/paths/~1pets~1{petId}/get/responses/403/content/application~1json/examples/insufficientScope': () => bodyOf({ method: 'GET', url: '/v1/pets/1', headers: keysOnly }),
  '#/paths/~1api-keys/post/responses/403/content/application~1json/examples/insufficientScope': () =>
    bodyOf({ method: 'POST', url: '/v1/api-keys', headers: { ...readOnly, ...json }, payload: '{"name":"storefront","scopes":["pets:read"]}' }),
  '#/paths/~1api-keys/post/responses/403/content/application~1json/examples/grantNotHeld': () =>
    bodyOf({ method: 'POST', url: '/v1/api-keys', headers: { ...keysOnly, ...json }, payload: '{"name":"orders","scopes":["orders:write"]}' }),
  '#/paths/~1api-keys~1{keyId}~1rotate/post/responses/403/content/application~1json/examples/anotherKey': () => bodyOf({ method: 'POST', url: '/v1/api-keys/9/rotate', headers: readOnly }),
  '#/paths/~1api-keys~1{keyId}~1rotate/post/responses/403/content/application~1json/examples/previousSecret': () => bodyOf({ method: 'POST', url: '/v1/api-keys/8/rotate', headers: previousSecret }),
  '#/paths/~1api-keys/post/responses/409/content/application~1json/examples/limit': async () => {
    // 1,000 keys in force, the default API_KEY_LIMIT; the fillers are deleted after.
    await t.pool.query(
      "INSERT INTO api_keys (name, key_hash, scopes) SELECT 'filler', sha256(('filler-' || i)::bytea), ARRAY['pets:read'] FROM generate_series(1, 1000 - (SELECT count(*)::int FROM api_keys WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()))) AS i",
    );
    try {
      return await bodyOf({ method: 'POST', url: '/v1/api-keys', headers: { ...t.auth, ...json }, payload: '{"name":"one too many","scopes":["pets:read"]}' });
    } finally {
      await t.pool.query("DELETE FROM api_keys WHERE name = 'filler'");
    }
  },
  '#/components/responses/UnsupportedMediaType/content/application~1json/examples/encoded': () =>
    bodyOf({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json, 'content-encoding': 'gzip' }, payload: '{"name":"Rex","categoryId":1}' }),
  '#/components/responses/BadApiKey/content/application~1json/examples/unknownScope': () =>
    bodyOf({ method: 'POST', url: '/v1/api-keys', headers: { ...t.auth, ...json }, payload: '{"name":"x","scopes":["pets:admin"]}' }),
  '#/components/responses/BadApiKey/content/application~1json/examples/pastExpiry': () =>
    bodyOf({ method: 'POST', url: '/v1/api-keys', headers: { ...t.auth, ...json }, payload: '{"name":"x","scopes":["pets:read"],"expiresAt":"2020-01-01T00:00:00.000Z"}' }),
  '#/components/responses/BadKeyId/content/application~1json/examples/badKeyId': () => bodyOf({ method: 'GET', url: '/v1/api-keys/abc', headers: t.auth }),
  '#/components/responses/BadRotation/content/application~1json/examples/graceTooLong': () =>
    bodyOf({ method: 'POST', url: '/v1/api-keys/1/rotate', headers: { ...t.auth, ...json }, payload: '{"graceSeconds":604801}' }),
  '#/components/responses/KeyNotFound/content/application~1json/examples/notFound': () => bodyOf({ method: 'GET', url: '/v1/api-keys/42', headers: t.auth }),
  '#/components/responses/BadWebhookEndpoint/content/application~1json/examples/privateAddress': () =>
    bodyOf({ method: 'POST', url: '/v1/webhook-endpoints', headers: { ...t.auth, ...json }, payload: '{"url":"https://10.0.0.5/hooks","eventTypes":["order.completed"]}' }),
  '#/components/responses/BadWebhookEndpoint/content/application~1json/examples/notHttps': () =>
    bodyOf({ method: 'POST', url: '/v1/webhook-endpoints', headers: { ...t.auth, ...json }, payload: '{"url":"http://warehouse.example/hooks","eventTypes":["order.completed"]}' }),
  '#/components/responses/BadWebhookEndpoint/content/application~1json/examples/unknownType': () =>
    bodyOf({ method: 'POST', url: '/v1/webhook-endpoints', headers: { ...t.auth, ...json }, payload: '{"url":"https://10.0.0.5/hooks","eventTypes":["order.shipped"]}' }),
  '#/paths/~1webhook-endpoints/post/responses/403/content/application~1json/examples/insufficientScope': () =>
    bodyOf({ method: 'POST', url: '/v1/webhook-endpoints', headers: { ...readOnly, ...json }, payload: '{"url":"https://10.0.0.5/hooks","eventTypes":["order.completed"]}' }),
  '#/paths/~1webhook-endpoints/post/responses/403/content/application~1json/examples/eventTypeNotSeen': () =>
    bodyOf({ method: 'POST', url: '/v1/webhook-endpoints', headers: { ...hooksCatalogue, ...json }, payload: '{"url":"https://10.0.0.5/hooks","eventTypes":["order.completed"]}' }),
  '#/paths/~1webhook-endpoints/post/responses/409/content/application~1json/examples/endpointLimit': () =>
    bodyOf({ method: 'POST', url: '/v1/webhook-endpoints', headers: { ...hooksOrders, ...json }, payload: '{"url":"https://10.0.0.5/hooks","eventTypes":["order.completed"]}' }),
  '#/paths/~1webhook-endpoints~1{endpointId}/patch/responses/403/content/application~1json/examples/insufficientScope': () =>
    bodyOf({ method: 'PATCH', url: '/v1/webhook-endpoints/1', headers: { ...readOnly, ...mergePatch }, payload: '{"enabled":true}' }),
  '#/paths/~1webhook-endpoints~1{endpointId}/patch/responses/403/content/application~1json/examples/eventTypeNotSeen': () =>
    bodyOf({ method: 'PATCH', url: '/v1/webhook-endpoints/1', headers: { ...hooksOrders, ...mergePatch }, payload: '{"eventTypes":["pet.created"]}' }),
  '#/components/responses/BadEndpointId/content/application~1json/examples/badEndpointId': () => bodyOf({ method: 'GET', url: '/v1/webhook-endpoints/abc', headers: t.auth }),
  '#/components/responses/EndpointNotFound/content/application~1json/examples/notFound': () => bodyOf({ method: 'GET', url: '/v1/webhook-endpoints/42', headers: t.auth }),
  '#/components/responses/KeyInactive/content/application~1json/examples/revoked': async () => {
    // Revoked while its rotation runs: authenticated by the cache before the revocation
    // commits, the rotation waits for the row, then finds the key revoked.
    const revoker = new pg.Client({ connectionString: t.url });
    await revoker.connect();
    try {
      await revoker.query('BEGIN');
      await revoker.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [inactive.id]);
      const answer = bodyOf({ method: 'POST', url: `/v1/api-keys/${inactive.id}/rotate`, headers: { authorization: `Bearer ${inactive.secret}` } });
      await within(WAIT_MS, async () => (await t.pool.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE api_keys SET key_hash%'")).rowCount === 1);
      await revoker.query('COMMIT');
      return await answer;
    } finally {
      await revoker.end();
    }
  },
  '#/components/responses/CategoryNameTaken/content/application~1json/examples/taken': async () => {
    // Category 3 is named "Dogs"; category 2 asks for the name in another case.
    await request({ method: 'PUT', url: '/v1/categories/3', headers: { ...t.auth, ...json }, payload: '{"name":"Dogs"}' });
    return bodyOf({ method: 'PUT', url: '/v1/categories/2', headers: { ...t.auth, ...json }, payload: '{"name":"dogs"}' });
  },
};

/** The rate limiter says when to retry ("42 seconds", "1 minute"): that depends on the moment. */
const timeless = (body: unknown): unknown => JSON.parse(JSON.stringify(body).replace(/retry in [^"]+/g, 'retry in …'));

describe('every Error example of the contract is what the service answers', () => {
  const examples = errorExamples();

  it('has a case here for every Error example of the contract', () => {
    expect(Object.keys(cases).sort()).toEqual([...examples.keys()].sort());
  });

  it.each([...examples.entries()])('%s', async (pointer, example) => {
    const produce = cases[pointer];
    expect(produce, `no case for ${pointer}`).toBeDefined();
    expect(timeless(await produce?.())).toEqual(timeless(example));
  });
});
