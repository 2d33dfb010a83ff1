// The categories table: a name given to a `categoryId`. The ids are the clients', so pages
// are plain keyset pages by id (no append order: docs/decisions/0001-append-order.md is for
// ids the service assigns). Pets do not reference this table, and nothing here touches pets.
//
// Categories read and write the primary only: the 409 of a put names the category that
// holds the name, and a client that reads that category next must find it, which a lagging
// replica could not promise.
//
// putCategory takes no Idempotency-Key (a PUT is idempotent by itself), so no transaction is
// ever open around these statements: each commits on its own, and a unique violation of a
// put leaves nothing behind.
import type { components } from '../../generated/v1.js';
import { columns, execute, query, statement, type Queryable } from '../db/query.js';

export type Category = components['schemas']['Category'];

const { list: C } = columns(['id', 'name']);
interface CategoryRow {
  id: number;
  name: string;
}

/** The unique index on lower(name) (migrations/1763700000010_create-categories.sql). */
export const NAME_INDEX = 'categories_name_unique';
const UNIQUE_VIOLATION = '23505';

export const CATEGORY_STATEMENTS = {
  get: statement<CategoryRow>('categories-get', `SELECT ${C} FROM categories WHERE id = $1`),
  // A page ($1 after, $2 size) and one more row: whether a next page exists.
  list: statement<CategoryRow>('categories-list', `SELECT ${C} FROM categories WHERE id > $1 ORDER BY id LIMIT $2::int + 1`),
  // Names the id, or renames it: `created` is true when the row was inserted (an updated
  // row's xmax is the updating transaction).
  put: statement<CategoryRow & { created: boolean }>(
    'categories-put',
    `INSERT INTO categories (id, name) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name RETURNING ${C}, (xmax = 0) AS created`,
  ),
  // The category that holds a name, ignoring case (through NAME_INDEX).
  holder: statement<CategoryRow>('categories-holder', `SELECT ${C} FROM categories WHERE lower(name) = lower($1)`),
  remove: statement<Record<string, never>>('categories-remove', 'DELETE FROM categories WHERE id = $1'),
};

export type Put =
  | { outcome: 'created' | 'renamed'; category: Category }
  | { outcome: 'name-taken'; holder: Category }
  /** The name changed hands under every attempt (other requests renaming at that moment). */
  | { outcome: 'contended' };

/**
 * How many times a put is tried. Two puts of one new id at once can both pass ON
 * CONFLICT's check of the id before either inserts; the name's index (not an arbiter) then
 * checks the other's row as any insert does: with the same name, the later one fails with a
 * unique violation whose holder is its own id, or the two wait on each other (each on the
 * other's index entry) until PostgreSQL ends one as a deadlock, after deadlock_timeout (1 s
 * by default). Either way the other put goes through, and the next attempt is an update.
 * Another attempt follows too when the holder is gone by the time it is read. Each attempt
 * after the first means another request committed in between.
 */
const PUT_ATTEMPTS = 5;

const codeOf = (error: unknown): unknown => (error as { code?: unknown }).code;
const isNameTaken = (error: unknown): boolean => codeOf(error) === UNIQUE_VIOLATION && (error as { constraint?: unknown }).constraint === NAME_INDEX;
const DEADLOCK = '40P01';

const toCategory = (row: CategoryRow): Category => ({ id: row.id, name: row.name });

export function createCategoriesRepository(primary: Queryable) {
  return {
    /** The category, or undefined when the id has no name. */
    async get(id: number): Promise<Category | undefined> {
      const [row] = await query(primary, CATEGORY_STATEMENTS.get, [id]);
      return row && toCategory(row);
    },

    /** At most `limit` categories with an id above `after`, in id order, and the id the next page starts after (none: the last page). */
    async list(after: number, limit: number): Promise<{ categories: Category[]; next: number | undefined }> {
      const rows = await query(primary, CATEGORY_STATEMENTS.list, [after, limit]);
      const page = rows.slice(0, limit).map(toCategory);
      return { categories: page, next: rows.length > limit ? page.at(-1)?.id : undefined };
    },

    /** Gives the id this name: created, renamed, or refused because another id holds the name (ignoring case). */
    async put(id: number, name: string): Promise<Put> {
      for (let attempt = 0; attempt < PUT_ATTEMPTS; attempt++) {
        try {
          const [row] = await query(primary, CATEGORY_STATEMENTS.put, [id, name]);
          if (!row) throw new Error('categories-put returned no row');
          return { outcome: row.created ? 'created' : 'renamed', category: toCategory(row) };
        } catch (error) {
          if (codeOf(error) === DEADLOCK) continue;
          if (!isNameTaken(error)) throw error;
        }
        const [holder] = await query(primary, CATEGORY_STATEMENTS.holder, [name]);
        if (holder && holder.id !== id) return { outcome: 'name-taken', holder: toCategory(holder) };
      }
      return { outcome: 'contended' };
    },

    /** Removes the id's name; false when it had none. */
    async remove(id: number): Promise<boolean> {
      return (await execute(primary, CATEGORY_STATEMENTS.remove, [id])) > 0;
    },
  };
}

export type CategoriesRepository = ReturnType<typeof createCategoriesRepository>;
