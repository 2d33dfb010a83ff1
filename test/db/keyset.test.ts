// Keyset pages in any order (src/db/keyset.ts, through the base of simple tables'
// repositories, src/db/table.ts): walked page after page at every size, each order gives
// every row exactly once, in the order a sort of all rows gives, ties broken by id.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Key } from '../../src/db/keyset.js';
import { tableRepository } from '../../src/db/table.js';
import { closePool, createTestDatabase, testPool } from '../helper.js';

interface Row {
  id: number;
  name: string;
  score: number;
}

let db: { url: string; drop: () => Promise<void> };
let pool: pg.Pool;
beforeAll(async () => {
  db = await createTestDatabase({ empty: true });
  pool = testPool(db.url, 2);
  await pool.query('CREATE TABLE things (id bigint PRIMARY KEY, name text NOT NULL, score int NOT NULL)');
  await pool.query('CREATE INDEX things_name ON things (name, id)');
  // Few names and scores for 300 rows: most rows tie with others on every sort column.
  await pool.query(`INSERT INTO things SELECT i, chr(65 + (i * 7) % 5) || chr(97 + (i * 3) % 2), (i * 13) % 4 FROM generate_series(1, 300) AS i`);
  await pool.query('ANALYZE things');
});
afterAll(async () => {
  if (pool) await closePool(pool);
  await db?.drop();
});

const things = () =>
  tableRepository<Row, Row>(pool, {
    table: 'things',
    columns: ['id', 'name', 'score'],
    toResource: (row) => ({ id: Number(row.id), name: row.name, score: row.score }),
    orders: {
      name: [{ sql: 'name' }],
      nameDesc: [{ sql: 'name', desc: true }],
      // Mixed directions: the continuation is written out, term by term.
      scoreDescName: [{ sql: 'score', desc: true }, { sql: 'name' }],
    },
  });

const sorted: Record<string, (a: Row, b: Row) => number> = {
  id: (a, b) => a.id - b.id,
  name: (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id),
  nameDesc: (a, b) => (a.name > b.name ? -1 : a.name < b.name ? 1 : b.id - a.id),
  scoreDescName: (a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : b.id - a.id),
};

describe('keyset pages', () => {
  it.each(Object.keys(sorted))('in %s order, every row exactly once, in order, at every page size', async (order) => {
    const repository = things();
    const all = (await pool.query<Row>('SELECT id::int, name, score FROM things')).rows;
    const want = [...all].sort(sorted[order]).map((r) => r.id);
    for (const limit of [1, 7, 50, 299, 300, 301]) {
      const seen: number[] = [];
      let after: Key | undefined;
      let pages = 0;
      do {
        const page = await repository.list(after, limit, order);
        expect(page.items.length).toBeLessThanOrEqual(limit);
        seen.push(...page.items.map((r) => r.id));
        after = page.next;
        pages++;
      } while (after && pages < 400);
      expect(seen, `limit ${limit}`).toEqual(want);
    }
  });
});
