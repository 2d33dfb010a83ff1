// The pets table: every statement that reads or writes it, and the one place where a pet's
// status is written (`PET_STATUS_CHANGES`, which orders' statements embed so that an order
// and its pet change in one statement).
//
// Reads are each pet's JSON as the contract writes it (`as_json`, built by PostgreSQL:
// docs/decisions/0003-postgresql-built-json.md), joined into pages by PostgreSQL and sent
// as they are (src/db/serialized.ts). Pages are keyset pages in id order that keep
// every pet exactly once while pets are being added (docs/decisions/0001-append-order.md).
// Reads and creates that arrive together share a statement (src/db/coalesce.ts,
// docs/decisions/0002-request-coalescing.md).
import type { components } from '../../generated/v1.js';
import { Serialized } from './serialized.js';
import { heldFrom, nextAfter } from './append-order.js';
import { coalesce } from './coalesce.js';
import { createReader, type Pools, type ReadFrom } from './consistency.js';
import type { Statement } from './query.js';
import { query, statement, type Queryable } from './query.js';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];

interface PetRow {
  id: number;
  name: string;
  category_id: number;
  status: PetStatus | null;
}
const PET_COLUMNS = 'id, name, category_id, status';

/**
 * Every change of a pet's status, as SQL to embed in the statement that makes it (placing,
 * closing and expiring orders: src/db/orders.ts). Pets are named by key (`id = ANY (...)`),
 * so that every plan reaches them by the primary key whatever the statistics say
 * (test/db/generic-plans.test.ts). A pet's status is written nowhere else.
 */
export const PET_STATUS_CHANGES = {
  /** available → pending, for the pets of `ids` (an SQL array) that are available; returns their `id`. */
  hold: (ids: string) => `UPDATE pets SET status = 'pending' WHERE id = ANY (${ids}) AND status = 'available' RETURNING id`,
  /**
   * pending → sold for the pets of `sold`, pending → available for the other pets of `ids`
   * (SQL arrays). The status is compared through coalesce, which no index serves: beside the
   * array, a plain `status = 'pending'` let the planner walk every pending pet instead.
   */
  release: (ids: string, sold: string) =>
    `UPDATE pets SET status = CASE WHEN pets.id = ANY (${sold}) THEN 'sold' ELSE 'available' END WHERE pets.id = ANY (${ids}) AND coalesce(pets.status, '') = 'pending'`,
};

// A page scans `lim + 1` rows in id order: the extra one says whether more follow. The status
// scan means `status = s AND id > after`, written so that only the (status, id) index can
// serve it, from the right place, under a generic plan (the row comparison starts just after
// (s, after), `status <= s` ends it); written plainly, a generic plan picks the primary key
// and filters, which walks most of the table when the status is rare among the lowest ids.
const scan = (after: string, lim: string) => `SELECT id, as_json, visible_after FROM pets WHERE id > ${after} ORDER BY id LIMIT ${lim} + 1`;
const statusScan = (status: string, after: string, lim: string) =>
  `SELECT id, as_json, visible_after FROM pets WHERE (status, id) > (${status}, ${after}) AND status <= ${status} ORDER BY status, id LIMIT ${lim} + 1`;
// A page as one row: its pets' JSON joined in id order (the aggregate's ORDER BY, not the
// scan's, orders it), whether more follow, its last id, and `held_from`, the rank of its first
// pet that is not final yet (src/db/append-order.ts; null: none). An aggregate without GROUP
// BY gives its row for an empty page too.
const page = (scanned: string, lim: string) =>
  `SELECT '[' || coalesce(string_agg(as_json, ',' ORDER BY id) FILTER (WHERE n <= ${lim}), '') || ']' AS page,
    count(*) > ${lim} AS more, max(id) FILTER (WHERE n <= ${lim}) AS last, ${heldFrom('pets', '0', lim)}
  FROM (SELECT s.*, row_number() OVER (ORDER BY s.id) AS n FROM (${scanned}) AS s) AS q`;

// A batch's parts, each row tagged with its slot: looked-up pets in slot 0 (their id as
// `last`), pages in the slots the caller numbered.
const lookups = (ids: string) => `SELECT 0 AS i, as_json AS page, false AS more, id AS last, NULL::bigint AS held_from FROM pets WHERE id = ANY (${ids})`;
const pages = (slots: string, afters: string, sizes: string) =>
  `SELECT t.i, p.* FROM unnest(${slots}, ${afters}, ${sizes}) AS t(i, after, lim) CROSS JOIN LATERAL (${page(scan('t.after', 't.lim'), 't.lim')}) AS p`;
const statusPages = (slots: string, statuses: string, afters: string, sizes: string) =>
  `SELECT t.i, p.* FROM unnest(${slots}, ${statuses}, ${afters}, ${sizes}) AS t(i, status, after, lim) CROSS JOIN LATERAL (${page(statusScan('t.status', 't.after', 't.lim'), 't.lim')}) AS p`;

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

