// Two service processes on one database share the deliveries, and in normal operation no
// event is delivered twice: three endpoints, each with its receiver on 127.0.0.1, and pets
// created through both instances; each receiver counts every webhook-id it gets, and the
// endpoints' leases, watched while the work goes on, are taken by both instances. And one
// key's endpoints that hang hold at most 4 attempts at once across both instances.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePool, createPool } from '../../src/db/pool.js';
import { createApiKey, createTestDatabase } from '../helper.js';
import { startServer, within, WAIT_MS, type ServerProcess } from '../process.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const ENV = { RATE_LIMIT_MAX: '10000000', MAX_EVENT_LOOP_DELAY_MS: '0', DB_CONNECT_TIMEOUT_MS: '10000', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '50' };
const PETS = 40;

let drop: () => Promise<void>;
let db: ReturnType<typeof createPool>;
let key: string;
let servers: ServerProcess[] = [];
// The pair that makes one attempt at a time (the first test's).
const single: ServerProcess[] = [];
let databaseUrl = '';
const receivers: Receiver[] = [];

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  databaseUrl = database.url;
  db = createPool({ DATABASE_URL: database.url, DB_POOL_MAX: 2, DB_CONNECT_TIMEOUT_MS: 10_000, DB_STATEMENT_TIMEOUT_MS: 60_000 });
  key = (await createApiKey(db, 'webhooks')).key;
  for (let i = 0; i < 3; i++) receivers.push(await startReceiver());
}, 120_000);
afterAll(async () => {
  await Promise.all([...servers, ...single].map((s) => s.stop('SIGKILL')));
  await Promise.all(receivers.map((r) => r.close()));
  if (db) await closePool(db);
  await drop?.();
});

async function post(server: ServerProcess, path: string, body: unknown, as = key): Promise<void> {
  const response = await fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${as}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBe(201);
}

describe('two instances delivering', () => {
  it('deliver each event once to each endpoint, and both take part', async () => {
    // Each instance makes one attempt at a time here, and every receiver takes 100 ms to
    // answer: while one instance delivers to one endpoint, the other finds the two others
    // free, so both take part whatever the scheduler does (with 16 attempts each, one
    // instance could lease all three endpoints at every poll on a busy machine).
    const [a, b] = (await Promise.all([startServer({ ...ENV, WEBHOOK_CONCURRENCY: '1', DATABASE_URL: databaseUrl }, 90_000), startServer({ ...ENV, WEBHOOK_CONCURRENCY: '1', DATABASE_URL: databaseUrl }, 90_000)])) as [ServerProcess, ServerProcess];
    single.push(a, b);
    for (const r of receivers) r.answer(async () => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      return { status: 200 };
    });
    for (const [i, r] of receivers.entries()) await post(i % 2 ? b : a, '/v1/webhook-endpoints', { url: r.url, eventTypes: ['pet.created'] });
    await Promise.all(Array.from({ length: PETS }, (_, i) => post(i % 2 ? b : a, '/v1/pets', { name: `Shared ${i}`, categoryId: 1 })));
    // Which instances hold leases while the work goes on (each logs its lease token).
    const tokens = new Set<string>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        for (const row of (await db.query<{ lease_token: string }>('SELECT lease_token FROM webhook_endpoints WHERE lease_until > now()')).rows) tokens.add(row.lease_token);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    await within(WAIT_MS, async () => receivers.every((r) => new Set(r.received.map((got) => got.headers['webhook-id'])).size === PETS), 50);
    watching = false;
    await watcher;
    const tokenOf = (server: ServerProcess) => (/"leaseToken":"([0-9a-f-]+)"/.exec(server.output()) as RegExpExecArray)[1] as string;
    console.log(`leases seen: ${[...tokens].map((t) => (t === tokenOf(a) ? 'a' : t === tokenOf(b) ? 'b' : t)).join(', ')}`);
    expect(tokens).toEqual(new Set([tokenOf(a), tokenOf(b)]));
    // Settle: anything sent twice would arrive by now (every attempt is answered at once).
    await new Promise((resolve) => setTimeout(resolve, 2000));
    for (const r of receivers) {
      const ids = r.received.map((got) => String(got.headers['webhook-id']));
      expect(ids).toHaveLength(PETS);
      expect(new Set(ids).size).toBe(PETS);
    }
    const attempts = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries')).rows[0]?.n;
    expect(attempts).toBe(PETS * receivers.length);
    await Promise.all(single.map((s) => s.stop('SIGTERM')));
  }, 240_000);

  it("hold at most 4 attempts in flight for one key's endpoints, across both instances", async () => {
    // A pair with the default 16 attempts at a time each, so that only the key's limit holds them.
    servers = await Promise.all([startServer({ ...ENV, DATABASE_URL: databaseUrl }, 90_000), startServer({ ...ENV, DATABASE_URL: databaseUrl }, 90_000)]);
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const holding = (await createApiKey(db, 'holding')).key;
    // Both instances know the new key (their key caches reload on NOTIFY).
    for (const server of [a, b]) await within(WAIT_MS, async () => (await fetch(`${server.url}/v1/webhook-endpoints`, { headers: { authorization: `Bearer ${holding}` } })).status === 200, 50);
    const holders: Receiver[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await startReceiver();
      receivers.push(r);
      holders.push(r);
      r.answer(() => ({ hold: true }));
      await post(i % 2 ? b : a, '/v1/webhook-endpoints', { url: r.url, eventTypes: ['pet.created'] }, holding);
    }
    await post(a, '/v1/pets', { name: 'Held', categoryId: 1 });
    const reached = () => holders.filter((r) => r.received.some((got) => JSON.parse(got.body).data?.name === 'Held')).length;
    await within(WAIT_MS, async () => reached() >= 4, 20);
    // Both instances have free slots (16 each) and poll every 50 ms: the two others wait for
    // one of the key's 4 to end (the 10 s timeout).
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(reached()).toBe(4);
    const leased = (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_endpoints ep JOIN api_keys k ON k.id = ep.api_key_id WHERE k.name = 'holding' AND ep.lease_until > now()")).rows[0]?.n;
    expect(leased).toBe(4);
  }, 150_000);
});
