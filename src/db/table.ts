// The repository of a simple table, whose rows are read by id and paged: what every such
// table's repository starts from (src/catalogue/categories.ts is one), so that a new table
// takes a declaration, not a copy. It gives:
// - `get(id)` and `remove(id)`;
// - `list(after, limit, order)`: keyset pages in id order, or in any order the table
//   declares (src/db/keyset.ts: sort columns, then the id as the tie-breaker), each with
//   the key the next page starts after;
// - `uniquely(...)`: a write against a unique index other than the key, answered with the
//   row that holds the value when another one does.
// Each statement is named after the table (`<table>-get`, `<table>-list-<order>`), so it is
// planned once per connection like every other (src/db/query.ts).
import { keyParameters, keysetOrder, type Key, type SortColumn } from './keyset.js';
import { execute, query, statement, type Queryable } from './query.js';

export interface TableDeclaration<Row extends { id: number }, Resource> {
  /** The table's name in SQL. */
  table: string;
  /** The columns a row is read with; `id` among them. */
  columns: readonly (keyof Row & string)[];
  /** The row as the contract shows it. */
  toResource: (row: Row) => Resource;
  /** Orders a list may be read in besides `id`, by name: each its sort columns (the id follows). */
  orders?: Readonly<Record<string, readonly SortColumn[]>>;
}

/** A page: its resources, and the key of its last row when another page follows. */
export interface TablePage<Resource> {
  items: Resource[];
  next: Key | undefined;
}

const UNIQUE_VIOLATION = '23505';
const DEADLOCK = '40P01';
const codeOf = (error: unknown): unknown => (error as { code?: unknown }).code;

export type Unique<T, H> = { outcome: 'written'; value: T } | { outcome: 'taken'; holder: H } | { outcome: 'contended' };

/**
 * The table's statements, declared once at module scope: `get`, `remove`, and for each order
 * a page ($1.. the key it starts after, then the page's size; the id order starts after 0)
 * and, for the other orders, a first page (`$1` the size).
 */
export function tableStatements<Row extends { id: number }>(declared: Pick<TableDeclaration<Row, unknown>, 'table' | 'columns' | 'orders'>) {
  const { table } = declared;
  const list = declared.columns.join(', ');
  const orders: Record<string, readonly SortColumn[]> = { id: [], ...declared.orders };
  const pages = Object.fromEntries(
    Object.entries(orders).map(([name, columns]) => {
      const keyset = keysetOrder(columns);
      const select = `SELECT ${[list, ...columns.map((c, i) => `${c.sql} AS sort_${i}`)].join(', ')} FROM ${table}`;
      const after = statement<Row & Record<string, string | number>>(
        `${table}-list${name === 'id' ? '' : `-${name}`}`,
        `${select} WHERE ${keyset.after(1)} ORDER BY ${keyset.order} LIMIT $${keyset.parameters + 1}::int + 1`,
      );
      const first = name === 'id' ? undefined : statement<Row & Record<string, string | number>>(`${table}-list-${name}-first`, `${select} ORDER BY ${keyset.order} LIMIT $1::int + 1`);
      return [name, { after, first, width: columns.length }] as const;
    }),
  );
  return {
    get: statement<Row>(`${table}-get`, `SELECT ${list} FROM ${table} WHERE id = $1`),
    remove: statement<Record<string, never>>(`${table}-remove`, `DELETE FROM ${table} WHERE id = $1`),
    /** A page in id order ($1 after, $2 size) and one more row. */
    list: (pages.id as { after: ReturnType<typeof statement<Row & Record<string, string | number>>> }).after,
    pages,
  };
}

export function tableRepository<Row extends { id: number }, Resource>(primary: Queryable, declared: TableDeclaration<Row, Resource>, statements = tableStatements(declared)) {
  const { table, toResource } = declared;
  return {
    /** The row of this id, as a resource, if there is one. */
    async get(id: number): Promise<Resource | undefined> {
      const [row] = await query(primary, statements.get, [id]);
      return row && toResource(row);
    },

    /**
     * At most `limit` rows after `after` (an id, or the key a page ended with; none: from the
     * first) in the order named `order`, and the key the next page starts after.
     */
    async list(after: Key | number | undefined, limit: number, order = 'id'): Promise<TablePage<Resource>> {
      const page = statements.pages[order];
      if (!page) throw new Error(`${table}: no order ${order}`);
      const key: Key | undefined = typeof after === 'number' ? { values: [], id: after } : after;
      const rows =
        key === undefined ? await query(primary, page.first ?? page.after, page.first ? [limit] : [0, limit]) : await query(primary, page.after, [...keyParameters(key), limit]);
      const kept = rows.slice(0, limit);
      const last = kept.at(-1);
      const next = rows.length > limit && last ? { values: Array.from({ length: page.width }, (_, i) => last[`sort_${i}`] as string | number), id: last.id } : undefined;
      return { items: kept.map(toResource), next };
    },

    /** Removes the row; false when there was none. */
    async remove(id: number): Promise<boolean> {
      return (await execute(primary, statements.remove, [id])) > 0;
    },

    /**
     * `write`, unless the unique index `index` finds the value held by another row: then
     * that row (`holder`, read in a statement of its own, so that it sees what committed
     * meanwhile). A write that lost a race for the value to a transaction that has since
     * let go of it, or a deadlock between two writes of one new value, is tried again, at
     * most `attempts` times; then `contended`.
     */
    async uniquely<T>(write: () => Promise<T>, index: string, holder: () => Promise<Resource | undefined>, isOwn: (held: Resource) => boolean, attempts = 5): Promise<Unique<T, Resource>> {
      for (let attempt = 0; attempt < attempts; attempt++) {
        try {
          return { outcome: 'written', value: await write() };
        } catch (error) {
          if (codeOf(error) === DEADLOCK) continue;
          if (codeOf(error) !== UNIQUE_VIOLATION || (error as { constraint?: unknown }).constraint !== index) throw error;
        }
        const held = await holder();
        if (held && !isOwn(held)) return { outcome: 'taken', holder: held };
      }
      return { outcome: 'contended' };
    },
  };
}
