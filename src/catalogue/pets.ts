// The pets table: every statement that reads or writes it, and the one place where a pet's
// status is written: by orders (`PET_STATUS_CHANGES`, which orders' statements embed so that
// an order and its pet change in one statement) and by updatePet (`update`), which never
// makes a pet pending nor changes the status of a pet that a placed order holds.
//
// Reads are each pet's JSON as the contract writes it (built by PostgreSQL as it reads the
// row, `pet_json(pets)`, generated from the Pet schema: docs/decisions/0003-postgresql-built-json.md), joined into pages by PostgreSQL and sent
// as they are (src/db/serialized.ts). Pages are keyset pages in id order that keep
// every pet exactly once while pets are being added (docs/decisions/0001-append-order.md).
// Reads and creates that arrive together share a statement (src/db/coalesce.ts,
// docs/decisions/0002-request-coalescing.md).
//
// A removed pet (deletePet: `deleted_at` set, the row kept for the orders that name it) is
// invisible: every statement here that reads or changes pets skips it, and placing an order
// skips it too (`hold`). Changes and removals lock the pet's row, compare and write in one
// statement: two of them, or one and an order's placement, on any instances, are decided
// one after the other on the pet's newest version.
import { createHash } from 'node:crypto';
import type { components } from '../../generated/v1.js';
import { Serialized } from '../db/serialized.js';
import { appendOrdered, nextAfter } from '../db/append-order.js';
import { coalesce } from '../db/coalesce.js';
import { createReader, type Pools, type ReadFrom } from '../db/consistency.js';
import type { Statement } from '../db/query.js';
import { execute, query, statement, type Queryable } from '../db/query.js';
import { inTransaction } from '../db/transaction.js';
import { exportPets, type ExportFormat, type ExportFilters } from './pet-export.js';
import { boundedWalk, FILTERED_WALK, orderedPage, type OrderedPage } from './pet-orders.js';
import { equalPrefixPage, type Key } from '../db/keyset.js';

/** pets are paged whole (migration 1763700000008). */
const PETS = appendOrdered('pets');

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
export type PetPatch = components['schemas']['PetPatch'];

interface PetRow {
  id: number;
  name: string;
  category_id: number;
  status: PetStatus | null;
  tags: string[] | null;
  created_at: string;
  updated_at: string;
  json: string;
}
const PET_COLUMNS = 'id, name, category_id, status, tags, created_at_json(pets) AS created_at, updated_at_json(pets) AS updated_at, pet_json(pets) AS json';

/**
 * A pet's strong entity tag, from its JSON (`pet_json`): `"` + base64url of the first 16
 * bytes of its SHA-256 + `"`. The SQL function `pet_etag` (migrations/1763700000009) is the
 * same computation, used where If-Match is compared under the row's lock; a test holds the
 * two equal. Same JSON, same tag: it changes exactly when the representation does.
 */
export function petETag(json: string): string {
  return `"${createHash('sha256').update(json, 'utf8').digest().subarray(0, 16).toString('base64url')}"`;
}

/**
 * Every change of a pet's status, as SQL to embed in the statement that makes it (placing,
 * closing and expiring orders: src/store/orders.ts). Pets are named by key (`id = ANY (...)`),
 * so that every plan reaches them by the primary key whatever the statistics say
 * (test/db/generic-plans.test.ts). Beside these, only updatePet writes a status
 * (PET_STATEMENTS.update), and never to or from `pending`.
 *
 * Invariant: every statement that locks several pets locks them in id order (here
 * `ORDER BY id FOR UPDATE` in the FROM, which locks rows as the sort hands them out; the
 * changes' `decideMany` below), so two never wait for each other in a circle, which
 * PostgreSQL would break by failing one (a 500). An UPDATE alone locks rows in the order its
 * scan meets them: the table's order for a bitmap scan (test/db/pet-lock-order.test.ts).
 */
export const PET_STATUS_CHANGES = {
  /** available → pending, for the pets of `ids` (an SQL array) that are available and not removed; returns their `id`. */
  hold: (ids: string) =>
    `UPDATE pets SET status = 'pending', changed_at = statement_timestamp(), updated_json = json_instant(statement_timestamp())
    FROM (SELECT id FROM pets WHERE id = ANY (${ids}) AND status = 'available' AND deleted_at IS NULL ORDER BY id FOR UPDATE) AS locked
    WHERE pets.id = locked.id RETURNING pets.id`,
  /**
   * pending → sold for the pets of `sold`, pending → available for the other pets of `ids`
   * (SQL arrays). The status is compared through coalesce, which no index serves: beside the
   * array, a plain `status = 'pending'` let the planner walk every pending pet instead.
   */
  release: (ids: string, sold: string) =>
    `UPDATE pets SET status = CASE WHEN pets.id = ANY (${sold}) THEN 'sold' ELSE 'available' END, changed_at = statement_timestamp(), updated_json = json_instant(statement_timestamp())
    FROM (SELECT id FROM pets WHERE id = ANY (${ids}) AND coalesce(status, '') = 'pending' ORDER BY id FOR UPDATE) AS locked
    WHERE pets.id = locked.id`,
};

