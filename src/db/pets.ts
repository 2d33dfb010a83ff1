// The pets table: every statement that reads or writes it. Statements are named so
// PostgreSQL plans each one once per connection instead of once per request.
import pg from 'pg';
import type { components } from '../../generated/v1.js';
import { coalesce } from './coalesce.js';
import { createReader, type Pools, type ReadFrom } from './consistency.js';
import { columns } from './table.js';
import type { Transaction } from './transaction.js';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];

// Pet rows come back as arrays in this column order (rowMode 'array'): no object with
// field names is built per row only to be read once.
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

/** The pet statements, exported for bench:scale (which explains exactly these). */
export const PET_STATEMENTS = {
  insert: `INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${P}`,
  // Several at once (src/db/coalesce.ts). Rows reach the insert in the arrays' order (ORDER
  // BY ordinality), and identity values are drawn as rows are inserted, so ascending ids
  // follow the arrays' order: that is how each answer finds its row.
  insertMany: `INSERT INTO pets (name, category_id, status)
    SELECT name, category_id, status FROM unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS t(name, category_id, status, i) ORDER BY i
    RETURNING ${P}`,
  get: `SELECT ${P} FROM pets WHERE id = $1`,
  getMany: `SELECT ${P} FROM pets WHERE id = ANY($1::bigint[])`,
  list: `SELECT ${P} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`,
  // Means `status = $1 AND id > $2`, written so that only the (status, id) index can
  // serve it, and serve it from the right place: the row comparison starts the scan just
  // after ($1, $2) and `status <= $1` ends it after the last row of that status; the order
  // (status, id) cannot come from the primary key without a sort. Written plainly, the
  // primary key (already in id order) is a candidate, and a plan made without the actual
  // status (a generic one) picks it and filters: that walks most of the table when the
  // status is rare among the lowest ids. And with `status = $1` beside the row comparison,
  // the scan starts at the first row of the status instead of after $2 (measured: a page
  // 90% deep in 2.5 million rows took 88-250 ms instead of 0.05 ms).
  listByStatus: `SELECT ${P} FROM pets WHERE (status, id) > ($1, $2) AND status <= $1 ORDER BY status, id LIMIT $3`,
  // Several pages at once (src/db/coalesce.ts): each (after, limit) pair runs the single
  // statement's scan under LATERAL; `i` says whose row it is. Rows of one page come in its
  // scan's order, and `ORDER BY i, id` keeps that whatever plan runs.
  listMany: `SELECT t.i, ${PET_COLUMNS.qualified('p')}
    FROM unnest($1::bigint[], $2::int[]) WITH ORDINALITY AS t(after, lim, i)
    CROSS JOIN LATERAL (SELECT ${P} FROM pets WHERE id > t.after ORDER BY id LIMIT t.lim) p
    ORDER BY t.i, p.id`,
  // A batch of several kinds (src/db/pets.ts, `reader`) in one statement: the three
  // statements above under UNION ALL, each row tagged with its slot (0: the pets of
  // getMany's ids; then listMany's pages, then listByStatusMany's, numbered by the caller).
  // Each branch keeps its own statement's scan; an empty array makes its branch empty.
  readMany: `SELECT 0 AS i, ${P} FROM pets WHERE id = ANY($1::bigint[])
    UNION ALL
    SELECT t.i, ${PET_COLUMNS.qualified('p')}
    FROM unnest($2::int[], $3::bigint[], $4::int[]) AS t(i, after, lim)
    CROSS JOIN LATERAL (SELECT ${P} FROM pets WHERE id > t.after ORDER BY id LIMIT t.lim) p
    UNION ALL
    SELECT t.i, ${PET_COLUMNS.qualified('p')}
    FROM unnest($5::int[], $6::text[], $7::bigint[], $8::int[]) AS t(i, status, after, lim)
    CROSS JOIN LATERAL (SELECT ${P} FROM pets WHERE (status, id) > (t.status, t.after) AND status <= t.status ORDER BY status, id LIMIT t.lim) p
    ORDER BY 1, 2`,
  // listPets with `id`: the pets of these ids, in id order (the primary key serves it).
  listByIds: `SELECT ${P} FROM pets WHERE id = ANY($1::bigint[]) AND id > $2 ORDER BY id LIMIT $3`,
  listByIdsAndStatus: `SELECT ${P} FROM pets WHERE id = ANY($1::bigint[]) AND id > $2 AND status = $3 ORDER BY id LIMIT $4`,
  listByStatusMany: `SELECT t.i, ${PET_COLUMNS.qualified('p')}
    FROM unnest($1::text[], $2::bigint[], $3::int[]) WITH ORDINALITY AS t(status, after, lim, i)
    CROSS JOIN LATERAL (SELECT ${P} FROM pets WHERE (status, id) > (t.status, t.after) AND status <= t.status ORDER BY status, id LIMIT t.lim) p
    ORDER BY t.i, p.id`,
};

export interface PetPage {
  limit: number;
  status: PetStatus | undefined;
  after: number;
}
const pageKey = (p: PetPage): string => `${p.status ?? ''}:${p.after}:${p.limit}`;
/** What the coalesced reader is asked: a pet by id, or a page. */
type PetRead = { kind: 'get'; id: number } | { kind: 'page'; page: PetPage };

