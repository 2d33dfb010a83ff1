// All SQL of the service, in one place. Statements are named so PostgreSQL plans each
// one once per connection instead of once per request.
import pg from 'pg';
import type { components } from '../../generated/v1.js';
import { coalesce } from './coalesce.js';
import { createReader, type ReadFrom } from './consistency.js';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];

// Pet rows come back as arrays in this column order (rowMode 'array'): no object with
// field names is built per row only to be read once.
const PET_COLUMNS = 'id, name, category_id, status';
type PetRow = [id: number, name: string, categoryId: number, status: PetStatus | null];

// bigint columns arrive as text; the table's checks keep them below 2^53, so they are
// parsed straight to exact numbers (pg's default keeps them as strings, after a regex).
const INT8 = 20;
const petTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8 ? Number : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser,
};
const petQuery = (name: string, text: string, values: unknown[]): pg.QueryArrayConfig => ({ name, text, values, rowMode: 'array', types: petTypes });

/** The pet statements, exported for bench:scale (which explains exactly these). */
export const PET_STATEMENTS = {
  insert: `INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${PET_COLUMNS}`,
  // Several at once (src/db/coalesce.ts). Rows reach the insert in the arrays' order (ORDER
  // BY ordinality), and identity values are drawn as rows are inserted, so ascending ids
  // follow the arrays' order: that is how each answer finds its row.
  insertMany: `INSERT INTO pets (name, category_id, status)
    SELECT name, category_id, status FROM unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS t(name, category_id, status, i) ORDER BY i
    RETURNING ${PET_COLUMNS}`,
  // createPet with an Idempotency-Key: the pet, and the answer stored under the claimed key
  // (its body as the contract's Pet, its Location), in one statement.
  insertIdempotent: `WITH pet AS (
      INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${PET_COLUMNS}
    ), completed AS (
      UPDATE idempotency_keys AS k
         SET status_code = 201,
             response_body = jsonb_strip_nulls(jsonb_build_object('id', pet.id, 'name', pet.name, 'categoryId', pet.category_id, 'status', pet.status)),
             location = $6::text || pet.id || $7::text
        FROM pet
       WHERE k.api_key_id = $4 AND k.key = $5
    )
    SELECT ${PET_COLUMNS} FROM pet`,
  get: `SELECT ${PET_COLUMNS} FROM pets WHERE id = $1`,
  getMany: `SELECT ${PET_COLUMNS} FROM pets WHERE id = ANY($1::bigint[])`,
  list: `SELECT ${PET_COLUMNS} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`,
  // Means `status = $1 AND id > $2`, written so that only the (status, id) index can
  // serve it, and serve it from the right place: the row comparison starts the scan just
  // after ($1, $2) and `status <= $1` ends it after the last row of that status; the order
  // (status, id) cannot come from the primary key without a sort. Written plainly, the
  // primary key (already in id order) is a candidate, and a plan made without the actual
  // status (a generic one) picks it and filters: that walks most of the table when the
  // status is rare among the lowest ids. And with `status = $1` beside the row comparison,
  // the scan starts at the first row of the status instead of after $2 (measured: a page
  // 90% deep in 2.5 million rows took 88-250 ms instead of 0.05 ms).
  listByStatus: `SELECT ${PET_COLUMNS} FROM pets WHERE (status, id) > ($1, $2) AND status <= $1 ORDER BY status, id LIMIT $3`,
  // Several pages at once (src/db/coalesce.ts): each (after, limit) pair runs the single
  // statement's scan under LATERAL; `i` says whose row it is. Rows of one page come in its
  // scan's order, and `ORDER BY i, id` keeps that whatever plan runs.
  listMany: `SELECT t.i, p.id, p.name, p.category_id, p.status
    FROM unnest($1::bigint[], $2::int[]) WITH ORDINALITY AS t(after, lim, i)
    CROSS JOIN LATERAL (SELECT ${PET_COLUMNS} FROM pets WHERE id > t.after ORDER BY id LIMIT t.lim) p
    ORDER BY t.i, p.id`,
  listByStatusMany: `SELECT t.i, p.id, p.name, p.category_id, p.status
    FROM unnest($1::text[], $2::bigint[], $3::int[]) WITH ORDINALITY AS t(status, after, lim, i)
    CROSS JOIN LATERAL (SELECT ${PET_COLUMNS} FROM pets WHERE (status, id) > (t.status, t.after) AND status <= t.status ORDER BY status, id LIMIT t.lim) p
    ORDER BY t.i, p.id`,
};

interface Page {
  limit: number;
  status: PetStatus | undefined;
  after: number;
}
const pageKey = (p: Page): string => `${p.status ?? ''}:${p.after}:${p.limit}`;

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