// A page scans `lim + 1` rows in id order: the extra one says whether more follow. The status
// scan means `status = s AND id > after`, and the category scan the same over the
// (category_id, id) index, `status` (null: any) a filter on it: each written as
// `equalPrefixPage` writes it, for its generic plan to use the index (src/db/keyset.ts). Removed pets are filtered out of every scan, as another status is: a page
// holds back from its first pet that is not final among those it returns, whatever was
// skipped before it (src/db/append-order.ts).
const scan = (after: string, lim: string) => `SELECT id, pet_json(pets) AS json, visible_after FROM pets WHERE id > ${after} AND deleted_at IS NULL ORDER BY id LIMIT ${lim} + 1`;
const statusScan = (status: string, after: string, lim: string) => {
  const { where, order } = equalPrefixPage([['status', status]], after);
  return `SELECT id, pet_json(pets) AS json, visible_after FROM pets WHERE ${where} AND deleted_at IS NULL ORDER BY ${order} LIMIT ${lim} + 1`;
};
const categoryScan = (category: string, status: string, after: string, lim: string) => {
  const { where, order } = equalPrefixPage([['category_id', category]], after);
  return `SELECT id, pet_json(pets) AS json, visible_after FROM pets WHERE ${where} AND deleted_at IS NULL
    AND (${status} IS NULL OR status = ${status}) ORDER BY ${order} LIMIT ${lim} + 1`;
};
// A page as one row: its pets' JSON joined in id order (the aggregate's ORDER BY, not the
// scan's, orders it), whether more follow, its last id, and `held_from`, the rank of its first
// pet that is not final yet (src/db/append-order.ts; null: none). An aggregate without GROUP
// BY gives its row for an empty page too.
// With `spent`, the scan's rows carry it: true on the last pet of a walk that reached its
// bound, answered with no JSON unless it matches, which makes the page go on after it.
const page = (scanned: string, lim: string, spent = false) =>
  `SELECT '[' || coalesce(string_agg(json, ',' ORDER BY id) FILTER (WHERE n <= ${lim}), '') || ']' AS page,
    count(*) > ${lim}${spent ? ' OR bool_or(spent)' : ''} AS more, max(id) FILTER (WHERE n <= ${lim}) AS last, ${PETS.heldFrom(lim)}
  FROM (SELECT s.*, row_number() OVER (ORDER BY s.id) AS n FROM (${scanned}) AS s) AS q`;

// A batch's parts, each row tagged with its slot: looked-up pets in slot 0 (their id as
// `last`), pages in the slots the caller numbered.
const lookups = (ids: string) => `SELECT 0 AS i, pet_json(pets) AS page, false AS more, id AS last, NULL::bigint AS held_from FROM pets WHERE id = ANY (${ids}) AND deleted_at IS NULL`;
const pages = (slots: string, afters: string, sizes: string) =>
  `SELECT t.i, p.* FROM unnest(${slots}, ${afters}, ${sizes}) AS t(i, after, lim) CROSS JOIN LATERAL (${page(scan('t.after', 't.lim'), 't.lim')}) AS p`;
const statusPages = (slots: string, statuses: string, afters: string, sizes: string) =>
  `SELECT t.i, p.* FROM unnest(${slots}, ${statuses}, ${afters}, ${sizes}) AS t(i, status, after, lim) CROSS JOIN LATERAL (${page(statusScan('t.status', 't.after', 't.lim'), 't.lim')}) AS p`;

// Whether a locked pending pet (`t`, a row of `target`) may be held by a placed order. A pet
// is held only while a placed order names it: one created pending is held by none, and
// changes and goes like any other. The orders are read in the statement's snapshot, which
// may predate the version the lock read (an order placed while this statement waited for
// the row), so a version other than the snapshot's counts as held too: src/store/holds.ts
// then tries the change again with the row locked before its statement starts, which
// decides exactly.
const mayBeHeld = (t: string) =>
  `(EXISTS (SELECT FROM orders o WHERE o.pet_id = ${t}.id AND o.status = 'placed')
    OR ${t}.version IS DISTINCT FROM (SELECT p.xmin::text FROM pets p WHERE p.id = ${t}.id))`;

// The first part of a change: the pet's row locked (`FOR UPDATE` waits for a writer that
// holds it, then reads its newest version), and what that version allows: `matched`, the
// If-Match condition ($tags: strong entity tags, null when there is none) holds; `reserved`,
// the change would touch its status ($status: whether it does) and the pet is pending and
// may be held by a placed order (`mayBeHeld`, asked only then).
const decide = (id: string, tags: string, status: string) => `target AS MATERIALIZED (
      SELECT id, status, xmin::text AS version, pet_json(pets) AS json FROM pets WHERE id = ${id} AND deleted_at IS NULL FOR UPDATE
    ), decided AS MATERIALIZED (
      SELECT json, (${tags}::text[] IS NULL OR pet_etag(json) = ANY (${tags}::text[])) AS matched,
        (${status} AND coalesce(status, '') = 'pending' AND ${mayBeHeld('target')}) AS reserved
      FROM target
    )`;
// The same for several pets, each its own slot: `input`, a row per slot (its pet's `id`, its
// If-Match `tags` as one space-separated text or null, and what it sets), and `decided`, a
// row per slot whose pet exists. The pets' rows are locked in id order, so that two batches
// that share pets wait for each other, never in a circle.
const decideMany = (input: string, ids: string, changesStatus: string) => `input AS (${input}),
    target AS MATERIALIZED (
      SELECT id, status, xmin::text AS version, pet_json(pets) AS json FROM pets WHERE id = ANY (${ids}) AND deleted_at IS NULL ORDER BY id FOR UPDATE
    ), decided AS MATERIALIZED (
      SELECT i.*, t.json, (i.tags IS NULL OR pet_etag(t.json) = ANY (string_to_array(i.tags, ' '))) AS matched,
        (${changesStatus} AND coalesce(t.status, '') = 'pending' AND ${mayBeHeld('t')}) AS reserved
      FROM input i JOIN target t ON t.id = i.id
    )`;
interface ChangeRow {
  matched: boolean;
  reserved: boolean;
  /** The pet's JSON after the change (or as it stands when nothing was written). */
  json: string;
}

/** A batch's row for one slot: its pet's columns null when no such pet. */
interface SlotChangeRow {
  slot: number;
  matched: boolean | null;
  reserved: boolean | null;
  json: string | null;
}

/** A slot's row as a single change's (none: no such pet). */
const asChange = (row: SlotChangeRow | undefined): ChangeRow | undefined =>
  row && row.matched !== null && row.reserved !== null && row.json !== null ? { matched: row.matched, reserved: row.reserved, json: row.json } : undefined;

