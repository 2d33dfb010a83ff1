// Every instance reloads its key cache on NOTIFY api_keys_changed. A flush of last_used_at
// (each instance's, every API_KEY_USAGE_FLUSH_MS) writes no column the cache holds, so it
// must notify no one: otherwise every flush would make every instance reload every key.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helper.js';
import { within, WAIT_MS } from '../process.js';

let t: TestApp;
let listener: pg.Client;
/** The payloads received, markers left out. */
const notifications: string[] = [];
const markers = new Set<string>();

beforeAll(async () => {
  t = await buildTestApp({ env: { API_KEY_USAGE_FLUSH_MS: '100' } });
  listener = new pg.Client({ connectionString: t.url });
  await listener.connect();
  listener.on('notification', (message) => {
    if (message.payload !== undefined && message.payload.startsWith('marker-')) markers.add(message.payload);
    else notifications.push(message.payload ?? '');
  });
  await listener.query('LISTEN api_keys_changed');
});
afterAll(async () => {
  await listener?.end();
  await t?.close();
});

const lastUsed = async () => (await t.pool.query<{ at: Date | null }>('SELECT max(last_used_at) AS at FROM api_keys')).rows[0]?.at?.getTime() ?? 0;
/**
 * Resolves once every notification committed by now has arrived: PostgreSQL delivers them in
 * commit order, so they are all here once a marker committed after them is. The marker is
 * told apart by its payload: a notification committed before it may arrive while we wait.
 */
let marked = 0;
const drained = async () => {
  const marker = `marker-${++marked}`;
  await t.pool.query("SELECT pg_notify('api_keys_changed', $1)", [marker]);
  await within(WAIT_MS, async () => markers.has(marker));
};

describe('NOTIFY api_keys_changed', () => {
  it('is not sent by the flush of last_used_at', async () => {
    await drained();
    const before = notifications.length;
    for (let round = 0; round < 3; round++) {
      const requested = Date.now();
      expect((await t.api({ method: 'GET', url: '/v1/pets', headers: t.auth })).statusCode).toBe(200);
      await within(WAIT_MS, async () => (await lastUsed()) >= requested);
    }
    await drained();
    expect(notifications.length).toBe(before);
  });

  it('is sent by a change the cache depends on (a revocation, a rotation, a new key)', async () => {
    await drained();
    const before = notifications.length;
    const made = await t.api({ method: 'POST', url: '/v1/api-keys', headers: t.auth, payload: { name: 'notified', scopes: ['pets:read'] } });
    expect(made.statusCode).toBe(201);
    await within(WAIT_MS, async () => (await t.api({ method: 'GET', url: '/v1/pets?limit=1', headers: { authorization: `Bearer ${made.json().secret}` } })).statusCode === 200);
    // A key rotates its own secret.
    expect((await t.api({ method: 'POST', url: `/v1/api-keys/${made.json().id}/rotate`, headers: { authorization: `Bearer ${made.json().secret}` }, payload: {} })).statusCode).toBe(200);
    expect((await t.api({ method: 'POST', url: `/v1/api-keys/${made.json().id}/revoke`, headers: t.auth })).statusCode).toBe(200);
    await drained();
    expect(notifications.length - before).toBe(3);
  });
});
