// Every append-ordered table is paged as its migration joined it (src/db/append-order.ts,
// docs/decisions/0001-append-order.md): the tables the repositories declare with
// `appendOrdered` are exactly those whose inserts draw their ids through the append order's
// trigger, each with the partition column its trigger names (none: paged whole). A page
// that asked the frontier for marks no writer takes would return rows above an uncommitted
// one.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { APPEND_ORDERED } from '../../src/db/append-order.js';
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
    expect(declared).toEqual(joined);
  } finally {
    await client.end();
  }
});