/**
 * Calls of a batch in rounds that each name a pet once: the first call for each pet, then
 * the second, and so on. Each round is one statement, run after the one before, so that a
 * pet changed twice is decided the second time on what the first change left.
 */
function rounds<T extends { id: number }>(inputs: readonly T[]): { slot: number; input: T }[][] {
  const out: { slot: number; input: T }[][] = [];
  const seen = new Map<number, number>();
  inputs.forEach((input, slot) => {
    const round = seen.get(input.id) ?? 0;
    seen.set(input.id, round + 1);
    (out[round] ??= []).push({ slot, input });
  });
  return out;
}

/** Runs each round's statement and gives every call its slot's row. */
async function inRounds<T extends { id: number }>(inputs: readonly T[], run: (round: { slot: number; input: T }[]) => Promise<SlotChangeRow[]>): Promise<(ChangeRow | undefined)[]> {
  const answers: (ChangeRow | undefined)[] = new Array(inputs.length);
  for (const round of rounds(inputs)) {
    const rows = await run(round);
    const bySlot = new Map(rows.map((row) => [row.slot, row]));
    for (const { slot } of round) answers[slot] = asChange(bySlot.get(slot));
  }
  return answers;
}

/** The If-Match condition as a batch carries it: the strong tags, space-separated (tags hold no space), or null. */
const tagsText = (ifMatch: IfMatch): string | null => (ifMatch === undefined ? null : ifMatch.join(' '));

interface PageRow {
  page: string;
  more: boolean;
  last: number | null;
  held_from: number | null;
}
interface SlotRow extends PageRow {
  /** 0: a looked-up pet (its id in `last`); else the page's slot. */
  i: number;
}

/**
 * A pet's tags as a statement of several pets takes them: one JSON array text per pet (null:
 * none), so that a batch is a flat text[] (unnest flattens an array of arrays). A pet
 * without tags stores NULL, never `{}` (migrations/1763700000023).
 */
const tagsJson = (tags: readonly string[] | null | undefined): string | null => (tags && tags.length > 0 ? JSON.stringify(tags) : null);
const tagsOf = (json: string) => `CASE WHEN ${json} IS NULL THEN NULL ELSE ARRAY(SELECT json_array_elements_text(${json}::json)) END`;

