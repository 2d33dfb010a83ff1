// Every statement that locks several pets locks them in id order (src/catalogue/pets.ts,
// PET_STATUS_CHANGES), so that two never wait for each other in a circle: a circle ends in a
// deadlock, which PostgreSQL breaks by failing one of them (a 500 for its client). An UPDATE
// locks rows in the order its scan meets them, and a bitmap scan meets them in the table's
// order, not by id. Here the higher id lies first in the table, a bitmap scan is the only
// plan allowed, and another transaction holds the higher id: the statement, waiting for it,
// must already hold the lower one.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PET_STATEMENTS, PET_STATUS_CHANGES } from '../../src/catalogue/pets.js';
import { createTestDatabase } from '../helper.js';
import { within, WAIT_MS } from '../process.js';

let db: { url: string; drop: () => Promise<void> };
let holder: pg.Client;
let statement: pg.Client;
let probe: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase();
  holder = new pg.Client({ connectionString: db.url });
  statement = new pg.Client({ connectionString: db.url });
  probe = new pg.Client({ connectionString: db.url });
  await Promise.all([holder.connect(), statement.connect(), probe.connect()]);
});
afterAll(async () => {
  await holder?.end();
  await statement?.end();
  await probe?.end();
  await db?.drop();
});

/**
 * Two pets of `status`, the higher id first in the table: the lower one is rewritten after
 * it, with an indexed column changed, so that no index reaches it through its first place
 * (a HOT update would keep it there).
 */
async function twoPets(status: string): Promise<{ low: number; high: number }> {
  const insert = async () => Number((await holder.query<{ id: string }>("INSERT INTO pets (name, category_id, status) VALUES ('x', 1, $1) RETURNING id", [status])).rows[0]?.id);
  const low = await insert();
  const high = await insert();
  await holder.query('UPDATE pets SET category_id = 2 WHERE id = $1', [low]);
  const [first] = (await holder.query<{ id: string }>('SELECT id FROM pets WHERE id = ANY ($1) ORDER BY ctid LIMIT 1', [[low, high]])).rows;
  expect(Number(first?.id)).toBe(high);
  return { low, high };
}

describe('statements that lock several pets lock them in id order, whatever the plan', () => {
  it.each([
    ['placing orders (PET_STATUS_CHANGES.hold)', 'available', (ids: number[]) => ({ text: PET_STATUS_CHANGES.hold('$1::bigint[]'), values: [ids] })],
    ['closing orders (PET_STATUS_CHANGES.release)', 'pending', (ids: number[]) => ({ text: PET_STATUS_CHANGES.release('$1::bigint[]', "'{}'::bigint[]"), values: [ids] })],
    ['batched removals (pets-remove-many)', 'available', (ids: number[]) => ({ text: PET_STATEMENTS.removeMany.text, values: [ids.map((_, i) => i), ids, ids.map(() => null)] })],
  ] as const)('%s', async (_, status, sql) => {
    const { low, high } = await twoPets(status);
    await holder.query('BEGIN');
    await holder.query('SELECT FROM pets WHERE id = $1 FOR UPDATE', [high]);
    await statement.query('BEGIN');
    await statement.query('SET LOCAL enable_indexscan = off');
    await statement.query('SET LOCAL enable_seqscan = off');
    const running = statement.query(sql([high, low]));
    try {
      await within(WAIT_MS, async () => (await waitingForLocks()) === 1, 20);
      // Waiting for the higher id, the statement already holds the lower one.
      await expect(holder.query('SELECT FROM pets WHERE id = $1 FOR UPDATE NOWAIT', [low])).rejects.toMatchObject({ code: '55P03' });
    } finally {
      await holder.query('ROLLBACK');
      await running.catch(() => undefined);
      await statement.query('ROLLBACK');
    }
  });
});

/** How many sessions of the database wait for a lock. */
async function waitingForLocks(): Promise<number> {
  return (await probe.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0]?.n ?? 0;
}
