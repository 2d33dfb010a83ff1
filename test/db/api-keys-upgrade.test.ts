// The upgrade from 1.2 with keys in use: a database at the 1.2 schema (migrations up to
// 1763700000008), keys and orders written as 1.2 wrote them (a key is its hash, nothing
// more), then every migration to the head and the app. Every old key works with every
// scope (the contract's x-scopes-of-earlier-credentials), still sees its own orders and
// only those, and shows no prefix until it is rotated.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../src/api-keys/verifier.js';
import { migrate } from '../../src/db/migrate.js';
import { specDocument } from '../contract.js';
import { buildTestApp, createTestDatabase, type ApiRequest, type TestApp } from '../helper.js';
import { within, WAIT_MS } from '../process.js';
import { everyOperation } from '../support/operation-requests.js';

const LAST_OF_1_2 = '1763700000008_append-order';
const json = { 'content-type': 'application/json' };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

let database: { url: string; drop: () => Promise<void> };
let t: TestApp;
const old: { name: string; key: string; id: number; orders: number[] }[] = [];
let revokedKey: string;

beforeAll(async () => {
  database = await createTestDatabase({ empty: true });
  const applied = await migrate(database.url, { info: () => {} }, { count: 9 });
  expect(applied.at(-1)).toBe(LAST_OF_1_2);
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  try {
    // As 1.2's CLI and service wrote them: the hash, the name; nothing else exists yet.
    for (const name of ['billing', 'storefront']) {
      const key = generateApiKey();
      const id = Number((await db.query<{ id: string }>('INSERT INTO api_keys (name, key_hash) VALUES ($1, $2) RETURNING id', [name, hashApiKey(key)])).rows[0]?.id);
      old.push({ name, key, id, orders: [] });
    }
    revokedKey = generateApiKey();
    await db.query("INSERT INTO api_keys (name, key_hash, revoked_at) VALUES ('gone', $1, now())", [hashApiKey(revokedKey)]);
    // Each key holds two orders, placed as 1.2 placed them (one statement: pet pending, order stored).
    for (const holder of old) {
      for (let i = 0; i < 2; i++) {
        const { rows } = await db.query<{ id: string }>(
          `WITH pet AS (INSERT INTO pets (name, category_id, status) VALUES ($2, 1, 'pending') RETURNING id)
           INSERT INTO orders (api_key_id, pet_id, status, expires_at) SELECT $1, id, 'placed', now() + interval '1 hour' FROM pet RETURNING id`,
          [holder.id, `${holder.name} ${i}`],
        );
        holder.orders.push(Number(rows[0]?.id));
      }
    }
  } finally {
    await db.end();
  }
  const upgraded = await migrate(database.url, { info: () => {} });
  expect(upgraded).toContain('1763700000012_api-key-scopes');
  t = await buildTestApp({ url: database.url, env: { RATE_LIMIT_MAX: '100000', RATE_LIMIT_ANONYMOUS_MAX: '100000' } });
}, 120_000);

afterAll(async () => {
  await t?.close();
  await database?.drop();
});

// A request to each operation of the contract (test/support/operation-requests.ts).
const REQUESTS = Object.fromEntries(everyOperation);

describe('keys issued by 1.2, after the upgrade', () => {
  it('hold every scope: the contract\'s x-scopes-of-earlier-credentials, which the migration gave them', async () => {
    const earlier = specDocument.components.securitySchemes.bearerAuth['x-scopes-of-earlier-credentials'];
    expect(earlier).toEqual(specDocument.components.schemas.Scope.enum);
    for (const { id, name } of old) {
      const key = await t.api({ method: 'GET', url: `/v1/api-keys/${id}`, headers: t.auth });
      expect(key.json()).toMatchObject({ id, name, scopes: earlier });
      // Only a hash of the secret was ever stored: no prefix until it is rotated.
      expect(key.json()).not.toHaveProperty('prefix');
    }
  });

  it.each(Object.keys(REQUESTS))('%s: every old key is served (neither 401 nor 403)', async (operationId) => {
    for (const { key, name } of old) {
      const request = REQUESTS[operationId] as ApiRequest;
      const response = await t.api({ ...request, headers: { ...request.headers, ...bearer(key) } });
      // rotateApiKey here names another key, which no key may rotate: refused for that, never for a scope.
      if (operationId === 'rotateApiKey') expect(response.json().code, `${name}: ${response.body}`).toBe('forbidden');
      else expect([401, 403], `${name}: ${response.body}`).not.toContain(response.statusCode);
    }
  });

  it('each still sees its own orders, and only those', async () => {
    for (const [i, holder] of old.entries()) {
      const listed = await t.api({ method: 'GET', url: '/v1/store/orders', headers: bearer(holder.key) });
      expect(listed.json().map((o: { id: number }) => o.id)).toEqual(holder.orders);
      for (const id of holder.orders) expect((await t.api({ method: 'GET', url: `/v1/store/orders/${id}`, headers: bearer(holder.key) })).statusCode).toBe(200);
      const other = old[(i + 1) % old.length] as (typeof old)[number];
      expect((await t.api({ method: 'GET', url: `/v1/store/orders/${other.orders[0]}`, headers: bearer(holder.key) })).statusCode).toBe(404);
    }
  });

  it('a key revoked before the upgrade stays refused', async () => {
    expect((await t.api({ method: 'GET', url: '/v1/pets', headers: bearer(revokedKey) })).statusCode).toBe(401);
  });

  it('rotated, an old key gets a prefix and keeps its orders; keys made now continue its ids', async () => {
    const [holder] = old as [(typeof old)[number]];
    const rotated = await t.api({ method: 'POST', url: `/v1/api-keys/${holder.id}/rotate`, headers: bearer(holder.key), payload: { graceSeconds: 0 } });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().prefix).toBe(rotated.json().secret.slice(0, 8));
    const secret = rotated.json().secret as string;
    await within(WAIT_MS, async () => (await t.api({ method: 'GET', url: '/v1/store/orders', headers: bearer(secret) })).statusCode === 200);
    const listed = await t.api({ method: 'GET', url: '/v1/store/orders', headers: bearer(secret) });
    expect(listed.json().map((o: { id: number }) => o.id)).toEqual(holder.orders);
    const made = await t.api({ method: 'POST', url: '/v1/api-keys', headers: { ...json, ...t.auth }, payload: '{"name":"after","scopes":["pets:read"]}' });
    const highest = Number((await t.pool.query<{ id: string }>("SELECT max(id) AS id FROM api_keys WHERE name <> 'after'")).rows[0]?.id);
    expect(made.json().id).toBeGreaterThan(highest);
  });
});
