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

/** Rows of a batched list query ([i, ...PetRow], i from 1) split into one page per input. */
function pagesOf(rows: [number, ...PetRow][], count: number): PetRow[][] {
  const pages: PetRow[][] = Array.from({ length: count }, () => []);
  for (const [i, ...row] of rows) pages[i - 1]?.push(row);
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
  // Lookups, coalesced per server they read from.
  const lookup = (from: ReadFrom) =>
    coalesce<number, PetRow | undefined>({
      max: 100,
      one: async (id) => (await read<PetRow>(from, petQuery('pets-get', PET_STATEMENTS.get, [id]))).rows[0],
      many: async (ids) => {
        const rows = new Map((await read<PetRow>(from, petQuery('pets-get-many', PET_STATEMENTS.getMany, [ids]))).rows.map((r) => [r[0], r]));
        return ids.map((id) => rows.get(id));
      },
    });
  const lookups = { primary: lookup('primary'), replica: lookup('replica') };
  // Pages, coalesced per server they read from; the same page asked twice in a batch is
  // read once, and its pets are built once for all who asked it (read only).
  const pager = (from: ReadFrom) =>
    coalesce<PetPage, Pet[]>({
      max: 100,
      key: pageKey,
      one: async ({ limit, status, after }) =>
        (status
          ? await read<PetRow>(from, petQuery('pets-list-by-status', PET_STATEMENTS.listByStatus, [status, after, limit]))
          : await read<PetRow>(from, petQuery('pets-list', PET_STATEMENTS.list, [after, limit]))
        ).rows.map(toPet),
      many: async (pages) => {
        // Pages with a status and without are two statements (two different scans), sent
        // together when a batch holds both.
        const answers: Pet[][] = new Array<Pet[]>(pages.length);
        const plain = pages.flatMap((p, n) => (p.status ? [] : [n]));
        const filtered = pages.flatMap((p, n) => (p.status ? [n] : []));
        const run = async (which: number[], query: pg.QueryArrayConfig) => {
          if (which.length === 0) return;
          const rows = pagesOf((await read<[number, ...PetRow]>(from, query)).rows, which.length);
          which.forEach((n, k) => (answers[n] = (rows[k] as PetRow[]).map(toPet)));
        };
        const at = (which: number[], field: keyof PetPage) => which.map((n) => (pages[n] as PetPage)[field]);
        await Promise.all([
          run(plain, petQuery('pets-list-many', PET_STATEMENTS.listMany, [at(plain, 'after'), at(plain, 'limit')])),
          run(filtered, petQuery('pets-list-by-status-many', PET_STATEMENTS.listByStatusMany, [at(filtered, 'status'), at(filtered, 'after'), at(filtered, 'limit')])),
        ]);
        return answers;
      },
    });
  const pagers = { primary: pager('primary'), replica: pager('replica') };

  return {
    /**
     * At most `limit` pets with an id above `after`, in id order (keyset pagination);
     * coalesced with the lists that arrive at the same time (src/db/coalesce.ts). The pets
     * may be shared with other calls: read only.
     */
    list(page: PetPage, from: ReadFrom = 'replica'): Promise<readonly Readonly<Pet>[]> {
      return pagers[from](page);
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
      let row = await lookups[from](id);
      // Not on a lagging replica may still mean created a moment ago: the primary decides.
      if (!row && from === 'replica' && replica) row = await lookups.primary(id);
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
