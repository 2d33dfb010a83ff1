// An import survives a SIGKILL of the instance running it: two service processes on one
// database, an import submitted to the first and killed there mid-way; the second takes it
// up from its last committed batch. Judged by what the clients were answered and what the
// database holds: every valid row of the file is a pet exactly once, none is lost, and the
// events feed has exactly one pet.created per imported pet and one import.finished.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { closePool, createApiKey, createTestDatabase, testPool } from '../helper.js';
import { startServer, within, WAIT_MS, type ServerProcess } from '../process.js';
import type pg from 'pg';

const ROWS = 40_000;
/** Every 97th row is refused (a categoryId that is not a number). */
const bad = (i: number) => i % 97 === 0;
const VALID = Array.from({ length: ROWS }, (_, i) => i).filter((i) => !bad(i)).length;

let db: pg.Pool;
let drop: () => Promise<void>;
let key: string;
let first: ServerProcess;
let second: ServerProcess;
const env = (url: string) => ({
  DATABASE_URL: url,
  RATE_LIMIT_MAX: '10000000',
  MAX_EVENT_LOOP_DELAY_MS: '0',
  DB_CONNECT_TIMEOUT_MS: '10000',
  // Small batches, so that the kill lands mid-import; the second instance looks often.
  IMPORT_BATCH_ROWS: '250',
  IMPORT_POLL_MS: '100',
});

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  db = testPool(database.url, 2);
  key = (await createApiKey(db, 'crash')).key;
  [first, second] = await Promise.all([startServer(env(database.url), 90_000), startServer(env(database.url), 90_000)]);
}, 120_000);
afterAll(async () => {
  await Promise.all([first, second].map((s) => s?.stop('SIGKILL')));
  await closePool(db);
  await drop();
});

const auth = () => ({ authorization: `Bearer ${key}` });
const importOn = async (server: ServerProcess, id: number) => (await fetch(`${server.url}/v1/pet-imports/${id}`, { headers: auth() })).json() as Promise<{ status: string; rowsImported: number; rowsRefused: number; rowsRead: number }>;

it('an instance killed mid-import: the other finishes it, every valid row a pet once, one pet.created each, one import.finished', async () => {
  const lines = ['name,categoryId', ...Array.from({ length: ROWS }, (_, i) => `crash-${i},${bad(i) ? 'x' : 1 + (i % 40)}`)];
  const submitted = await fetch(`${first.url}/v1/pet-imports?errorPolicy=skip`, { method: 'POST', headers: { ...auth(), 'content-type': 'text/csv' }, body: lines.join('\n') });
  expect(submitted.status).toBe(202);
  const { id } = (await submitted.json()) as { id: number };

  // Killed once the first instance has committed some batches, not all.
  await within(WAIT_MS, async () => (await importOn(second, id)).rowsImported > 0);
  await first.stop('SIGKILL');
  const atKill = await importOn(second, id);
  expect(atKill.status).toBe('running');
  expect(atKill.rowsImported).toBeLessThan(VALID);

  let done = atKill;
  await within(WAIT_MS, async () => {
    done = await importOn(second, id);
    return done.status !== 'running';
  });
  expect(done).toMatchObject({ status: 'succeeded', rowsRead: ROWS, rowsImported: VALID, rowsRefused: ROWS - VALID });

  const pets = await db.query<{ name: string; n: number }>("SELECT name, count(*)::int AS n FROM pets WHERE name LIKE 'crash-%' GROUP BY name");
  expect(pets.rows.filter((r) => r.n !== 1)).toEqual([]);
  const expected = new Set(Array.from({ length: ROWS }, (_, i) => i).filter((i) => !bad(i)).map((i) => `crash-${i}`));
  expect(pets.rows.length).toBe(expected.size);
  expect(pets.rows.every((r) => expected.has(r.name))).toBe(true);

  const events = await db.query<{ type: string; n: number }>(
    "SELECT type, count(*)::int AS n FROM events WHERE type = 'import.finished' OR (type = 'pet.created' AND data::json->>'name' LIKE 'crash-%') GROUP BY type ORDER BY type",
  );
  expect(events.rows).toEqual([
    { type: 'import.finished', n: 1 },
    { type: 'pet.created', n: VALID },
  ]);
}, 120_000);