/** The pet statements (bench:scale explains them; test/db/generic-plans.test.ts plans them). */
export const PET_STATEMENTS = {
  insert: statement<PetRow>('pets-insert', `INSERT INTO pets (name, category_id, status, tags, created_json) VALUES ($1, $2, $3, $4::text[], json_instant(now())) RETURNING ${PET_COLUMNS}`),
  // Several at once: rows reach the insert in the arrays' order (ORDER BY ordinality) and
  // ids are drawn as rows are inserted, so ascending ids follow the arrays' order.
  insertMany: statement<PetRow>(
    'pets-insert-many',
    `INSERT INTO pets (name, category_id, status, tags, created_json)
    SELECT name, category_id, status, ${tagsOf('tags')}, json_instant(now()) FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) WITH ORDINALITY AS t(name, category_id, status, tags, i) ORDER BY i
    RETURNING ${PET_COLUMNS}`,
  ),
  // An import's batch (src/catalogue/pet-import-worker.ts): the same insert, nothing returned.
  insertBatch: statement<Record<string, never>>(
    'pets-insert-batch',
    `INSERT INTO pets (name, category_id, status, tags, created_json)
    SELECT name, category_id, status, ${tagsOf('tags')}, json_instant(now()) FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) WITH ORDINALITY AS t(name, category_id, status, tags, i) ORDER BY i`,
  ),
  // Reads, one statement per kind of batch (a statement's plan is set up whole on every
  // execution, so a single page does not pay for the parts of a mixed batch): a lookup, a
  // page ($1 after, $2 size), a page of one status ($1 status, $2 after, $3 size), several of
  // one kind (by slot), and any mix of them (`readMany`).
  get: statement<{ json: string }>('pets-get', 'SELECT pet_json(pets) AS json FROM pets WHERE id = $1 AND deleted_at IS NULL'),
  list: statement<PageRow>('pets-list', page(scan('$1', '$2::int'), '$2::int')),
  listByStatus: statement<PageRow>('pets-list-by-status', page(statusScan('$1', '$2', '$3::int'), '$3::int')),
  getMany: statement<SlotRow>('pets-get-many', lookups('$1::bigint[]')),
  listMany: statement<SlotRow>('pets-list-many', pages('$1::int[]', '$2::bigint[]', '$3::int[]')),
  listByStatusMany: statement<SlotRow>('pets-list-by-status-many', statusPages('$1::int[]', '$2::text[]', '$3::bigint[]', '$4::int[]')),
  // ($1) ids to look up, ($2 slots, $3 afters, $4 sizes) pages, ($5 slots, $6 statuses,
  // $7 afters, $8 sizes) pages of one status; an empty array makes its part empty.
  readMany: statement<SlotRow>(
    'pets-read-many',
    `${lookups('$1::bigint[]')} UNION ALL ${pages('$2::int[]', '$3::bigint[]', '$4::int[]')} UNION ALL ${statusPages('$5::int[]', '$6::text[]', '$7::bigint[]', '$8::int[]')}`,
  ),
  // listPets with `id`: a page among the pets of these ids ($1 ids, $2 after, $3 size, $4
  // status or null, $5 category or null, $6 tags or null), in id order (the primary key serves it).
  listByIds: statement<PageRow>(
    'pets-list-by-ids',
    page(
      `SELECT id, pet_json(pets) AS json, visible_after FROM pets WHERE id = ANY ($1::bigint[]) AND id > $2 AND deleted_at IS NULL
        AND ($4::text IS NULL OR status = $4) AND ($5::bigint IS NULL OR category_id = $5) AND ($6::text[] IS NULL OR tags @> $6)
        AND ($7::text IS NULL OR search_level(terms, (SELECT search_query($7))) > 0) ORDER BY id LIMIT $3::int + 1`,
      '$3::int',
    ),
  ),
  // listPets with `q` in id order ($1 q, $2 after, $3 size, $4 status or null, $5 category or
  // null, $6 tags or null): the primary key walked, keeping the pets whose terms match every
  // word of q (migrations/1763700000025), at most FILTERED_WALK pets a page, as in the other
  // orders (docs/decisions/0010-pet-orders.md, invariant 5). The last pet walked is judged
  // final or not like the pets answered: the page never goes on past a pet not final.
  listBySearch: statement<PageRow>(
    'pets-list-by-search',
    page(
      `${boundedWalk({
        where: 'id > $2 AND deleted_at IS NULL',
        order: 'id',
        filters: `search_level(terms, (SELECT search_query($1::text))) > 0
          AND ($4::text IS NULL OR status = $4) AND ($5::bigint IS NULL OR category_id = $5) AND ($6::text[] IS NULL OR tags @> $6)`,
        columns: 'visible_after',
        windowOrder: 'ORDER BY id',
      })} ORDER BY id LIMIT $3::int + 1`,
      '$3::int',
      true,
    ),
  ),
  // listPets by relevance (the function pet_search_page, migrations/1763700000025 and 27,
  // docs/decisions/0011-pet-search.md): $1 q, after ($2 level, $3 term, $4 id; null: from the
  // first), $5 status, $6 category, $7 tags, $8 ids (each null: any), $9 size, $10 the most
  // (term, pet) rows walked.
  search: statement<{ id: number; json: string | null; level: number; term: string }>(
    'pets-search',
    'SELECT id, body AS json, level, term FROM pet_search_page($1::text, $2::int, $3::text, $4::bigint, $5::text, $6::bigint, $7::text[], $8::bigint[], $9::int, $10::int)',
  ),
  // listPets with `tag` ($1 tags, $2 status or null, $3 category or null, $4 after, $5
  // size): the pets of one tag (`walked`) in id order from pet_tags' primary key (migration
  // 1763700000023), each carrying every tag. With several tags, the rarest by the table's
  // statistics (its most common values and their frequencies; a tag not among them counts
  // as rarer, ties in the order given): reading no rows, and any tag gives the same pages, in
  // id order, so the choice may change between pages. The tag is the row comparison's and
  // the bound's, so a generic plan walks that index from the right place, as the status
  // scan does; each pet is read by its key (the LATERAL, kept apart by OFFSET 0: joined
  // plainly, a generic plan made while pet_tags looked empty hashed the whole of pets).
  listByTags: statement<PageRow>(
    'pets-list-by-tags',
    page(
      `WITH walked AS MATERIALIZED (
        SELECT CASE WHEN cardinality($1::text[]) = 1 THEN ($1::text[])[1] ELSE (SELECT g.tag FROM unnest($1::text[]) WITH ORDINALITY AS g(tag, i)
          ORDER BY coalesce((SELECT m.f FROM pg_stats s CROSS JOIN LATERAL unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS m(v, f)
            WHERE s.schemaname = current_schema() AND s.tablename = 'pet_tags' AND s.attname = 'tag' AND m.v = g.tag), 0), g.i LIMIT 1) END AS tag
      )
      SELECT p.id, pet_json(p) AS json, p.visible_after FROM pet_tags t CROSS JOIN LATERAL (SELECT * FROM pets WHERE pets.id = t.pet_id OFFSET 0) AS p
        WHERE (t.tag, t.pet_id) > ((SELECT tag FROM walked), $4::bigint) AND t.tag <= (SELECT tag FROM walked) AND p.tags @> $1::text[] AND p.deleted_at IS NULL
          AND ($2::text IS NULL OR p.status = $2) AND ($3::bigint IS NULL OR p.category_id = $3) ORDER BY t.tag, t.pet_id LIMIT $5::int + 1`,
      '$5::int',
    ),
  ),
  // listPets with `categoryId` ($1 category, $2 status or null, $3 after, $4 size).
  listByCategory: statement<PageRow>('pets-list-by-category', page(categoryScan('$1::bigint', '$2::text', '$3', '$4::int'), '$4::int')),
  // updatePet ($1 id, $2 If-Match's strong tags or null: no condition, $3 name or null, $4
  // category or null, $5 whether status is set, $6 the status it is set to, $7 whether the
  // pet's tags are set, $8 the tags they are set to, null: none). One statement:
  // the pet's row is locked (after waiting for a writer that holds it, READ COMMITTED gives
  // its newest version), the tags compared and the status rule checked on that version, and
  // the row written only when both allow it and something changes. No row: no such pet.
  update: statement<ChangeRow>(
    'pets-update',
    `WITH ${decide('$1', '$2', '$5::boolean')},
    changed AS (
      UPDATE pets SET name = coalesce($3::text, pets.name), category_id = coalesce($4::bigint, pets.category_id),
        status = CASE WHEN $5::boolean THEN $6::text ELSE pets.status END, tags = CASE WHEN $7::boolean THEN $8::text[] ELSE pets.tags END,
        changed_at = statement_timestamp(), updated_json = json_instant(statement_timestamp())
      WHERE pets.id = $1 AND pets.deleted_at IS NULL AND EXISTS (SELECT FROM decided WHERE matched AND NOT reserved)
        AND (pets.name, pets.category_id, pets.status, pets.tags) IS DISTINCT FROM
          (coalesce($3::text, pets.name), coalesce($4::bigint, pets.category_id), CASE WHEN $5::boolean THEN $6::text ELSE pets.status END,
            CASE WHEN $7::boolean THEN $8::text[] ELSE pets.tags END)
      RETURNING pet_json(pets) AS json
    )
    SELECT decided.matched, decided.reserved, coalesce((SELECT json FROM changed), decided.json) AS json FROM decided`,
  ),
  // updatePet for several pets at once ($1 slots, $2 ids, $3 If-Match tags, $4 names, $5
  // categories, $6 whether status is set, $7 the statuses, $8 whether the pet's tags are
  // set, $9 those tags as JSON arrays, null: none): each slot decided and written as `update`
  // does, one row per slot (`matched` null: no such pet). A batch names each pet once (the
  // repository splits repeats into rounds).
  updateMany: statement<SlotChangeRow>(
    'pets-update-many',
    `WITH ${decideMany('SELECT * FROM unnest($1::int[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::boolean[], $7::text[], $8::boolean[], $9::text[]) AS i(slot, id, tags, name, category_id, sets_status, new_status, sets_labels, labels)', '$2::bigint[]', 'i.sets_status')},
    changed AS (
      UPDATE pets SET name = coalesce(d.name, pets.name), category_id = coalesce(d.category_id, pets.category_id),
        status = CASE WHEN d.sets_status THEN d.new_status ELSE pets.status END, tags = CASE WHEN d.sets_labels THEN ${tagsOf('d.labels')} ELSE pets.tags END,
        changed_at = statement_timestamp(), updated_json = json_instant(statement_timestamp())
      FROM decided d
      WHERE pets.id = d.id AND pets.deleted_at IS NULL AND d.matched AND NOT d.reserved
        AND (pets.name, pets.category_id, pets.status, pets.tags) IS DISTINCT FROM
          (coalesce(d.name, pets.name), coalesce(d.category_id, pets.category_id), CASE WHEN d.sets_status THEN d.new_status ELSE pets.status END,
            CASE WHEN d.sets_labels THEN ${tagsOf('d.labels')} ELSE pets.tags END)
      RETURNING d.slot, pet_json(pets) AS json
    )
    SELECT input.slot, decided.matched, decided.reserved, coalesce(changed.json, decided.json) AS json
    FROM input LEFT JOIN decided ON decided.slot = input.slot LEFT JOIN changed ON changed.slot = input.slot`,
  ),
  // deletePet for several pets at once ($1 slots, $2 ids, $3 tags), as `remove` does each.
  removeMany: statement<SlotChangeRow>(
    'pets-remove-many',
    `WITH ${decideMany('SELECT * FROM unnest($1::int[], $2::bigint[], $3::text[]) AS i(slot, id, tags)', '$2::bigint[]', 'true')},
    removed AS (
      UPDATE pets SET deleted_at = statement_timestamp() FROM decided d
      WHERE pets.id = d.id AND pets.deleted_at IS NULL AND d.matched AND NOT d.reserved
      RETURNING pets.id
    )
    SELECT input.slot, decided.matched, decided.reserved, decided.json FROM input LEFT JOIN decided ON decided.slot = input.slot`,
  ),
  // The pet's row locked ($1 id), for a change tried again under it (src/store/holds.ts).
  lock: statement<{ id: number }>('pets-lock', 'SELECT id FROM pets WHERE id = $1 AND deleted_at IS NULL FOR UPDATE'),
  // deletePet ($1 id, $2 If-Match's strong tags or null): as `update`, setting `deleted_at`;
  // a pet a placed order may hold is never removed.
  remove: statement<ChangeRow>(
    'pets-remove',
    `WITH ${decide('$1', '$2', 'true')},
    removed AS (
      UPDATE pets SET deleted_at = statement_timestamp()
      WHERE pets.id = $1 AND pets.deleted_at IS NULL AND EXISTS (SELECT FROM decided WHERE matched AND NOT reserved)
      RETURNING pets.id
    )
    SELECT decided.matched, decided.reserved, decided.json FROM decided`,
  ),
};