export interface ApiKeyRecord {
  id: number;
  name: string;
  createdAt: Date;
  revokedAt: Date | null;
}

/** How long keys are kept (the contract documents 24 hours). */
export const IDEMPOTENCY_RETENTION_HOURS = 24;

export type IdempotencyClaim =
  | { outcome: 'claimed' }
  | { outcome: 'in-flight' }
  | { outcome: 'reused' }
  | { outcome: 'replay'; status: number; body: unknown; location: string | null };

export interface IdempotencyScope {
  apiKeyId: number;
  key: string;
}

/**
 * `pool` is the primary. With `replica`, listPets and getPet read from it unless asked for
 * the primary (src/db/consistency.ts says when).
 */
export function createStore(pool: pg.Pool, replica?: pg.Pool) {
  const read = createReader({ primary: pool, ...(replica ? { replica } : {}) });
  const insertPet = coalesce<NewPet, Pet>({
    max: 100,
    serial: true,
    one: async (pet) => toPet((await pool.query<PetRow>(petQuery('pets-insert', PET_STATEMENTS.insert, [pet.name, pet.categoryId, pet.status ?? null]))).rows[0] as PetRow),
    many: async (pets) => {
      const result = await pool.query<PetRow>(
        petQuery('pets-insert-many', PET_STATEMENTS.insertMany, [pets.map((p) => p.name), pets.map((p) => p.categoryId), pets.map((p) => p.status ?? null)]),
      );
      if (result.rows.length !== pets.length) throw new Error(`inserted ${result.rows.length} pets for ${pets.length}`);
      return result.rows.sort((a, b) => a[0] - b[0]).map(toPet);
    },
  });
  // getPet lookups, coalesced per server they read from.
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
  // listPets pages, coalesced per server they read from; the same page asked twice in a
  // batch is read once, and its pets are built once for all who asked it (read only).
  const pager = (from: ReadFrom) =>
    coalesce<Page, Pet[]>({
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
        const at = (which: number[], field: keyof Page) => which.map((n) => (pages[n] as Page)[field]);
        await Promise.all([
          run(plain, petQuery('pets-list-many', PET_STATEMENTS.listMany, [at(plain, 'after'), at(plain, 'limit')])),
          run(filtered, petQuery('pets-list-by-status-many', PET_STATEMENTS.listByStatusMany, [at(filtered, 'status'), at(filtered, 'after'), at(filtered, 'limit')])),
        ]);
        return answers;
      },
    });
  const pagers = { primary: pager('primary'), replica: pager('replica') };

  return {
    /** At most `limit` pets with an id above `after`, in id order (keyset pagination). */
    /** Coalesced with the lists that arrive at the same time (src/db/coalesce.ts). */
    /** The pets may be shared with other calls: read only. */
    listPets(limit: number, status: PetStatus | undefined, after = 0, from: ReadFrom = 'replica'): Promise<readonly Readonly<Pet>[]> {
      return pagers[from]({ limit, status, after });
    },

    async secret(name: string): Promise<Buffer> {
      const result = await pool.query<{ value: Buffer }>('SELECT value FROM service_secrets WHERE name = $1', [name]);
      const row = result.rows[0];
      if (!row) throw new Error(`service secret ${name} is missing: run the migrations`);
      return row.value;
    },

    /** Coalesced with the creates that arrive at the same time (src/db/coalesce.ts). */
    createPet(pet: NewPet): Promise<Pet> {
      return insertPet(pet);
    },

    /**
     * Stores the pet and completes the claimed idempotency key in one statement (so one
     * transaction): either both happen or neither, so a retry can never add the pet twice.
     * One statement rather than BEGIN, INSERT, UPDATE, COMMIT: inserting into pets holds
     * the table's id-order lock until commit (migrations/1763700000004_…), and a statement
     * holds it for no extra round trip.
     */
    async createPetIdempotently(pet: NewPet, scope: IdempotencyScope, location: { before: string; after: string }): Promise<Pet> {
      const inserted = await pool.query<PetRow>(
        petQuery('pets-insert-idempotent', PET_STATEMENTS.insertIdempotent, [pet.name, pet.categoryId, pet.status ?? null, scope.apiKeyId, scope.key, location.before, location.after]),
      );
      return toPet(inserted.rows[0] as PetRow);
    },

    /**
     * Claims a key for a request with this body hash, or says why not. An expired key (past
     * the retention) starts over; a claim whose request died (lease over, same body) is
     * taken over.
     */
    async claimIdempotencyKey(scope: IdempotencyScope, hash: Buffer, leaseMs: number): Promise<IdempotencyClaim> {
      const claimed = await pool.query({
        name: 'idempotency-claim',
        text: `INSERT INTO idempotency_keys AS k (api_key_id, key, request_hash, locked_until)
               VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
               ON CONFLICT (api_key_id, key) DO UPDATE
                 SET request_hash = EXCLUDED.request_hash, locked_until = EXCLUDED.locked_until, created_at = now(),
                     status_code = NULL, response_body = NULL, location = NULL
                 WHERE k.created_at < now() - interval '${IDEMPOTENCY_RETENTION_HOURS} hours'
                    OR (k.status_code IS NULL AND k.locked_until < now() AND k.request_hash = EXCLUDED.request_hash)
               RETURNING 1`,
        values: [scope.apiKeyId, scope.key, hash, leaseMs],
      });
      if (claimed.rowCount === 1) return { outcome: 'claimed' };
      const existing = await pool.query<{ request_hash: Buffer; status_code: number | null; response_body: unknown; location: string | null }>({
        name: 'idempotency-read',
        text: 'SELECT request_hash, status_code, response_body, location FROM idempotency_keys WHERE api_key_id = $1 AND key = $2',
        values: [scope.apiKeyId, scope.key],
      });
      const row = existing.rows[0];
      if (!row) return this.claimIdempotencyKey(scope, hash, leaseMs); // purged in between
      if (!row.request_hash.equals(hash)) return { outcome: 'reused' };
      if (row.status_code === null) return { outcome: 'in-flight' };
      return { outcome: 'replay', status: row.status_code, body: row.response_body, location: row.location };
    },

    /** Gives a claim back when its request failed, so that a retry is processed afresh. */
    async releaseIdempotencyKey(scope: IdempotencyScope): Promise<void> {
      await pool.query('DELETE FROM idempotency_keys WHERE api_key_id = $1 AND key = $2 AND status_code IS NULL', [scope.apiKeyId, scope.key]);
    },

    /** Deletes keys past the retention; returns how many. */
    async purgeIdempotencyKeys(): Promise<number> {
      const result = await pool.query(`DELETE FROM idempotency_keys WHERE created_at < now() - interval '${IDEMPOTENCY_RETENTION_HOURS} hours'`);
      return result.rowCount ?? 0;
    },

    /** Coalesced with the lookups that arrive at the same time (src/db/coalesce.ts). */
    async getPet(id: number, from: ReadFrom = 'replica'): Promise<Pet | undefined> {
      let row = await lookups[from](id);
      // Not on a lagging replica may still mean created a moment ago: the primary decides.
      if (!row && from === 'replica' && replica) row = await lookups.primary(id);
      return row ? toPet(row) : undefined;
    },

    /** Hashes of every key that is not revoked, with its id and name. */
    async activeApiKeys(): Promise<{ hash: Buffer; id: number; name: string }[]> {
      const result = await pool.query<{ key_hash: Buffer; id: string; name: string }>(
        'SELECT key_hash, id, name FROM api_keys WHERE revoked_at IS NULL',
      );
      return result.rows.map((r) => ({ hash: r.key_hash, id: Number(r.id), name: r.name }));
    },

    async findActiveApiKey(hash: Buffer): Promise<{ id: number; name: string } | undefined> {
      const result = await pool.query<{ id: string; name: string }>({
        name: 'api-keys-find',
        text: 'SELECT id, name FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
        values: [hash],
      });
      const row = result.rows[0];
      return row ? { id: Number(row.id), name: row.name } : undefined;
    },

    async insertApiKey(name: string, hash: Buffer): Promise<ApiKeyRecord> {
      const result = await pool.query<{ id: string; name: string; created_at: Date; revoked_at: Date | null }>(
        'INSERT INTO api_keys (name, key_hash) VALUES ($1, $2) RETURNING id, name, created_at, revoked_at',
        [name, hash],
      );
      const row = result.rows[0]!;
      return { id: Number(row.id), name: row.name, createdAt: row.created_at, revokedAt: row.revoked_at };
    },

    async listApiKeys(): Promise<ApiKeyRecord[]> {
      const result = await pool.query<{ id: string; name: string; created_at: Date; revoked_at: Date | null }>(
        'SELECT id, name, created_at, revoked_at FROM api_keys ORDER BY id',
      );
      return result.rows.map((r) => ({ id: Number(r.id), name: r.name, createdAt: r.created_at, revokedAt: r.revoked_at }));
    },

    /** Returns false when no active key has this id. */
    async revokeApiKey(id: number): Promise<boolean> {
      const result = await pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id]);
      return result.rowCount === 1;
    },

    async countApiKeys(): Promise<number> {
      const result = await pool.query<{ n: string }>('SELECT count(*) AS n FROM api_keys');
      return Number(result.rows[0]?.n ?? 0);
    },
  };
}

export type Store = ReturnType<typeof createStore>;
