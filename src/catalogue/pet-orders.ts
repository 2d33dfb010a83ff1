// listPets in an order other than ascending id (`orderBy`): keyset pages over one index per
// order (migrations/1763700000024, docs/decisions/0010-pet-orders.md), each ending with the
// id as the tie-breaker, going the same way. The continuation is one row comparison,
// `(lower(name), id) > ($k, $id)`, which the order's index reads as a range, forward or
// backward: a page costs the same at any depth (bench:scale). The promise is the keyset's,
// not the append order's: every pet that is not added, changed or removed during the walk
// appears exactly once (test/e2e/pagination-race-sorted.test.ts). Filters are conditions on
// the walk, which reads at most FILTERED_WALK pets a page; with `id`, the pets of those ids
// (at most 100) are read by key and sorted instead.
import type { components } from '../../generated/v1.js';
import { keyParameters, keysetOrder, type Key } from '../db/keyset.js';
import { statement, type Statement } from '../db/query.js';

/** The orders `orderBy` names (the contract's PetOrderBy), ascending id (the default) and relevance (pets.search) apart. */
export type PetOrder = Exclude<NonNullable<components['parameters']['PetOrderBy']>, 'id' | 'relevance'>;
/** The fields they sort by. */
type Field = Exclude<PetOrder, `${string} desc`> | 'id';

/** A time as the order sorts it: to the millisecond, in UTC, as the JSON shows it (equal-looking times follow in id order). */
function instant(column: string) {
  const sql = `date_trunc('milliseconds', ${column} AT TIME ZONE 'UTC')`;
  return { sql, key: `to_char(${sql}, 'YYYY-MM-DD"T"HH24:MI:SS.MS')`, cast: 'timestamp' };
}

/**
 * Each field's sort expression (its index's), the key a cursor carries for it as text, and
 * that text's type. Typed by the contract: a field added to PetOrderBy fails to compile
 * until it is here, and the order in PET_ORDERS.
 */
const FIELDS: Readonly<Record<Field, { sql: string; key: string; cast: string } | undefined>> = {
  id: undefined,
  name: { sql: 'lower(name) COLLATE "C"', key: 'lower(name)', cast: 'text' },
  createdAt: instant('created_at'),
  updatedAt: instant('coalesce(changed_at, created_at)'),
};
const ORDERS: Readonly<Record<PetOrder, true>> = { 'id desc': true, name: true, 'name desc': true, createdAt: true, 'createdAt desc': true, updatedAt: true, 'updatedAt desc': true };
/** Every order (test/db/generic-plans.test.ts plans each). */
export const PET_ORDERS = Object.keys(ORDERS) as PetOrder[];

/**
 * A row of an ordered page: the pet's JSON, its id, and its sort key (null in id order); or,
 * last, the pet a filtered walk ended on (`spent`), with no JSON when it does not match.
 */
interface OrderedRow {
  id: number;
  json: string | null;
  sort_key: string | null;
  spent: boolean;
}

/** The most rows a page reads: the largest `limit` and the one more that says whether a next page follows. */
const MOST = 101;

/**
 * The most pets a filtered page walks (status, categoryId, tag or q): a filter that few pets
 * match costs a bounded page, not a walk of the whole order. Invariant: a page that walks
 * this many without filling up is short, even empty, and the next starts after the last pet
 * walked, matching or not (docs/decisions/0010-pet-orders.md, invariant 5; AIP-158).
 */
export const FILTERED_WALK = 10_000;

/**
 * A walk of at most FILTERED_WALK live pets: those of `where`, in `order`, answered with their
 * JSON when they meet `filters`, and the last one walked, `spent` (with no JSON unless it
 * matches), when the walk reaches the bound; `columns` are more of each row's columns. The
 * caller takes its page from these rows in the walk's order. `windowOrder` repeats the order
 * for the window when it is columns of pets (the planner then keeps the walk's order with no
 * sort); none for an expression, whose order the window would sort the whole walk for: the
 * rows still come as the index gives them.
 */
export function boundedWalk(walk: { where: string; order: string; filters: string; columns: string; windowOrder?: string }): string {
  return `SELECT * FROM (SELECT id, CASE WHEN hit THEN pet_json(pets) END AS json, ${walk.columns}, row_number() OVER (${walk.windowOrder ?? ''}) = ${FILTERED_WALK} AS spent
    FROM (SELECT * FROM pets WHERE ${walk.where} ORDER BY ${walk.order} LIMIT ${FILTERED_WALK}) AS pets CROSS JOIN LATERAL (SELECT ${walk.filters} AS hit) AS matched) AS walked
    WHERE json IS NOT NULL OR spent`;
}

const statements = new Map<string, Statement<OrderedRow>>();

