// The append order (src/db/append-order.ts, docs/decisions/0001-append-order.md), in the
// database, with each step of the writers placed by hand:
// - every append-ordered table is paged as its migration joined it: the tables the
//   repositories declare with `appendOrdered` are exactly those whose inserts draw their ids
//   through the append order's trigger, each with the partition column its trigger names
//   (none: paged whole). A page that asked the frontier for marks no writer takes would
//   return rows above an uncommitted one;
// - a row drawn after a writer that is still open is not final, also when that writer's
//   transaction id is above every ended one (a snapshot does not list it) and when the later
//   row was written in REPEATABLE READ (its snapshot predates the writer), and when the
//   writer drew between two rows of one statement.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { APPEND_ORDERED, appendOrdered } from '../../src/db/append-order.js';
import { createTestDatabase } from '../helper.js';

const src = fileURLToPath(new URL('../../src/', import.meta.url));

let db: { url: string; drop: () => Promise<void> };
beforeAll(async () => {
  db = await createTestDatabase();
  // Every module that declares a table (the declarations run when a module is loaded).
  const declaring = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && readFileSync(path.join(src, file), 'utf8').includes('appendOrdered('));
  for (const file of declaring) await import(pathToFileURL(path.join(src, file)).href);
});
afterAll(async () => {
  await db?.drop();
});

it('declares each append-ordered table of the database once, with the partition column of its trigger', async () => {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ table: string; partition: string | null }>(
      `SELECT c.relname AS table, nullif(split_part(encode(t.tgargs, 'escape'), '\\000', 1), '') AS partition
       FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
       WHERE p.proname = 'append_order_assign' ORDER BY 1`,
    );
    const joined = Object.fromEntries(rows.map((row) => [row.table, row.partition ?? 'whole']));
    const declared = Object.fromEntries([...APPEND_ORDERED].sort(([a], [b]) => a.localeCompare(b)).map(([table, column]) => [table, column ?? 'whole']));
    expect(Object.keys(joined).length).toBeGreaterThanOrEqual(6);
    expect(declared, "declare each table the migrations joined with appendOrdered('<table>'[, '<column>']) in its repository (docs/contract.md, Adding a table)").toEqual(joined);
  } finally {
    await client.end();
  }
});

describe('a row drawn after an open writer', () => {
  const clients: pg.Client[] = [];
  const connect = async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    clients.push(client);
    return client;
  };
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.end()));
  });
  /** Waits for a condition, 30 s at most. */
  const until = async (condition: () => Promise<boolean>) => {
    for (const end = Date.now() + 30_000; !(await condition()); ) {
      if (Date.now() > end) throw new Error('the condition did not hold within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const insert = async (client: pg.Client, name: string) => Number((await client.query<{ id: string }>('INSERT INTO pets (name, category_id) VALUES ($1, 1) RETURNING id', [name])).rows[0]?.id);
  /** Whether each pet is final for a fresh reader's snapshot, as listPets decides it. */
  const final = async (reader: pg.Client, ids: number[]) =>
    (await reader.query<{ id: string; final: boolean }>(`SELECT id, ${appendOrdered('pets').isFinal()} AS final FROM pets WHERE id = ANY ($1) ORDER BY id`, [ids])).rows.map((r) => r.final);
  /**
   * Looks until the rows expected final are, each look finding every other row held. A
   * transaction of another database (the suite's other files) that ends while the reader
   * looks holds back, for that look only, every row drawn after it: transaction ids and
   * snapshots span the server, so a final row may read as held once, never the other way.
   */
  const settles = async (reader: pg.Client, ids: number[], expected: boolean[]) =>
    until(async () => {
      const seen = await final(reader, ids);
      expect(seen.map((isFinal, n) => isFinal && !expected[n])).not.toContain(true);
      expect(seen).toHaveLength(expected.length);
      return seen.every((isFinal, n) => isFinal === expected[n]);
    });

  it.each([
    ['the later writer in READ COMMITTED, begun before it (the open one has the newest transaction id)', 'BEGIN'],
    ['the later writer in REPEATABLE READ, its snapshot taken before the open one began', 'BEGIN ISOLATION LEVEL REPEATABLE READ'],
  ])('is not final until the writer ends: %s', async (_, begin) => {
    const [later, open, reader] = [await connect(), await connect(), await connect()];
    await later.query(begin);
    await later.query('SELECT pg_current_xact_id()');
    await open.query('BEGIN');
    const below = await insert(open, 'open');
    const above = await insert(later, 'later');
    await later.query('COMMIT');
    expect(above).toBeGreaterThan(below);
    // The open writer's id is above every transaction that has ended but its own advance.
    expect(await final(reader, [below, above])).toEqual([false]);
    await open.query('COMMIT');
    await settles(reader, [below, above], [true, true]);
  });

  it('is not final when the writer drew between two rows of one statement (each row reads a snapshot taken after its own id)', async () => {
    const [gate, slow, open, reader] = [await connect(), await connect(), await connect(), await connect()];
    await gate.query('SELECT pg_advisory_lock(4242)');
    // The slow statement draws its first row, then waits at its second for the gate.
    const rows = slow.query<{ id: string }>(
      `INSERT INTO pets (name, category_id) SELECT 'slow ' || g, 1 FROM generate_series(1, 3) AS g
       CROSS JOIN LATERAL (SELECT CASE WHEN g = 2 THEN pg_advisory_lock_shared(4242) END) AS waits RETURNING id`,
    );
    await until(async () => (await reader.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242 AND NOT granted")).rows[0]?.n === 1);
    await open.query('BEGIN');
    const between = await insert(open, 'open');
    await gate.query('SELECT pg_advisory_unlock(4242)');
    const ids = (await rows).rows.map((r) => Number(r.id));
    expect(ids[0]).toBeLessThan(between);
    expect(ids[1]).toBeGreaterThan(between);
    await settles(reader, ids, [true, false, false]);
    await open.query('COMMIT');
    await settles(reader, [...ids, between], [true, true, true, true]);
  });

  it('is final once the writer rolls back', async () => {
    const [later, open, reader] = [await connect(), await connect(), await connect()];
    await later.query('BEGIN');
    await later.query('SELECT pg_current_xact_id()');
    await open.query('BEGIN');
    await insert(open, 'open');
    const above = await insert(later, 'later');
    await later.query('COMMIT');
    expect(await final(reader, [above])).toEqual([false]);
    await open.query('ROLLBACK');
    await settles(reader, [above], [true]);
  });
});
