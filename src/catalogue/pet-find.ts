// listPets beyond its id-ordered pages: the search `q`, the `tag` filter and `orderBy`
// (docs/decisions/0010-pet-search.md), read from pet_search and the pets it may hold older
// than they are (src/catalogue/pet-search.ts, `SEARCHABLE`). A statement is written for each shape of request
// (which filters it has, its order, whether it starts after a key), named after that shape,
// so that each is planned once per connection and its plan fits its filters: a generic plan
// of `($x IS NULL OR ...)` would serve every shape with none of the indexes.
//
// - `q` matches the pet's search text (`document`: its name and tags, lowercase, without
//   accents: pet_search_text, migration 1763700000023) as a substring (`LIKE`, its wildcards
//   escaped) or a word at pg_trgm's word similarity (`<%`: partial words, typos, any word
//   order). The trigram index pet_search_document serves both.
// - Relevance is the word similarity, plus 1 for a substring match; highest first.
// - Every order ends with the id (src/db/keyset.ts): the continuation and the ORDER BY are
//   written from one list of sort columns. Sort keys are read as text (a time to the
//   microsecond, a relevance exactly), so that a cursor names the row's key exactly.
import { createHash } from 'node:crypto';
import { keysetOrder, type Key, type SortColumn } from '../db/keyset.js';
import { statement, type Statement } from '../db/query.js';
import { FRESH_CTE, searchable } from './pet-search.js';

/** The fields `orderBy` names, and the default order with `q`. */
export type OrderField = 'id' | 'name' | 'createdAt' | 'updatedAt' | 'relevance';
export interface OrderTerm {
  field: OrderField;
  desc: boolean;
}

/** A request's filters, as a statement's shape and values take them. */
export interface PetFilters {
  q?: string | undefined;
  status?: string | undefined;
  categoryId?: number | undefined;
  ids?: readonly number[] | undefined;
  tags?: readonly string[] | undefined;
}

