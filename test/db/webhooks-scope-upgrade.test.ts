// The upgrade from 1.3: the sixth scope, webhooks:manage (migration 1763700000013), goes to
// the keys that held every scope of 1.3 (the development key, keys made without --scopes,
// keys from before scopes), and to no other key. The keys keep everything else.
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../src/api-keys/verifier.js';
import { migrate } from '../../src/db/migrate.js';
import { buildTestApp, createTestDatabase, type TestApp } from '../helper.js';

const LAST_OF_1_3 = '1763700000012_api-key-scopes';
const ALL_OF_1_3 = ['pets:read', 'pets:write', 'orders:read', 'orders:write', 'keys:manage'];

let database: { url: string; drop: () => Promise<void> };
let t: TestApp;
const made: { scopes: string[]; id: number; key: string }[] = [];

beforeAll(async () => {
  database = await createTestDatabase({ empty: true });
  const applied = await migrate(database.url, { info: () => {} }, { count: 13 });
  expect(applied.at(-1)).toBe(LAST_OF_1_3);
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  try {
    const given: (string[] | undefined)[] = [undefined, ALL_OF_1_3, [...ALL_OF_1_3].reverse(), ['pets:read'], ['pets:read', 'pets:write', 'orders:read', 'orders:write'], ['keys:manage']];
    for (const scopes of given) {
      const key = generateApiKey();
      const { rows } =
        scopes === undefined
          ? await db.query<{ id: string; scopes: string[] }>("INSERT INTO api_keys (name, key_hash) VALUES ('default', $1) RETURNING id, scopes", [hashApiKey(key)])
          : await db.query<{ id: string; scopes: string[] }>("INSERT INTO api_keys (name, key_hash, scopes) VALUES ('scoped', $1, $2) RETURNING id, scopes", [hashApiKey(key), scopes]);
      made.push({ scopes: rows[0]?.scopes ?? [], id: Number(rows[0]?.id), key });
    }
  } finally {
    await db.end();
  }
  expect(await migrate(database.url, { info: () => {} })).toContain('1763700000013_events');
  t = await buildTestApp({ url: database.url, env: { RATE_LIMIT_MAX: '100000' } });
}, 120_000);

afterAll(async () => {
  await t?.close();
  await database?.drop();
});

it('keys that held every scope of 1.3 hold webhooks:manage too; other keys hold what they held', async () => {
  for (const { scopes, id } of made) {
    const stored = (await t.pool.query<{ scopes: string[] }>('SELECT scopes FROM api_keys WHERE id = $1', [id])).rows[0]?.scopes ?? [];
    const wasEvery = ALL_OF_1_3.every((s) => scopes.includes(s));
    expect(stored.sort(), `key ${id} with ${scopes.join(',')}`).toEqual((wasEvery ? [...scopes, 'webhooks:manage'] : scopes).sort());
  }
});

it('as the API shows them: getApiKey answers the six scopes in the contract\'s order, or the key\'s own', async () => {
  const [first] = made;
  const answer = await t.api({ method: 'GET', url: `/v1/api-keys/${made[3]?.id}`, headers: { authorization: `Bearer ${first?.key}` } });
  expect(answer.statusCode).toBe(200);
  expect(answer.json().scopes).toEqual(['pets:read']);
  const every = await t.api({ method: 'GET', url: `/v1/api-keys/${made[2]?.id}`, headers: { authorization: `Bearer ${first?.key}` } });
  expect(every.json().scopes).toEqual([...ALL_OF_1_3, 'webhooks:manage']);
});

it('a key made after the upgrade without scopes holds all six', async () => {
  const { rows } = await t.pool.query<{ scopes: string[] }>("INSERT INTO api_keys (name, key_hash) VALUES ('new', $1) RETURNING scopes", [hashApiKey(generateApiKey())]);
  expect(rows[0]?.scopes).toEqual([...ALL_OF_1_3, 'webhooks:manage']);
});