/** Rows of a batched list query ([i, ...PetRow], i from `first`) split into one page per slot. */
function pagesOf(rows: [number, ...PetRow][], count: number, first = 1): PetRow[][] {
  const pages: PetRow[][] = Array.from({ length: count }, () => []);
  for (const [i, ...row] of rows) pages[i - first]?.push(row);
  return pages;
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
  // profile). The same page asked twice in a batch is read once, and its pets are built
  // once for all who asked it (read only); so is the same pet looked up twice.
  const reader = (from: ReadFrom) => {
    const rowsOf = async <R extends unknown[]>(query: pg.QueryArrayConfig): Promise<R[]> => (await read<R>(from, query)).rows;
    return coalesce<PetRead, PetRow | undefined | Pet[]>({
      max: 100,
      key: (r) => (r.kind === 'get' ? `get:${r.id}` : pageKey(r.page)),
      one: async (r) => {
        if (r.kind === 'get') return (await rowsOf<PetRow>(petQuery('pets-get', PET_STATEMENTS.get, [r.id])))[0];
        const { limit, status, after } = r.page;
        const rows = status
          ? await rowsOf<PetRow>(petQuery('pets-list-by-status', PET_STATEMENTS.listByStatus, [status, after, limit]))
          : await rowsOf<PetRow>(petQuery('pets-list', PET_STATEMENTS.list, [after, limit]));
        return rows.map(toPet);
      },
      many: async (reads) => {
        const gets: number[] = [];
        const plain: PetPage[] = [];
        const filtered: PetPage[] = [];
        for (const r of reads) (r.kind === 'get' ? gets.push(r.id) : (r.page.status ? filtered : plain).push(r.page));
        const field = <F extends keyof PetPage>(pages: PetPage[], f: F): PetPage[F][] => pages.map((p) => p[f]);
        let found: PetRow[] = [];
        let plainRows: PetRow[][] = [];
        let filteredRows: PetRow[][] = [];
        if (gets.length === reads.length) found = await rowsOf<PetRow>(petQuery('pets-get-many', PET_STATEMENTS.getMany, [gets]));
        else if (plain.length === reads.length) plainRows = pagesOf(await rowsOf(petQuery('pets-list-many', PET_STATEMENTS.listMany, [field(plain, 'after'), field(plain, 'limit')])), plain.length);
        else if (filtered.length === reads.length) {
          const query = petQuery('pets-list-by-status-many', PET_STATEMENTS.listByStatusMany, [field(filtered, 'status'), field(filtered, 'after'), field(filtered, 'limit')]);
          filteredRows = pagesOf(await rowsOf(query), filtered.length);
        } else {
          // Slot 0 holds the pets looked up; pages without a status are slots 1..n, and pages
          // of a status the slots after them.
          const slots = (first: number, count: number) => Array.from({ length: count }, (_, k) => first + k);
          const values = [gets, slots(1, plain.length), field(plain, 'after'), field(plain, 'limit'), slots(1 + plain.length, filtered.length), field(filtered, 'status'), field(filtered, 'after'), field(filtered, 'limit')];
          const pages = pagesOf(await rowsOf(petQuery('pets-read-many', PET_STATEMENTS.readMany, values)), 1 + plain.length + filtered.length, 0);
          found = pages[0] as PetRow[];
          plainRows = pages.slice(1, 1 + plain.length);
          filteredRows = pages.slice(1 + plain.length);
        }
        const byId = new Map(found.map((row) => [row[0], row]));
        let nextPlain = 0;
        let nextFiltered = 0;
        return reads.map((r) => {
          if (r.kind === 'get') return byId.get(r.id);
          return ((r.page.status ? filteredRows[nextFiltered++] : plainRows[nextPlain++]) as PetRow[]).map(toPet);
        });
      },
    });
  };
  const readers = { primary: reader('primary'), replica: reader('replica') };
  // The coalesced reader answers each read with its own kind of answer.
  const lookup = async (from: ReadFrom, id: number) => (await readers[from]({ kind: 'get', id })) as PetRow | undefined;
  const page = async (from: ReadFrom, p: PetPage) => (await readers[from]({ kind: 'page', page: p })) as Pet[];

  return {
    /**
     * At most `limit` pets with an id above `after`, in id order (keyset pagination);
     * coalesced with the lists that arrive at the same time (src/db/coalesce.ts). The pets
     * may be shared with other calls: read only.
     */
    list(p: PetPage, from: ReadFrom = 'replica'): Promise<readonly Readonly<Pet>[]> {
      return page(from, p);
    },

    /** Like `list`, only among the pets of these ids (not coalesced: one-off look-ups). */
    async listByIds(ids: readonly number[], page: PetPage, from: ReadFrom = 'replica'): Promise<Pet[]> {
      const result = page.status
        ? await read<PetRow>(from, petQuery('pets-list-by-ids-and-status', PET_STATEMENTS.listByIdsAndStatus, [ids, page.after, page.status, page.limit]))
        : await read<PetRow>(from, petQuery('pets-list-by-ids', PET_STATEMENTS.listByIds, [ids, page.after, page.limit]));
      return result.rows.map(toPet);
    },

    /** Coalesced with the lookups that arrive at the same time (src/db/coalesce.ts). */
    async get(id: number, from: ReadFrom = 'replica'): Promise<Pet | undefined> {
      let row = await lookup(from, id);
      // Not on a lagging replica may still mean created a moment ago: the primary decides.
      if (!row && from === 'replica' && replica) row = await lookup('primary', id);
      return row ? toPet(row) : undefined;
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