/**
 * The statement for a page and its values. Invariants (docs/decisions/0010-pet-orders.md):
 * each shape of request (its order, which filters it has, from the first or after a key) is
 * a statement of its own, named after the shape, with no `($n IS NULL OR ...)` condition; its
 * scan is limited by the constant 101, so that a generic plan walks the order's index rather
 * than sort the table; the page's own limit is taken from that scan, and only its rows are
 * written as JSON. The continuation and the ORDER BY come from one keysetOrder.
 */
function shaped(p: OrderedPage): { statement: Statement<OrderedRow>; values: unknown[] } {
  const [name, direction] = p.order.split(' ') as [Field, string | undefined];
  const field = FIELDS[name];
  const desc = direction === 'desc';
  const keyset = keysetOrder(field ? [{ sql: field.sql, desc, type: field.cast }] : [], { desc });
  const values: unknown[] = [];
  const parameter = (value: unknown, cast: string) => `$${values.push(value)}::${cast}`;
  const where = ['deleted_at IS NULL'];
  const filters: string[] = [];
  const tags = p.tags && p.tags.length > 0 ? p.tags : undefined;
  if (p.status !== undefined) filters.push(`status = ${parameter(p.status, 'text')}`);
  if (p.categoryId !== undefined) filters.push(`category_id = ${parameter(p.categoryId, 'bigint')}`);
  if (tags) filters.push(`tags @> ${parameter(tags, 'text[]')}`);
  // q's words found once (an InitPlan), each pet kept if its terms match every one (migrations/1763700000025).
  if (p.q !== undefined) filters.push(`search_level(terms, (SELECT search_query(${parameter(p.q, 'text')}))) > 0`);
  // Among the pets of these ids (at most 100), read by key (OFFSET 0 keeps the order's index
  // out of the plan: walked with `id = ANY`, it could pass every pet), then sorted.
  const from = p.ids === undefined ? 'pets' : `(SELECT * FROM pets WHERE id = ANY (${parameter(p.ids, 'bigint[]')}) OFFSET 0) AS pets`;
  if (p.key !== undefined) where.push(keyset.after(values.push(...keyParameters(p.key)) - keyset.parameters + 1));
  const sortKey = field ? field.key : 'NULL';
  const limit = parameter(p.limit, 'int');
  // Filtered, not by ids: a bounded walk (its last pet answered, spent, when it ends there).
  const text =
    filters.length > 0 && p.ids === undefined
      ? `${boundedWalk({ where: where.join(' AND '), order: keyset.order, filters: filters.join(' AND '), columns: `${sortKey} AS sort_key` })} LIMIT ${limit} + 1`
      : `SELECT * FROM (SELECT id, pet_json(pets) AS json, ${sortKey} AS sort_key, false AS spent FROM ${from} WHERE ${[...where, ...filters].join(' AND ')} ORDER BY ${keyset.order} LIMIT ${MOST}) AS page LIMIT ${limit} + 1`;
  const shape = [p.status !== undefined ? 's' : '', p.categoryId !== undefined ? 'c' : '', tags ? 't' : '', p.ids !== undefined ? 'i' : '', p.q !== undefined ? 'q' : ''].join('');
  const statementName = `pets-order-${p.order.replace(' ', '-')}${shape ? `-${shape}` : ''}-${p.key === undefined ? 'first' : 'after'}`;
  let known = statements.get(statementName);
  if (!known) statements.set(statementName, (known = statement<OrderedRow>(statementName, text)));
  return { statement: known, values };
}

/** A request for an ordered page. */
export interface OrderedPage {
  order: PetOrder;
  limit: number;
  /** The key the page starts after (none: from the first). */
  key: Key | undefined;
  status?: string | undefined;
  categoryId?: number | undefined;
  tags?: readonly string[] | undefined;
  ids?: readonly number[] | undefined;
  q?: string | undefined;
}

/** The statement and values for a page, and how to read its rows: the page's JSON and the key the next starts after. */
export function orderedPage(p: OrderedPage): { statement: Statement<OrderedRow>; values: unknown[]; cut: (rows: OrderedRow[]) => { page: string; next: Key | undefined } } {
  const { statement, values } = shaped(p);
  return {
    statement,
    values,
    cut: (rows) => {
      const matched = rows.filter((r): r is OrderedRow & { json: string } => r.json !== null);
      const kept = matched.slice(0, p.limit);
      // More matches than the page holds: after its last. Else a walk that was cut: after the last pet walked.
      const last = matched.length > p.limit ? kept.at(-1) : rows.at(-1)?.spent ? rows.at(-1) : undefined;
      const next = last ? { values: last.sort_key === null ? [] : [last.sort_key], id: Number(last.id) } : undefined;
      return { page: `[${kept.map((r) => r.json).join(',')}]`, next };
    },
  };
}
