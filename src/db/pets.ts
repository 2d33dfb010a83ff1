// The pets table: every statement that reads or writes it. Statements are named so
// PostgreSQL plans each one once per connection instead of once per request.
import pg from 'pg';
import type { components } from '../../generated/v1.js';
import { Serialized } from '../contract/serialized.js';
import { coalesce } from './coalesce.js';
import { createReader, type Pools, type ReadFrom } from './consistency.js';
import { columns } from './table.js';
import type { Transaction } from './transaction.js';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];

// Created pets come back as arrays in this column order (rowMode 'array'): no object with
// field names is built per row only to be read once. Reads return each pet's JSON instead
// (below).
export const PET_COLUMNS = columns(['id', 'name', 'category_id', 'status']);
type PetRow = [id: number, name: string, categoryId: number, status: PetStatus | null];

// bigint columns arrive as text; the table's checks keep them below 2^53, so they are
// parsed straight to exact numbers (pg's default keeps them as strings, after a regex).
const INT8 = 20;
export const exactInt8 = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8 ? Number : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser,
};
const petQuery = (name: string, text: string, values: unknown[]): pg.QueryArrayConfig => ({ name, text, values, rowMode: 'array', types: exactInt8 });

const { list: P } = PET_COLUMNS;

// listPets' pages and getPet's pet are read as the answer's JSON: the table keeps each
// pet's (`as_json`, migrations/1763700000007_pets-as-json.sql), and a page is those joined
// by PostgreSQL into one string, sent as it is (src/contract/serialized.ts). Parsing a page's
// rows into objects and serializing them again was most of what a page cost the service.
//
// Keyset pagination: a page scans one row more than it returns, which tells whether a
// next page exists, and the next page starts after the last id returned, so concurrent
// inserts (which get higher ids) never shift or repeat what a client has already seen.
// `pageOf` turns such a scan (of `id, as_json`, in id order, `limit + 1` rows) into one row:
// the JSON array of the first `limit`, whether there are more, and the last id returned.
// The aggregate's ORDER BY, not the scan's, is what orders the array: an aggregate's input
// order is not promised. An aggregate without GROUP BY gives its one row for an empty
// scan too: `[]`, no more, no last id.
const pageOf = (scan: string, limit: string): string =>
  `SELECT '[' || coalesce(string_agg(as_json, ',' ORDER BY id) FILTER (WHERE n <= ${limit}), '') || ']' AS page,
    count(*) > ${limit} AS more, max(id) FILTER (WHERE n <= ${limit}) AS last
    FROM (SELECT id, as_json, row_number() OVER (ORDER BY id) AS n FROM (${scan}) s) q`;

// The scans. `statusScan` means `status = $1 AND id > $2`, written so that only the (status,
// id) index can serve it, and serve it from the right place: the row comparison starts the
// scan just after ($1, $2) and `status <= $1` ends it after the last row of that status;
// the order (status, id) cannot come from the primary key without a sort. Written plainly,
// the primary key (already in id order) is a candidate, and a plan made without the actual
// status (a generic one) picks it and filters: that walks most of the table when the
// status is rare among the lowest ids. And with `status = $1` beside the row comparison,
// the scan starts at the first row of the status instead of after $2 (measured: a page
// 90% deep in 2.5 million rows took 88-250 ms instead of 0.05 ms).
const scan = (after: string, limit: string) => `SELECT id, as_json FROM pets WHERE id > ${after} ORDER BY id LIMIT ${limit} + 1`;
const statusScan = (status: string, after: string, limit: string) =>
  `SELECT id, as_json FROM pets WHERE (status, id) > (${status}, ${after}) AND status <= ${status} ORDER BY status, id LIMIT ${limit} + 1`;