export interface PetPage {
  /** The page's size: at most this many pets. */
  limit: number;
  status: PetStatus | undefined;
  after: number;
  /** Only pets of this category (undefined: any). */
  categoryId?: number | undefined;
  /** Only pets that carry every one of these tags (undefined: any). */
  tags?: readonly string[] | undefined;
  /** Only pets matching every word of this search (undefined: any). */
  q?: string | undefined;
}

/** A page by relevance: an ordered page's filters and key (values: level, term), matching `q`. */
export type SearchPage = Omit<OrderedPage, 'order' | 'q'> & { q: string };

/** One updatePet or deletePet, as the coalesced writers take it. */
interface PetUpdate {
  id: number;
  patch: PetPatch;
  ifMatch: IfMatch;
}
type PetRemoval = Omit<PetUpdate, 'patch'>;

/** A pet as an answer sends it: its JSON, and its entity tag. */
export interface TaggedPet<P> {
  pet: P;
  etag: string;
}

/**
 * Strong entity tags that If-Match names (`"..."`, weak ones left out), or undefined for no
 * condition (no If-Match, or `*`: any pet that exists).
 */
export type IfMatch = readonly string[] | undefined;

/** What a change or a removal did: `reserved` when a placed order may hold the pet (it is pending; src/store/holds.ts finds out). */
export type PetChange<Done> = Done | { outcome: 'not-found' } | { outcome: 'precondition-failed' } | { outcome: 'reserved' };

/** A page of pets, as listPets answers it. */
export interface PetsPage {
  /** The page's pets, as the answer's JSON array. */
  pets: Serialized<Pet[]>;
  /** The id the next page starts after, or undefined when this page is the last. */
  next: number | undefined;
}

const EMPTY: PageRow = { page: '[]', more: false, last: null, held_from: null };

