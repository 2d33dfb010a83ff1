// SIGTERM under load: the service stops accepting connections, finishes what is in
// flight, closes the pool and exits 0; every pet acknowledged with 201 is stored.
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase } from '../helper.js';
import { apikey, startServer, type ServerProcess } from '../process.js';
import { createWhileStopping, undrained } from '../support/drain.js';

let database: { url: string; drop: () => Promise<void> };
let server: ServerProcess;
let key: string;

beforeAll(async () => {
  database = await createTestDatabase();
  key = (await apikey(['create', 'shutdown'], database.url)).stdout.trim();
  server = await startServer({ DATABASE_URL: database.url, RATE_LIMIT_MAX: '1000000' });
}, 180_000);
afterAll(async () => database.drop());

it('SIGTERM while creates are in flight: none fails, exit 0, every 201 is stored', async () => {
  const outcomes = await createWhileStopping({ url: server.url, key, workers: 16, tag: 'shutdown', before: 64, stop: () => server.child.kill('SIGTERM') });
  const code = await server.exited;

  expect(code).toBe(0);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const rows = (await client.query<{ id: string; name: string }>('SELECT id, name FROM pets')).rows;
  await client.end();
  // Every request the service saw was answered 201, including those it finished draining;
  // the others never reached it (test/support/drain.ts).
  expect(undrained(outcomes, server.output(), new Set(rows.map((r) => r.name)))).toEqual([]);
  const answered = outcomes.filter((o) => o.status !== undefined);
  const drained = answered.filter((o) => o.answeredAfterStop && !o.sentAfterStop).length;
  expect(drained).toBeGreaterThan(0);

  const stored = new Set(rows.map((r) => Number(r.id)));
  const acknowledged = answered.map((o) => o.id as number);
  expect(acknowledged.length).toBeGreaterThanOrEqual(64);
  for (const id of acknowledged) expect(stored.has(id)).toBe(true);
  console.log(`shutdown: ${acknowledged.length} creates acknowledged and stored, ${drained} of them finished after SIGTERM, ${outcomes.length - answered.length} connections refused or reset unseen`);
}, 120_000);