/** The pet statements (bench:scale explains them; test/db/generic-plans.test.ts plans them). */
export const PET_STATEMENTS = {
  insert: statement<PetRow>('pets-insert', `INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${PET_COLUMNS}`),
  // Several at once: rows reach the insert in the arrays' order (ORDER BY ordinality) and
  // ids are drawn as rows are inserted, so ascending ids follow the arrays' order.
  insertMany: statement<PetRow>(
    'pets-insert-many',
    `INSERT INTO pets (name, category_id, status)
    SELECT name, category_id, status FROM unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS t(name, category_id, status, i) ORDER BY i
    RETURNING ${PET_COLUMNS}`,
  ),
  // Reads, one statement per kind of batch (a statement's plan is set up whole on every
  // execution, so a single page does not pay for the parts of a mixed batch): a lookup, a
  // page ($1 after, $2 size), a page of one status ($1 status, $2 after, $3 size), several of
  // one kind (by slot), and any mix of them (`readMany`).
  get: statement<{ as_json: string }>('pets-get', 'SELECT as_json FROM pets WHERE id = $1'),
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
  // status or null), in id order (the primary key serves it).
  listByIds: statement<PageRow>(
    'pets-list-by-ids',
    page('SELECT id, as_json, visible_after FROM pets WHERE id = ANY ($1::bigint[]) AND id > $2 AND ($4::text IS NULL OR status = $4) ORDER BY id LIMIT $3::int + 1', '$3::int'),
  ),
};

export interface PetPage {
  /** The page's size: at most this many pets. */
  limit: number;
  status: PetStatus | undefined;
  after: number;
}

/** A page of pets, as listPets answers it. */
export interface PetsPage {
  /** The page's pets, as the answer's JSON array. */
  pets: Serialized<Pet[]>;
  /** The id the next page starts after, or undefined when this page is the last. */
  next: number | undefined;
}

const EMPTY: PageRow = { page: '[]', more: false, last: null, held_from: null };

function toPet(row: PetRow): Pet {
  const pet: Pet = { id: row.id, name: row.name, categoryId: row.category_id };
  if (row.status !== null) pet.status = row.status;
  return pet;
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
    return row && new Serialized<Pet>(row.as_json);
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
export function createPetsRepository(pools: Pools) {
  const { primary, replica } = pools;
  const read: Reader = createReader(pools);
  const insertOne = async (pet: NewPet, on: Queryable): Promise<Pet> => toPet((await query(on, PET_STATEMENTS.insert, [pet.name, pet.categoryId, pet.status ?? null]))[0] as PetRow);
  // Serial: an insert into pets waits on no other transaction (decision record 0001), so
  // gathering the creates that arrive while one is in flight into the next statement only
  // saves commits.
  const insert = coalesce<NewPet, Pet>({
    max: 100,
    serial: true,
    one: (pet) => insertOne(pet, primary),
    many: async (pets) => {
      const rows = await query(primary, PET_STATEMENTS.insertMany, [pets.map((p) => p.name), pets.map((p) => p.categoryId), pets.map((p) => p.status ?? null)]);
      if (rows.length !== pets.length) throw new Error(`inserted ${rows.length} pets for ${pets.length}`);
      return rows.sort((a, b) => a.id - b.id).map(toPet);
    },
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
  const settle = async (row: PageRow, from: ReadFrom, p: PetPage, read: (from: ReadFrom, p: PetPage) => Promise<PageRow>): Promise<PetsPage> => {
    if (row.held_from === null) return { pets: new Serialized<Pet[]>(row.page), next: nextAfter(row.more, row.last ?? undefined, p.after) };
    if (from === 'replica' && replica) return settle(await read('primary', p), 'primary', p, read);
    if (row.held_from === 1) return { pets: new Serialized<Pet[]>('[]'), next: p.after };
    // The pets before it, read again (rarely: only at the newest pets while one is being added).
    const shorter = { ...p, limit: row.held_from - 1 };
    return settle(await read(from, shorter), from, shorter, read);
  };
  const readPage = async (from: ReadFrom, p: PetPage) => (await readers[from]({ kind: 'page', page: p })) as PageRow;
  const pageOf = async (from: ReadFrom, p: PetPage): Promise<PetsPage> => settle(await readPage(from, p), from, p, readPage);

  return {
    /** At most `limit` pets with an id above `after`, in id order, and where the next page starts. */
    list(p: PetPage, from: ReadFrom = 'replica'): Promise<PetsPage> {
      return pageOf(from, p);
    },

    /** Like `list`, only among the pets of these ids (not coalesced: one-off look-ups). */
    async listByIds(ids: readonly number[], p: PetPage, from: ReadFrom = 'replica'): Promise<PetsPage> {
      const readIds = async (on: ReadFrom, q: PetPage) => (await read(on, PET_STATEMENTS.listByIds, [ids, q.after, q.limit, q.status ?? null]))[0] ?? EMPTY;
      return settle(await readIds(from, p), from, p, readIds);
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
    create(pet: NewPet, tx?: Queryable): Promise<Pet> {
      return tx ? insertOne(pet, tx) : insert(pet);
    },
  };
}

export type PetsRepository = ReturnType<typeof createPetsRepository>;