function toPet(row: PetRow): TaggedPet<Pet> {
  // Keys in the Pet schema's order, as pet_json writes them (an idempotent replay sends this object's JSON).
  const pet: Pet = {
    id: row.id,
    name: row.name,
    categoryId: row.category_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.status !== null ? { status: row.status } : {}),
    ...(row.tags !== null && row.tags.length > 0 ? { tags: row.tags } : {}),
  };
  return { pet, etag: petETag(row.json) };
}

/**
 * What a change's row says (none: no such pet). RFC 9110 §13.2.1: preconditions are
 * ignored when the request would fail without them, before its content is read. A pet a
 * placed order may hold refuses every removal (`reservedFirst`: 409 whatever If-Match
 * says), and refuses a patch only for what its content sets (If-Match is evaluated first:
 * 412).
 */
function toChange<Done>(row: ChangeRow | undefined, done: (row: ChangeRow) => Done, reservedFirst: boolean): PetChange<Done> {
  if (!row) return { outcome: 'not-found' };
  if (reservedFirst && row.reserved) return { outcome: 'reserved' };
  if (!row.matched) return { outcome: 'precondition-failed' };
  if (row.reserved) return { outcome: 'reserved' };
  return done(row);
}

/** What the coalesced reader is asked: a pet by id, or a page. */
type PetRead = { kind: 'get'; id: number } | { kind: 'page'; page: PetPage };
/** What it answers: the pet's JSON (or undefined: none of that id), or a page's row. */
type PetReadAnswer = Serialized<Pet> | undefined | PageRow;
const readKey = (r: PetRead): string => (r.kind === 'get' ? `get:${r.id}` : `${r.page.status ?? ''}:${r.page.after}:${r.page.limit}`);

/** The statement for a batch of reads, its values, and how to find each read's answer in its rows. */
function readBatch(reads: readonly PetRead[]): { statement: Statement<SlotRow>; values: unknown[]; answer: (rows: SlotRow[]) => PetReadAnswer[] } {
  const gets: number[] = [];
  const plain: { slot: number; page: PetPage }[] = [];
  const filtered: { slot: number; page: PetPage }[] = [];
  reads.forEach((r, slot) => (r.kind === 'get' ? gets.push(r.id) : (r.page.status ? filtered : plain).push({ slot: slot + 1, page: r.page })));
  const plainValues = [plain.map((p) => p.slot), plain.map((p) => p.page.after), plain.map((p) => p.page.limit)];
  const filteredValues = [filtered.map((p) => p.slot), filtered.map((p) => p.page.status), filtered.map((p) => p.page.after), filtered.map((p) => p.page.limit)];
  const [statement, values] =
    gets.length === reads.length
      ? [PET_STATEMENTS.getMany, [gets]]
      : plain.length === reads.length
        ? [PET_STATEMENTS.listMany, plainValues]
        : filtered.length === reads.length
          ? [PET_STATEMENTS.listByStatusMany, filteredValues]
          : [PET_STATEMENTS.readMany, [gets, ...plainValues, ...filteredValues]];
  return {
    statement,
    values,
    answer: (rows) => {
      const found = new Map<number, Serialized<Pet>>();
      const pages = new Map<number, PageRow>();
      for (const row of rows) {
        if (row.i === 0) found.set(row.last as number, new Serialized<Pet>(row.page));
        else pages.set(row.i, row);
      }
      return reads.map((r, slot) => (r.kind === 'get' ? found.get(r.id) : (pages.get(slot + 1) ?? EMPTY)));
    },
  };
}

/** One read alone: its own statement. */
async function readOne(read: Reader, from: ReadFrom, r: PetRead): Promise<PetReadAnswer> {
  if (r.kind === 'get') {
    const [row] = await read(from, PET_STATEMENTS.get, [r.id]);
    return row && new Serialized<Pet>(row.json);
  }
  const { status, after, limit } = r.page;
  const [row] = status ? await read(from, PET_STATEMENTS.listByStatus, [status, after, limit]) : await read(from, PET_STATEMENTS.list, [after, limit]);
  return row ?? EMPTY;
}

type Reader = ReturnType<typeof createReader>;

/**
 * `pools.primary` takes every write. With `pools.replica`, lookups and pages read from it
 * unless asked for the primary (src/db/consistency.ts says when); a page the replica held
 * pets back from (it cannot see which transactions are writing pets) is read again from
 * the primary, which can.
 */
export interface PetsOptions {
  /** An export whose client takes nothing for this long is cut off (src/catalogue/pet-export.ts). */
  exportIdleMs?: number;
}