const instant = (sql: string) => `to_char(${sql} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const DOCUMENT = 'document';
const rank = (q: string) => `(word_similarity(search_text(${q}), ${DOCUMENT}) + CASE WHEN ${DOCUMENT} LIKE search_pattern(${q}) THEN 1 ELSE 0 END)`;

/** Each field's sort expression, and its key as the cursor holds it (`q`: the search's parameter). */
function field(f: OrderField, q: string): { sql: string; key: string } {
  switch (f) {
    case 'id':
      return { sql: 'id', key: 'id' };
    case 'name':
      return { sql: 'name', key: 'name' };
    case 'createdAt':
      return { sql: 'created_at', key: instant('created_at') };
    case 'updatedAt':
      return { sql: 'updated_at', key: instant('updated_at') };
    case 'relevance':
      return { sql: `${rank(q)}::real`, key: `${rank(q)}::real::text` };
  }
}

/**
 * `orderBy` as terms, up to the first `id` (which breaks every tie, so nothing after it
 * counts); a message when it names a field twice or `relevance` without `q`.
 */
export function parseOrder(orderBy: string | undefined, hasQ: boolean): OrderTerm[] | { refused: string } {
  if (orderBy === undefined) return hasQ ? [{ field: 'relevance', desc: true }] : [{ field: 'id', desc: false }];
  const terms: OrderTerm[] = [];
  for (const part of orderBy.split(',')) {
    const [name, direction] = part.trim().split(/ +/) as [OrderField, string | undefined];
    if (terms.some((t) => t.field === name)) return { refused: `names ${name} twice; name each field at most once` };
    if (name === 'relevance' && !hasQ) return { refused: 'relevance ranks the matches of a search: give q, or order by id, name, createdAt or updatedAt' };
    terms.push({ field: name, desc: direction === undefined ? name === 'relevance' : direction === 'desc' });
    if (name === 'id') break;
  }
  return terms;
}

/** Whether the order is plain id order (the append-ordered pages of src/catalogue/pets.ts). */
export const isIdOrder = (terms: readonly OrderTerm[]): boolean => terms.length === 1 && terms[0]?.field === 'id' && !terms[0].desc;

/** A page in id order, as pets.ts's page() wraps it: the filters' conditions with `after` and `lim` given. */
export interface Shape {
  filters: PetFilters;
  terms: readonly OrderTerm[];
  after: boolean;
  /** `q` as a substring only (`substringFirst`). */
  substringOnly?: boolean;
}

/**
 * The statement's name: `pets-find-` and the shape, or the shape's digest when that would be
 * longer than PostgreSQL keeps a name (63 bytes: longer names are cut, and two shapes would
 * share one).
 */
const shapeName = (shape: Shape): string => {
  const name = `pets-find-${shapeText(shape)}`;
  return name.length <= 63 ? name : `pets-find-${createHash('sha256').update(name).digest('base64url').slice(0, 22)}`;
};
const shapeText = ({ filters, terms, after, substringOnly }: Shape): string =>
  [
    filters.q !== undefined ? (substringOnly ? 'qs' : 'q') : '',
    filters.status !== undefined ? 's' : '',
    filters.categoryId !== undefined ? 'c' : '',
    filters.ids !== undefined ? 'i' : '',
    filters.tags !== undefined ? 't' : '',
    ...terms.map((t) => `${t.field}${t.desc ? '-' : ''}`),
    after ? 'after' : 'first',
  ].join('.');

/** The conditions and values of the filters, their parameters numbered from $1 (`q` is $1 when given). */
function conditions(filters: PetFilters, substringOnly = false): { where: string[]; values: unknown[] } {
  const where = ['true'];
  const values: unknown[] = [];
  const p = (value: unknown) => `$${values.push(value)}`;
  if (filters.q !== undefined) {
    const q = `${p(filters.q)}::text`;
    where.push(substringOnly ? `${DOCUMENT} LIKE search_pattern(${q})` : `(${DOCUMENT} LIKE search_pattern(${q}) OR search_text(${q}) <% ${DOCUMENT})`);
  }
  if (filters.status !== undefined) where.push(`status = ${p(filters.status)}::text`);
  if (filters.categoryId !== undefined) where.push(`category_id = ${p(filters.categoryId)}::bigint`);
  if (filters.ids !== undefined) where.push(`id = ANY (${p(filters.ids)}::bigint[])`);
  if (filters.tags !== undefined) where.push(`tags @> ${p(filters.tags)}::text[]`);
  return { where, values };
}

/**
 * Whether a page can be read among the pets whose text contains `q` alone: in relevance
 * order (highest first), each of them ranks above every other match (its rank is its word
 * similarity, above 0, plus 1; another match's is at most 1). So when such a read fills the
 * page and finds one more, that page is the page, and the trigram index answered `LIKE`
 * exactly, without ranking the fuzzy matches (25,000 of them for `bibo` at 1,000,000 pets:
 * 413 ms a page; docs/decisions/0010-pet-search.md). After a key, only while the key is one
 * of them.
 */
export const substringFirst = (filters: PetFilters, terms: readonly OrderTerm[], key: Key | undefined): boolean =>
  filters.q !== undefined && terms[0]?.field === 'relevance' && terms[0].desc && (key === undefined || Number(key.values[0]) > 1);

/** A row of a sorted page: the pet's JSON, its id and its sort keys (`sort_0`...). */
export type SortedRow = { json: string; id: number } & Record<`sort_${number}`, string | number>;

const statements = new Map<string, Statement<SortedRow>>();

/**
 * The statement for a page in a sorted order (not plain id order) and its values: at most
 * `limit` + 1 pets after `key` (none: from the first).
 */
export function sortedPage(filters: PetFilters, terms: readonly OrderTerm[], key: Key | undefined, limit: number, substringOnly = false): { statement: Statement<SortedRow>; values: unknown[]; width: number } {
  const { where, values } = conditions(filters, substringOnly);
  const fields = terms.map((t) => ({ ...field(t.field, '$1::text'), desc: t.desc }));
  // The id is the tie-breaker keysetOrder adds, going the way the first column does; an `id`
  // term that goes that way already is that same column.
  const last = terms.at(-1);
  const columns: SortColumn[] = fields.filter((_, i) => !(i > 0 && i === terms.length - 1 && last?.field === 'id' && last.desc === terms[0]?.desc)).map((f) => ({ sql: f.sql, desc: f.desc }));
  const keyset = keysetOrder(columns);
  const name = shapeName({ filters, terms, after: key !== undefined, substringOnly });
  let known = statements.get(name);
  if (!known) {
    const first = values.length + 1;
    const after = key === undefined ? [] : [keyset.after(first)];
    const limitAt = key === undefined ? first : first + keyset.parameters;
    const keys = columns.map((c, i) => `${fields[i]?.key ?? 'id'} AS sort_${i}, ${c.sql} AS o_${i}`);
    // The page's pets are found in the search's relation, then their JSON read from pets by
    // id (the same snapshot: each is there as the page found it), in the page's order.
    const outer = keysetOrder(columns.map((c, i) => ({ sql: `o_${i}`, desc: c.desc ?? false })));
    known = statement<SortedRow>(
      name,
      `WITH ${FRESH_CTE}
      SELECT (SELECT pet_json(p) FROM pets p WHERE p.id = f.id) AS json, f.* FROM (
        ${searchable(`id${keys.length > 0 ? `, ${keys.join(', ')}` : ''}`, `WHERE ${[...where, ...after].join(' AND ')} ORDER BY ${keyset.order} LIMIT $${limitAt}::int + 1`)}
        ORDER BY ${outer.order} LIMIT $${limitAt}::int + 1
      ) AS f ORDER BY ${outer.order}`,
    );
    statements.set(name, known);
  }
  const keyValues = key === undefined ? [] : [...key.values, key.id];
  return { statement: known, values: [...values, ...keyValues, limit], width: columns.length };
}

/**
 * The scan of a page in id order with these filters (for pets.ts's page(), which adds the
 * append order's `held_from`): `after` and `lim` are SQL of the page's parameters, numbered
 * after the filters' values.
 */
export function idOrderScan(filters: PetFilters): { scan: (after: string, lim: string) => string; values: unknown[]; name: string } {
  const { where, values } = conditions(filters);
  return {
    scan: (after, lim) => `WITH ${FRESH_CTE}
      SELECT f.id, (SELECT pet_json(p) FROM pets p WHERE p.id = f.id) AS json, f.visible_after FROM (
        ${searchable('id, visible_after', `WHERE ${where.join(' AND ')} AND id > ${after} ORDER BY id LIMIT ${lim} + 1`)}
        ORDER BY id LIMIT ${lim} + 1
      ) AS f`,
    values,
    name: shapeName({ filters, terms: [{ field: 'id', desc: false }], after: true }),
  };
}