/** The pet statements, exported for bench:scale (which explains exactly these). */
export const PET_STATEMENTS = {
  insert: `INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${P}`,
  // Several at once (src/db/coalesce.ts). Rows reach the insert in the arrays' order (ORDER
  // BY ordinality), and identity values are drawn as rows are inserted, so ascending ids
  // follow the arrays' order: that is how each answer finds its row.
  insertMany: `INSERT INTO pets (name, category_id, status)
    SELECT name, category_id, status FROM unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS t(name, category_id, status, i) ORDER BY i
    RETURNING ${P}`,
  get: 'SELECT as_json FROM pets WHERE id = $1',
  getMany: 'SELECT id, as_json FROM pets WHERE id = ANY($1::bigint[])',
  // One page: ($1 after, $2 limit), or with a status ($1 status, $2 after, $3 limit).
  list: pageOf(scan('$1', '$2::int'), '$2::int'),
  listByStatus: pageOf(statusScan('$1', '$2', '$3::int'), '$3::int'),
  // Several pages at once (src/db/coalesce.ts): each (after, limit) pair runs the single
  // statement's page under LATERAL; `i` says whose page it is (rows come in any order).
  listMany: `SELECT t.i, p.* FROM unnest($1::bigint[], $2::int[]) WITH ORDINALITY AS t(after, lim, i)
    CROSS JOIN LATERAL (${pageOf(scan('t.after', 't.lim'), 't.lim')}) p`,
  listByStatusMany: `SELECT t.i, p.* FROM unnest($1::text[], $2::bigint[], $3::int[]) WITH ORDINALITY AS t(status, after, lim, i)
    CROSS JOIN LATERAL (${pageOf(statusScan('t.status', 't.after', 't.lim'), 't.lim')}) p`,
  // A batch of several kinds (src/db/pets.ts, `reader`) in one statement: the three
  // statements above under UNION ALL, each row tagged with its slot (0: the pets of
  // getMany's ids, one row each, their id as `last`; then listMany's pages, then
  // listByStatusMany's, numbered by the caller). Each branch keeps its own statement's
  // scan; an empty array makes its branch empty.
  readMany: `SELECT 0 AS i, as_json AS page, false AS more, id AS last FROM pets WHERE id = ANY($1::bigint[])
    UNION ALL
    SELECT t.i, p.* FROM unnest($2::int[], $3::bigint[], $4::int[]) AS t(i, after, lim)
    CROSS JOIN LATERAL (${pageOf(scan('t.after', 't.lim'), 't.lim')}) p
    UNION ALL
    SELECT t.i, p.* FROM unnest($5::int[], $6::text[], $7::bigint[], $8::int[]) AS t(i, status, after, lim)
    CROSS JOIN LATERAL (${pageOf(statusScan('t.status', 't.after', 't.lim'), 't.lim')}) p`,
  // listPets with `id`: a page among the pets of these ids, in id order (the primary key
  // serves it): ($1 ids, $2 after, $3 limit), and with a status ($4).
  listByIds: pageOf('SELECT id, as_json FROM pets WHERE id = ANY($1::bigint[]) AND id > $2 ORDER BY id LIMIT $3::int + 1', '$3::int'),
  listByIdsAndStatus: pageOf('SELECT id, as_json FROM pets WHERE id = ANY($1::bigint[]) AND id > $2 AND status = $4 ORDER BY id LIMIT $3::int + 1', '$3::int'),
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
  /** The id the next page starts after (the page's last), or undefined when this page is the last. */
  next: number | undefined;
}

const pageKey = (p: PetPage): string => `${p.status ?? ''}:${p.after}:${p.limit}`;
/** What the coalesced reader is asked: a pet by id, or a page. */
type PetRead = { kind: 'get'; id: number } | { kind: 'page'; page: PetPage };
/** What it answers: the pet's JSON (or undefined: none of that id), or a page. */
type PetReadAnswer = Serialized<Pet> | undefined | PetsPage;

/** A row of `pageOf` (see PET_STATEMENTS). */
type PageRow = [page: string, more: boolean, last: number | null];
/** The same, tagged with its slot in a batch; a looked-up pet's row has its id as `last`. */
type SlotRow = [i: number, ...PageRow];