export function createPetsRepository(pools: Pools, { exportIdleMs = 60_000 }: PetsOptions = {}) {
  const { primary, replica } = pools;
  const read: Reader = createReader(pools);
  const insertOne = async (pet: NewPet, on: Queryable): Promise<TaggedPet<Pet>> => toPet((await query(on, PET_STATEMENTS.insert, [pet.name, pet.categoryId, pet.status ?? null, pet.tags && pet.tags.length > 0 ? pet.tags : null]))[0] as PetRow);
  // Several pets in one statement, their rows in the order given (ids ascend in that order).
  const insertAll = async (pets: readonly NewPet[], on: Queryable): Promise<PetRow[]> => {
    const rows = await query(on, PET_STATEMENTS.insertMany, [pets.map((p) => p.name), pets.map((p) => p.categoryId), pets.map((p) => p.status ?? null), pets.map((p) => tagsJson(p.tags))]);
    if (rows.length !== pets.length) throw new Error(`inserted ${rows.length} pets for ${pets.length}`);
    return rows.sort((a, b) => a.id - b.id);
  };
  // Serial: an insert into pets waits on no other transaction (decision record 0001), so
  // gathering the creates that arrive while one is in flight into the next statement only
  // saves commits.
  const insert = coalesce<NewPet, TaggedPet<Pet>>({
    max: 100,
    serial: true,
    one: (pet) => insertOne(pet, primary),
    many: async (pets) => (await insertAll(pets, primary)).map(toPet),
  });
  // Changes and removals, coalesced: those that arrive in one turn are one statement, one
  // commit (not serial: a change can wait for a pet's row that another transaction holds).
  const updateOne = async ({ id, patch, ifMatch }: PetUpdate, on: Queryable) => {
    const values = [id, ifMatch ?? null, patch.name ?? null, patch.categoryId ?? null, Object.hasOwn(patch, 'status'), patch.status ?? null, Object.hasOwn(patch, 'tags'), patch.tags && patch.tags.length > 0 ? patch.tags : null];
    return (await query(on, PET_STATEMENTS.update, values))[0];
  };
  const updates = coalesce<PetUpdate, ChangeRow | undefined>({
    max: 100,
    one: (u) => updateOne(u, primary),
    many: (all) =>
      inRounds(all, (round) => {
        const u = round.map((r) => r.input);
        const values = [
          round.map((r) => r.slot),
          u.map((x) => x.id),
          u.map((x) => tagsText(x.ifMatch)),
          u.map((x) => x.patch.name ?? null),
          u.map((x) => x.patch.categoryId ?? null),
          u.map((x) => Object.hasOwn(x.patch, 'status')),
          u.map((x) => x.patch.status ?? null),
          u.map((x) => Object.hasOwn(x.patch, 'tags')),
          u.map((x) => tagsJson(x.patch.tags)),
        ];
        return query(primary, PET_STATEMENTS.updateMany, values);
      }),
  });
  const removeOne = async ({ id, ifMatch }: PetRemoval, on: Queryable) => (await query(on, PET_STATEMENTS.remove, [id, ifMatch ?? null]))[0];
  const removals = coalesce<PetRemoval, ChangeRow | undefined>({
    max: 100,
    one: (r) => removeOne(r, primary),
    many: (all) => inRounds(all, (round) => query(primary, PET_STATEMENTS.removeMany, [round.map((r) => r.slot), round.map((r) => r.input.id), round.map((r) => tagsText(r.input.ifMatch))])),
  });
  // Lookups and pages, coalesced per server they read from: what arrives in one turn is one
  // statement. The same page or pet asked twice in a batch is read once.
  const reader = (from: ReadFrom) => {
    const many = async (reads: PetRead[]): Promise<PetReadAnswer[]> => {
      const { statement, values, answer } = readBatch(reads);
      return answer(await read(from, statement, values));
    };
    return coalesce<PetRead, PetReadAnswer>({ max: 100, key: readKey, one: (r) => readOne(read, from, r), many });
  };
  const readers = { primary: reader('primary'), replica: reader('replica') };
  const lookup = async (from: ReadFrom, id: number) => (await readers[from]({ kind: 'get', id })) as Serialized<Pet> | undefined;
  /**
   * The page `read` answers, cut before its first pet that is not final (src/db/append-order.ts).
   * A replica cannot tell which transactions are writing pets: there, the primary answers.
   */
  const settle = async (row: PageRow, from: ReadFrom, p: PetPage, read: (from: ReadFrom, p: PetPage) => Promise<PageRow>, again = true): Promise<PetsPage> => {
    if (row.held_from === null) return { pets: new Serialized<Pet[]>(row.page), next: nextAfter(row.more, row.last ?? undefined, p.after) };
    if (from === 'replica' && replica) return settle(await read('primary', p), 'primary', p, read);
    // A pet held back is often final a moment later: the transaction that held it (a writer,
    // or one of another database of the cluster that was running at the snapshot) has ended.
    // The page is read once more, on a new snapshot, and judged by the same rule.
    if (again) return settle(await read(from, p), from, p, read, false);
    if (row.held_from === 1) return { pets: new Serialized<Pet[]>('[]'), next: p.after };
    // The pets before it, read again (rarely: only at the newest pets while one is being added).
    const shorter = { ...p, limit: row.held_from - 1 };
    return settle(await read(from, shorter), from, shorter, read, false);
  };
  const readPage = async (from: ReadFrom, p: PetPage) => (await readers[from]({ kind: 'page', page: p })) as PageRow;
  const pageOf = async (from: ReadFrom, p: PetPage): Promise<PetsPage> => settle(await readPage(from, p), from, p, readPage);

  // A category's pages are read alone (not coalesced).
  const readCategory = async (on: ReadFrom, q: PetPage) => (await read(on, PET_STATEMENTS.listByCategory, [q.categoryId, q.status ?? null, q.after, q.limit]))[0] ?? EMPTY;
  // As are pages of a search, in id order,
  const readSearch = async (on: ReadFrom, q: PetPage) =>
    (await read(on, PET_STATEMENTS.listBySearch, [q.q, q.after, q.limit, q.status ?? null, q.categoryId ?? null, q.tags ?? null]))[0] ?? EMPTY;
  // and pages of a tag.
  const readTags = async (on: ReadFrom, q: PetPage) =>
    (await read(on, PET_STATEMENTS.listByTags, [q.tags, q.status ?? null, q.categoryId ?? null, q.after, q.limit]))[0] ?? EMPTY;

  return {
    /** At most `limit` pets with an id above `after` (of `status`, of `categoryId`, with `tags`), in id order, and where the next page starts. */
    async list(p: PetPage, from: ReadFrom = 'replica'): Promise<PetsPage> {
      if (p.q !== undefined) return settle(await readSearch(from, p), from, p, readSearch);
      if (p.tags !== undefined && p.tags.length > 0) return settle(await readTags(from, p), from, p, readTags);
      if (p.categoryId !== undefined) return settle(await readCategory(from, p), from, p, readCategory);
      return pageOf(from, p);
    },

    /** Like `list`, only among the pets of these ids (not coalesced: one-off look-ups). */
    async listByIds(ids: readonly number[], p: PetPage, from: ReadFrom = 'replica'): Promise<PetsPage> {
      const readIds = async (on: ReadFrom, q: PetPage) =>
        (await read(on, PET_STATEMENTS.listByIds, [ids, q.after, q.limit, q.status ?? null, q.categoryId ?? null, q.tags ?? null, q.q ?? null]))[0] ?? EMPTY;
      return settle(await readIds(from, p), from, p, readIds);
    },

    /**
     * At most `limit` pets in another order than ascending id (src/catalogue/pet-orders.ts),
     * after `key`, and the key the next page starts after (not coalesced).
     */
    async listOrdered(p: OrderedPage, from: ReadFrom = 'replica'): Promise<{ pets: Serialized<Pet[]>; next: Key | undefined }> {
      const { statement, values, cut } = orderedPage(p);
      const { page, next } = cut(await read(from, statement, values));
      return { pets: new Serialized<Pet[]>(page), next };
    },

    /**
     * At most `limit` pets matching `q`, by relevance, after `key` (its values: level and
     * term), and the key the next page starts after (not coalesced).
     */
    async search(p: SearchPage, from: ReadFrom = 'replica'): Promise<{ pets: Serialized<Pet[]>; next: Key | undefined }> {
      const [level, term] = p.key?.values ?? [];
      const rows = await read(from, PET_STATEMENTS.search, [
        p.q,
        p.key === undefined ? null : level,
        p.key === undefined ? null : term,
        p.key?.id ?? null,
        p.status ?? null,
        p.categoryId ?? null,
        p.tags ?? null,
        p.ids ?? null,
        p.limit,
        FILTERED_WALK,
      ]);
      // A walk that reached its bound ends with the (term, pet) it stopped at, with no JSON.
      const stop = rows.at(-1)?.json === null ? rows.at(-1) : undefined;
      const found = (stop ? rows.slice(0, -1) : rows) as { id: number; json: string; level: number; term: string }[];
      const kept = found.slice(0, p.limit);
      const last = found.length > p.limit ? kept.at(-1) : stop;
      const next = last ? { values: [last.level, last.term], id: Number(last.id) } : undefined;
      return { pets: new Serialized<Pet[]>(`[${kept.map((r) => r.json).join(',')}]`), next };
    },

    /**
     * Every pet that matches `filters`, in id order, as `format`'s text, streamed from one
     * snapshot of the primary (src/catalogue/pet-export.ts), taken before this resolves.
     */
    export(filters: ExportFilters, format: ExportFormat) {
      return exportPets(primary, filters, format, exportIdleMs);
    },

    /** The pet's JSON, or undefined when none has this id. */
    async get(id: number, from: ReadFrom = 'replica'): Promise<Serialized<Pet> | undefined> {
      const pet = await lookup(from, id);
      // Not on a lagging replica may still mean created a moment ago: the primary decides.
      if (!pet && from === 'replica' && replica) return lookup('primary', id);
      return pet;
    },

    /**
     * Stores a pet: in `tx`, as one statement of the caller's transaction; otherwise
     * coalesced with the creates that arrive at the same time (one statement, one commit).
     */
    create(pet: NewPet, tx?: Queryable): Promise<TaggedPet<Pet>> {
      return tx ? insertOne(pet, tx) : insert(pet);
    },

    /**
     * Stores every pet of `pets` with one statement, so all or none (in `tx` when given):
     * their JSON in the order given (ids ascend in that order), as batchCreatePets answers
     * it. The pets table's statement-level trigger writes each one's `pet.created` event.
     */
    /** Adds `pets` in `tx` (a batch of an import), in the order given, answering nothing; each writes its pet.created. How many. */
    async addBatch(pets: readonly NewPet[], tx: Queryable): Promise<number> {
      return execute(tx, PET_STATEMENTS.insertBatch, [pets.map((p) => p.name), pets.map((p) => p.categoryId), pets.map((p) => p.status ?? null), pets.map((p) => tagsJson(p.tags))]);
    },

    async createMany(pets: readonly NewPet[], tx?: Queryable): Promise<Serialized<{ pets: Pet[] }>> {
      const rows = await insertAll(pets, tx ?? primary);
      return new Serialized(`{"pets":[${rows.map((r) => r.json).join(',')}]}`);
    },

    /**
     * Applies a merge patch to a pet, if `ifMatch` allows it and, when it sets `status`, no
     * placed order may hold the pet; a patch that changes nothing writes nothing. One
     * statement (see PET_STATEMENTS.update), in `tx` when given.
     */
    async update(id: number, patch: PetPatch, ifMatch: IfMatch, tx?: Queryable): Promise<PetChange<{ outcome: 'changed' } & TaggedPet<Serialized<Pet>>>> {
      const row = tx ? await updateOne({ id, patch, ifMatch }, tx) : await updates({ id, patch, ifMatch });
      return toChange(row, (r) => ({ outcome: 'changed' as const, pet: new Serialized<Pet>(r.json), etag: petETag(r.json) }), false);
    },

    /**
     * Runs `run` in a transaction (`tx`, or one of its own on the primary) that first locks
     * the pet's row, if it exists: no other transaction changes the pet until it ends.
     */
    whileLocked<T>(id: number, run: (tx: Queryable) => Promise<T>, tx?: Queryable): Promise<T> {
      const locked = async (on: Queryable): Promise<T> => {
        await query(on, PET_STATEMENTS.lock, [id]);
        return run(on);
      };
      return tx ? locked(tx) : inTransaction(primary, locked);
    },

    /** Removes a pet (soft: see migrations/1763700000009), if `ifMatch` allows it and no placed order holds it. */
    async remove(id: number, ifMatch: IfMatch, tx?: Queryable): Promise<PetChange<{ outcome: 'removed' }>> {
      const row = tx ? await removeOne({ id, ifMatch }, tx) : await removals({ id, ifMatch });
      return toChange(row, () => ({ outcome: 'removed' as const }), true);
    },
  };
}

export type PetsRepository = ReturnType<typeof createPetsRepository>;
