// The categories table: a name given to a `categoryId`, on the base every simple table's
// repository starts from (src/db/table.ts). The ids are the clients', so pages are plain
// keyset pages by id (no append order: docs/decisions/0001-append-order.md is for ids the
// service assigns). Pets do not reference this table, and nothing here touches pets.
//
// Categories read and write the primary only: the 409 of a put names the category that
// holds the name, and a client that reads that category next must find it, which a lagging
// replica could not promise. putCategory takes no Idempotency-Key (a PUT is idempotent by
// itself), so each statement commits on its own, and a unique violation leaves nothing.
import type { components } from '../../generated/v1.js';
import { query, statement, type Queryable } from '../db/query.js';
import { tableRepository, tableStatements } from '../db/table.js';

export type Category = components['schemas']['Category'];

interface CategoryRow {
  id: number;
  name: string;
}

/** The unique index on lower(name) (migrations/1763700000010_create-categories.sql). */
export const NAME_INDEX = 'categories_name_unique';

const CATEGORIES = { table: 'categories', columns: ['id', 'name'], toResource: (row: CategoryRow): Category => ({ id: row.id, name: row.name }) } as const;
const TABLE_STATEMENTS = tableStatements<CategoryRow>(CATEGORIES);

export const CATEGORY_STATEMENTS = {
  get: TABLE_STATEMENTS.get,
  list: TABLE_STATEMENTS.list,
  remove: TABLE_STATEMENTS.remove,
  // Names the id, or renames it: `created` is true when the row was inserted (an updated
  // row's xmax is the updating transaction). Puts of one id take turns (a transaction-level
  // advisory lock keyed by the id, taken before the row is written): two inserts of one new
  // id would otherwise each hold one of its two index entries (the id's, the name's) and
  // deadlock, and under load every retry can deadlock again. The next in turn finds the row
  // (ON CONFLICT checks the index with the latest committed rows) and renames it.
  put: statement<CategoryRow & { created: boolean }>(
    'categories-put',
    'INSERT INTO categories (id, name) SELECT $1, $2 FROM (SELECT pg_advisory_xact_lock($1::bigint)) AS in_turn ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name RETURNING id, name, (xmax = 0) AS created',
  ),
  // The category that holds a name, ignoring case (through NAME_INDEX).
  holder: statement<CategoryRow>('categories-holder', 'SELECT id, name FROM categories WHERE lower(name) = lower($1)'),
};

export type Put =
  | { outcome: 'created' | 'renamed'; category: Category }
  | { outcome: 'name-taken'; holder: Category }
  /** The name changed hands under every attempt (other requests renaming at that moment). */
  | { outcome: 'contended' };

const toCategory = CATEGORIES.toResource;

export function createCategoriesRepository(primary: Queryable) {
  const table = tableRepository(primary, CATEGORIES, TABLE_STATEMENTS);
  return {
    get: table.get,
    remove: table.remove,

    /** At most `limit` categories with an id above `after`, in id order, and the id the next page starts after (none: the last page). */
    async list(after: number, limit: number): Promise<{ categories: Category[]; next: number | undefined }> {
      const page = await table.list(after, limit);
      return { categories: page.items, next: page.next?.id };
    },

    /**
     * Gives the id this name: created, renamed, or refused because another id holds the name
     * (ignoring case). Two puts of one new id with one name at once can both pass ON
     * CONFLICT's check of the id: the later fails on the name's index, or the two deadlock
     * on each other's index entry; either way the other goes through, and the next attempt
     * is an update (src/db/table.ts `uniquely`).
     */
    async put(id: number, name: string): Promise<Put> {
      const put = await table.uniquely(
        async () => {
          const [row] = await query(primary, CATEGORY_STATEMENTS.put, [id, name]);
          if (!row) throw new Error('categories-put returned no row');
          return row;
        },
        NAME_INDEX,
        async () => {
          const [row] = await query(primary, CATEGORY_STATEMENTS.holder, [name]);
          return row && toCategory(row);
        },
        (held) => held.id === id,
      );
      if (put.outcome === 'written') return { outcome: put.value.created ? 'created' : 'renamed', category: toCategory(put.value) };
      if (put.outcome === 'taken') return { outcome: 'name-taken', holder: put.holder };
      return put;
    },
  };
}

export type CategoriesRepository = ReturnType<typeof createCategoriesRepository>;