function toPage([page, more, last]: PageRow): PetsPage {
  return { pets: new Serialized<Pet[]>(page), next: more && last !== null ? last : undefined };
}

function toPet(row: PetRow): Pet {
  const pet: Pet = { id: row[0], name: row[1], categoryId: row[2] };
  if (row[3] !== null) pet.status = row[3];
  return pet;
}

/**
 * `pools.primary` takes every write. With `pools.replica`, list and get read from it unless
 * asked for the primary (src/db/consistency.ts says when).
 */
export function createPetsRepository(pools: Pools) {
  const { primary, replica } = pools;
  const read = createReader(pools);
  const insert = coalesce<NewPet, Pet>({
    max: 100,
    serial: true,
    one: async (pet) => toPet((await primary.query<PetRow>(petQuery('pets-insert', PET_STATEMENTS.insert, [pet.name, pet.categoryId, pet.status ?? null]))).rows[0] as PetRow),
    many: async (pets) => {
      const result = await primary.query<PetRow>(
        petQuery('pets-insert-many', PET_STATEMENTS.insertMany, [pets.map((p) => p.name), pets.map((p) => p.categoryId), pets.map((p) => p.status ?? null)]),
      );
      if (result.rows.length !== pets.length) throw new Error(`inserted ${result.rows.length} pets for ${pets.length}`);
      return result.rows.sort((a, b) => a[0] - b[0]).map(toPet);
    },
  });
  // Reads (getPet's lookups, listPets' pages), coalesced per server they read from: what
  // arrives in one turn is one statement. A batch of one kind (lookups, pages without a
  // status, pages of a status) runs that kind's statement; a batch of several kinds runs
  // `readMany`, which is the three in one: one round trip instead of one per kind (each
  // costs both processes a socket write and a wake-up, ~75 µs of ours on this machine's
  // profile). The same page asked twice in a batch is read once, and so is the same pet
  // looked up twice: its answer is shared by all who asked (immutable).
  const reader = (from: ReadFrom) => {
    const rowsOf = async <R extends unknown[]>(query: pg.QueryArrayConfig): Promise<R[]> => (await read<R>(from, query)).rows;
    return coalesce<PetRead, PetReadAnswer>({
      max: 100,
      key: (r) => (r.kind === 'get' ? `get:${r.id}` : pageKey(r.page)),
      one: async (r) => {
        if (r.kind === 'get') {
          const [row] = await rowsOf<[json: string]>(petQuery('pets-get', PET_STATEMENTS.get, [r.id]));
          return row && new Serialized<Pet>(row[0]);
        }
        const { limit, status, after } = r.page;
        const [row] = status
          ? await rowsOf<PageRow>(petQuery('pets-list-by-status', PET_STATEMENTS.listByStatus, [status, after, limit]))
          : await rowsOf<PageRow>(petQuery('pets-list', PET_STATEMENTS.list, [after, limit]));
        return toPage(row as PageRow);
      },
      many: async (reads) => {
        const gets: number[] = [];
        const plain: PetPage[] = [];
        const filtered: PetPage[] = [];
        for (const r of reads) (r.kind === 'get' ? gets.push(r.id) : (r.page.status ? filtered : plain).push(r.page));
        const field = <F extends keyof PetPage>(pages: PetPage[], f: F): PetPage[F][] => pages.map((p) => p[f]);
        // One row per page, numbered from 1 in the order of `plain`, then of `filtered`; one
        // row per pet found, in slot 0.
        let rows: SlotRow[];
        if (gets.length === reads.length) {
          const found = await rowsOf<[id: number, json: string]>(petQuery('pets-get-many', PET_STATEMENTS.getMany, [gets]));
          rows = found.map(([id, json]) => [0, json, false, id]);
        } else if (plain.length === reads.length) {
          rows = await rowsOf<SlotRow>(petQuery('pets-list-many', PET_STATEMENTS.listMany, [field(plain, 'after'), field(plain, 'limit')]));
        } else if (filtered.length === reads.length) {
          const query = petQuery('pets-list-by-status-many', PET_STATEMENTS.listByStatusMany, [field(filtered, 'status'), field(filtered, 'after'), field(filtered, 'limit')]);
          rows = await rowsOf<SlotRow>(query);
        } else {
          const slots = (first: number, count: number) => Array.from({ length: count }, (_, k) => first + k);
          const values = [gets, slots(1, plain.length), field(plain, 'after'), field(plain, 'limit'), slots(1 + plain.length, filtered.length), field(filtered, 'status'), field(filtered, 'after'), field(filtered, 'limit')];
          rows = await rowsOf<SlotRow>(petQuery('pets-read-many', PET_STATEMENTS.readMany, values));
        }
        const found = new Map<number, Serialized<Pet>>();
        const pages: PetsPage[] = [];
        for (const [i, page, more, last] of rows) {
          if (i === 0) found.set(last as number, new Serialized<Pet>(page));
          else pages[i - 1] = toPage([page, more, last]);
        }
        let nextPlain = 0;
        let nextFiltered = plain.length;
        return reads.map((r) => {
          if (r.kind === 'get') return found.get(r.id);
          const page = pages[r.page.status ? nextFiltered++ : nextPlain++];
          if (!page) throw new Error('a page of the batch came back without its row');
          return page;
        });
      },
    });
  };
  const readers = { primary: reader('primary'), replica: reader('replica') };
  // The coalesced reader answers each read with its own kind of answer.
  const lookup = async (from: ReadFrom, id: number) => (await readers[from]({ kind: 'get', id })) as Serialized<Pet> | undefined;
  const page = async (from: ReadFrom, p: PetPage) => (await readers[from]({ kind: 'page', page: p })) as PetsPage;

  return {
    /**
     * At most `limit` pets with an id above `after`, in id order (keyset pagination), and
     * where the next page starts; coalesced with the lists that arrive at the same time
     * (src/db/coalesce.ts).
     */
    list(p: PetPage, from: ReadFrom = 'replica'): Promise<PetsPage> {
      return page(from, p);
    },

    /** Like `list`, only among the pets of these ids (not coalesced: one-off look-ups). */
    async listByIds(ids: readonly number[], p: PetPage, from: ReadFrom = 'replica'): Promise<PetsPage> {
      const result = p.status
        ? await read<PageRow>(from, petQuery('pets-list-by-ids-and-status', PET_STATEMENTS.listByIdsAndStatus, [ids, p.after, p.limit, p.status]))
        : await read<PageRow>(from, petQuery('pets-list-by-ids', PET_STATEMENTS.listByIds, [ids, p.after, p.limit]));
      return toPage(result.rows[0] as PageRow);
    },

    /** The pet's JSON, or undefined when none has this id. Coalesced with the lookups that arrive at the same time (src/db/coalesce.ts). */
    async get(id: number, from: ReadFrom = 'replica'): Promise<Serialized<Pet> | undefined> {
      const pet = await lookup(from, id);
      // Not on a lagging replica may still mean created a moment ago: the primary decides.
      if (!pet && from === 'replica' && replica) return lookup('primary', id);
      return pet;
    },

    /**
     * Stores a pet. In `tx`, as one statement of the caller's transaction; otherwise
     * coalesced with the creates that arrive at the same time (src/db/coalesce.ts), which
     * share one statement and one commit.
     */
    async create(pet: NewPet, tx?: Transaction): Promise<Pet> {
      if (!tx) return insert(pet);
      const result = await tx.query<PetRow>(petQuery('pets-insert', PET_STATEMENTS.insert, [pet.name, pet.categoryId, pet.status ?? null]));
      return toPet(result.rows[0] as PetRow);
    },
  };
}

export type PetsRepository = ReturnType<typeof createPetsRepository>;
