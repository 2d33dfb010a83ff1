// Keyset pages in any order: the rows after a key, in the order of a list of sort columns
// followed by `id`, the tie-breaker that makes the order total. The continuation and the
// ORDER BY are written from the same list, so they cannot disagree (a continuation that is
// not aligned with its ORDER BY skips rows; one without a tie-breaker repeats or skips rows
// whose sort values are equal).
//
// When every column goes the same way (the id with them), the continuation is one row
// comparison, `(name, id) > ($1, $2)`, which a btree index on (name, id) reads as a range,
// forward or backward. Mixed directions are written out: `a > $1 OR (a = $1 AND id < $2)`.
// Sort columns are NOT NULL: a NULL compares as unknown, and its row would fall out of every
// page (sort by an expression that has none, `coalesce(...)`, instead).

/** A sort column: an SQL expression over the table's row, and its direction. */
export interface SortColumn {
  /** The column, or an SQL expression of the row (it is written into SQL as it is: never from a client). */
  sql: string;
  desc?: boolean;
  /** The SQL type the key's parameter is cast to (none: the type the comparison infers). */
  type?: string;
}

/** The key of a row in an order: the values of its sort columns, then its id. */
export interface Key {
  values: readonly (string | number)[];
  id: number;
}

/**
 * SQL for an order: `order`, the ORDER BY list (the sort columns, then `id` going the way the
 * first does, or `desc` when there is none), and `after(first)`, the condition that a row
 * comes after the key whose values are the statement's parameters from `$first` on (the
 * values, then the id).
 */
export function keysetOrder(columns: readonly SortColumn[], { id = 'id', desc = false }: { id?: string; desc?: boolean } = {}) {
  const all: SortColumn[] = [...columns, { sql: id, desc: columns[0]?.desc ?? desc, type: 'bigint' }];
  const order = all.map((c) => `${c.sql}${c.desc ? ' DESC' : ''}`).join(', ');
  const sameWay = all.every((c) => (c.desc ?? false) === (all[0]?.desc ?? false));
  const after = (first: number): string => {
    const parameter = (i: number) => `$${first + i}${all[i]?.type ? `::${all[i]?.type}` : ''}`;
    if (sameWay) return `(${all.map((c) => c.sql).join(', ')}) ${all[0]?.desc ? '<' : '>'} (${all.map((_, i) => parameter(i)).join(', ')})`;
    // The key's prefix is equal, and the next column is past it.
    const terms = all.map((c, i) => [...all.slice(0, i).map((p, j) => `${p.sql} = ${parameter(j)}`), `${c.sql} ${c.desc ? '<' : '>'} ${parameter(i)}`].join(' AND '));
    return `(${terms.map((t) => `(${t})`).join(' OR ')})`;
  };
  return { order, after, parameters: all.length };
}

/**
 * A page of the rows whose leading columns equal the given values (SQL expressions), in id
 * order after `after`: `where`, the condition, and `order`, the ORDER BY list (the columns,
 * then id). One row comparison starts just after (values…, after) and a second ends the range
 * at (values…), so that only an index on (columns…, id) can serve it under a generic plan,
 * from the right place. Written plainly (`c = $1 AND id > $2 ORDER BY id`), a generic plan
 * made while a value was common walks the primary key and filters, reading every other
 * value's rows after the cursor (test/db/generic-plans.test.ts).
 */
export function equalPrefixPage(equal: readonly (readonly [column: string, value: string])[], after: string): { where: string; order: string } {
  const columns = equal.map(([column]) => column).join(', ');
  const values = equal.map(([, value]) => value).join(', ');
  return { where: `(${columns}, id) > (${values}, ${after}) AND (${columns}) <= (${values})`, order: `${columns}, id` };
}

/** The statement's parameters for a key (its values, then its id), in the order `keysetOrder` reads them. */
export const keyParameters = (key: Key): unknown[] => [...key.values, key.id];
