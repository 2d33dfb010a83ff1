// Imports of pets (docs/decisions/0009-pet-imports.md): the pet_imports table and the parts
// of each import's body (migrations/1763700000022_pet-imports.sql).
//
// Invariants:
// 1. An import exists with every byte of its body, or not at all: the request stores the
//    parts and then the import's row in one transaction, and answers 202 after COMMIT.
// 2. Only the worker holding the import's advisory lock writes its rows and counts, and each
//    batch commits the pets it adds with the counts and where the next batch starts, in one
//    transaction that first takes the import's turn (TURN_LOCK): a worker that resumes starts
//    where the last commit left off, and a cancel waits for the batch in flight, and no
//    batch after it adds anything.
import type { Readable } from 'node:stream';
import type pg from 'pg';
import { appendOrdered, finalPage } from '../db/append-order.js';
import { connectionHolders } from '../db/held-connections.js';
import { Serialized } from '../db/serialized.js';
import { inTransaction } from '../db/transaction.js';
import { execute, query, statement, type Queryable } from '../db/query.js';
import type { components } from '../../generated/v1.js';
import { ApiError } from '../errors/catalogue.js';
import { streamTooLarge } from '../errors/media-type.js';
import { jsonbSafeText, rowsStart, type ImportFormat, type RowError, type RowsStart } from './pet-import-rows.js';

/** Imports are paged whole (migration 1763700000022). */
const IMPORTS = appendOrdered('pet_imports');

export type PetImport = components['schemas']['PetImport'];
export type ErrorPolicy = PetImport['errorPolicy'];
export type ImportStatus = PetImport['status'];

/** The body is stored in parts of this size (the last shorter); the service holds about one at a time. */
export const PART_BYTES = 1024 * 1024;

/** The advisory lock namespace of the imports' workers (the key's first half; the import's id is the second). */
const WORKER_LOCK = 0x70696d70; // 'pimp'
/**
 * The namespace of the transaction-level lock a batch and a cancel take first: the lock
 * manager grants it in the order it was asked, so a cancel that waits for a batch in flight
 * comes before the next batch (a row lock would not: the batch updates the row, and the next
 * one locks the new version without queueing behind the cancel).
 */
const TURN_LOCK = 0x70696d74; // 'pimt'
const TURN = `pg_advisory_xact_lock(${TURN_LOCK}, ($1::bigint % 2147483647)::int)`;

/** What a worker reads of an import. */
export interface ImportRow {
  id: number;
  status: ImportStatus;
  format: ImportFormat;
  error_policy: ErrorPolicy;
  dry_run: boolean;
  upload_id: number;
  part_size: number;
  size: number;
  columns: string[] | null;
  rows_offset: number;
  pass: 'validate' | 'import';
  next_offset: number;
  next_line: number;
  /** Animals added by the batches committed so far. */
  rows_imported: number;
}

const S = {
  upload: statement<{ id: number }>('pet-imports-upload', "SELECT nextval('pet_import_uploads_seq') AS id"),
  part: statement<Record<string, never>>('pet-imports-insert-part', 'INSERT INTO pet_import_parts (upload_id, seq, data) VALUES ($1, $2, $3)'),
  create: statement<{ id: number; json: string }>(
    'pet-imports-create',
    `INSERT INTO pet_imports (format, error_policy, dry_run, upload_id, part_size, size, columns, rows_offset, pass, next_offset, next_line)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $8, $10) RETURNING id, pet_import_json(pet_imports) AS json`,
  ),
  get: statement<{ json: string }>('pet-imports-get', 'SELECT pet_import_json(pet_imports) AS json FROM pet_imports WHERE id = $1'),
  list: statement<{ id: number; json: string; final: boolean }>(
    'pet-imports-list',
    `SELECT id, pet_import_json(pet_imports) AS json, ${IMPORTS.isFinal()} AS final FROM pet_imports WHERE id > $1 ORDER BY id LIMIT $2::int + 1`,
  ),
  turn: statement<Record<string, never>>('pet-imports-turn', `SELECT FROM ${TURN}`),
  // The import cancelled, its parts deleted; no row when it is not queued or running.
  cancel: statement<{ json: string }>(
    'pet-imports-cancel',
    `WITH cancelled AS (
      UPDATE pet_imports SET status = 'cancelled', finished_at = now() WHERE id = $1 AND status IN ('queued', 'running')
      RETURNING upload_id, pet_import_json(pet_imports) AS json
    ), parts AS (DELETE FROM pet_import_parts p USING cancelled c WHERE p.upload_id = c.upload_id)
    SELECT json FROM cancelled`,
  ),
  status: statement<{ status: ImportStatus }>('pet-imports-status', 'SELECT status FROM pet_imports WHERE id = $1'),
  // What /metrics shows of the imports not ended (src/plugins/metrics.ts), by their index.
  counts: statement<{ queued: number; running: number; oldest: number }>(
    'pet-imports-counts',
    `SELECT count(*) FILTER (WHERE status = 'queued')::int AS queued, count(*) FILTER (WHERE status = 'running')::int AS running,
      coalesce(extract(epoch FROM now() - min(submitted_at) FILTER (WHERE status = 'queued')), 0)::float8 AS oldest
    FROM pet_imports WHERE status IN ('queued', 'running')`,
  ),
  // The worker's.
  open: statement<{ id: number }>('pet-imports-open', "SELECT id FROM pet_imports WHERE status IN ('queued', 'running') ORDER BY id LIMIT 20"),
  tryLock: statement<{ locked: boolean }>('pet-imports-try-lock', `SELECT pg_try_advisory_lock(${WORKER_LOCK}, ($1::bigint % 2147483647)::int) AS locked`),
  unlock: statement<{ unlocked: boolean }>('pet-imports-unlock', `SELECT pg_advisory_unlock(${WORKER_LOCK}, ($1::bigint % 2147483647)::int) AS unlocked`),
  load: statement<ImportRow>(
    'pet-imports-load',
    `SELECT id, status, format, error_policy, dry_run, upload_id, part_size, size, columns, rows_offset, pass, next_offset, next_line, rows_imported::int
    FROM pet_imports WHERE id = $1`,
  ),
  start: statement<Record<string, never>>('pet-imports-start', "UPDATE pet_imports SET status = 'running', started_at = now() WHERE id = $1 AND status = 'queued'"),
  readPart: statement<{ data: Buffer }>('pet-imports-read-part', 'SELECT data FROM pet_import_parts WHERE upload_id = $1 AND seq = $2'),
  lockForBatch: statement<{ status: ImportStatus }>('pet-imports-lock', 'SELECT status FROM pet_imports WHERE id = $1 FOR UPDATE'),
  // $2 rows read, $3 imported, $4 refused, $5 the batch's refused rows (the first 20 of
  // all are kept), $6 and $7 where the next batch starts.
  progress: statement<Record<string, never>>(
    'pet-imports-progress',
    `UPDATE pet_imports SET rows_read = rows_read + $2, rows_imported = rows_imported + $3, rows_refused = rows_refused + $4,
      errors = CASE WHEN jsonb_array_length(errors) >= 20 OR $5::jsonb = '[]' THEN errors
        ELSE (SELECT jsonb_agg(e ORDER BY n) FROM (SELECT e, n FROM jsonb_array_elements(errors || $5::jsonb) WITH ORDINALITY AS t(e, n) ORDER BY n LIMIT 20) AS first) END,
      next_offset = $6, next_line = $7
    WHERE id = $1`,
  ),
  importPass: statement<Record<string, never>>('pet-imports-import-pass', "UPDATE pet_imports SET pass = 'import', next_offset = rows_offset, next_line = $2 WHERE id = $1"),
  // The import ended ($2 its status, $3 why it failed), its parts deleted.
  finish: statement<Record<string, never>>(
    'pet-imports-finish',
    `WITH ended AS (
      UPDATE pet_imports SET status = $2, message = $3, finished_at = now() WHERE id = $1 AND status = 'running' RETURNING upload_id
    ) DELETE FROM pet_import_parts p USING ended e WHERE p.upload_id = e.upload_id`,
  ),
};

/** How a body is checked as it arrives: its limit, and how many bodies an instance stores at once. */
export interface SubmitLimits {
  maxBytes: number;
}

export interface PetImportsOptions extends SubmitLimits {
  /** Told of each import stored (the worker starts on it at once). */
  onSubmitted?: () => void;
  /** Told of each import cancelled. */
  onCancelled?: () => void;
}

export interface SubmitOptions {
  format: ImportFormat;
  errorPolicy: ErrorPolicy;
  dryRun: boolean;
  /** The body's length as its Content-Length declares it, when it does: one past the limit is refused before a byte is read. */
  declaredBytes?: number | undefined;
}

/** Bodies being stored at once on this instance: each holds a connection while it arrives (src/db/held-connections.ts). */
const storing = connectionHolders();

/**
 * Stores `body` as the parts of a new import, then its row, in one transaction on `pool`
 * (invariant 1); the import's JSON. A body past `maxBytes` is a 413 as soon as it passes
 * it; bytes that are not UTF-8, and a CSV header or an empty body `rowsStart` refuses, are
 * a 400. Either way nothing is stored.
 */
async function store(pool: pg.Pool, body: Readable, options: SubmitOptions, { maxBytes }: SubmitLimits): Promise<{ id: number; json: string }> {
  const tooLarge = () => streamTooLarge(maxBytes);
  if (options.declaredBytes !== undefined && options.declaredBytes > maxBytes) throw tooLarge();
  const hold = storing.take(pool);
  if ('full' in hold) throw new ApiError('unavailable', `${hold.full === 1 ? 'An import is' : `${hold.full} imports are`} being received on this instance, the most it takes at once: retry later`);
  try {
    return await inTransaction(pool, async (tx) => {
      const [upload] = await query(tx, S.upload);
      if (!upload) throw new Error('no upload id drawn');
      const utf8 = new TextDecoder('utf-8', { fatal: true });
      let size = 0;
      let seq = 0;
      // One buffer, filled and stored again for each part (the statement has sent it when it resolves).
      const part = Buffer.allocUnsafe(PART_BYTES);
      let filled = 0;
      let head: Buffer | undefined = Buffer.alloc(0);
      let start: RowsStart | undefined;
      const flush = async (): Promise<void> => {
        await execute(tx, S.part, [upload.id, seq++, part.subarray(0, filled)]);
        filled = 0;
      };
      for await (const chunk of body as AsyncIterable<Buffer>) {
        if (size + chunk.length > maxBytes) throw tooLarge();
        try {
          utf8.decode(chunk, { stream: true });
        } catch {
          throw new ApiError('bad_request', `Body is not valid UTF-8 (in its bytes ${size} to ${size + chunk.length - 1}): save the file as UTF-8 and send it again`);
        }
        if (head !== undefined) {
          head = Buffer.concat([head, chunk]);
          start = rowsStart(options.format, head, false);
          if (start !== undefined) head = undefined;
        }
        size += chunk.length;
        for (let from = 0; from < chunk.length; ) {
          const taken = chunk.copy(part, filled, from);
          filled += taken;
          from += taken;
          if (filled === PART_BYTES) await flush();
        }
      }
      try {
        utf8.decode();
      } catch {
        throw new ApiError('bad_request', `Body is not valid UTF-8 (it ends within a character, at byte ${size - 1}): save the file as UTF-8 and send it again`);
      }
      start ??= rowsStart(options.format, head ?? Buffer.alloc(0), true);
      if (start === undefined) throw new Error('rowsStart decided nothing on a whole body');
      if (filled > 0) await flush();
      const pass = options.errorPolicy === 'skip' && !options.dryRun ? 'import' : 'validate';
      const values = [options.format, options.errorPolicy, options.dryRun, upload.id, PART_BYTES, size, start.columns ?? null, start.offset, pass, start.line];
      const [created] = await query(tx, S.create, values);
      if (!created) throw new Error('no import created');
      return created;
    });
  } finally {
    hold.release();
  }
}

export interface PetImportsPage {
  imports: Serialized<PetImport[]>;
  next: number | undefined;
}

export function createPetImportsRepository(pool: pg.Pool, { onSubmitted, onCancelled, ...limits }: PetImportsOptions) {
  return {
    /** Stores a body as a new import, `queued` (see `store`). */
    async submit(body: Readable, options: SubmitOptions): Promise<{ id: number; petImport: Serialized<PetImport> }> {
      const { id, json } = await store(pool, body, options, limits);
      onSubmitted?.();
      return { id, petImport: new Serialized<PetImport>(json) };
    },

    async get(id: number): Promise<Serialized<PetImport> | undefined> {
      const [row] = await query(pool, S.get, [id]);
      return row ? new Serialized<PetImport>(row.json) : undefined;
    },

    /** At most `limit` imports after `after`, in id order, each once (the append order). */
    async list(after: number, limit: number): Promise<PetImportsPage> {
      const { rows, next } = finalPage(await query(pool, S.list, [after, limit]), limit, after);
      return { imports: new Serialized<PetImport[]>(`[${rows.map((r) => r.json).join(',')}]`), next };
    },

    /** The imports not ended, and how long the oldest queued one has waited, in seconds (/metrics). */
    async open(): Promise<{ queued: number; running: number; oldestQueuedSeconds: number }> {
      const [row] = await query(pool, S.counts);
      return { queued: row?.queued ?? 0, running: row?.running ?? 0, oldestQueuedSeconds: row?.oldest ?? 0 };
    },

    /** Cancels a queued or running import; what it was instead when it had ended, or not found. */
    async cancel(id: number): Promise<{ cancelled: Serialized<PetImport> } | { ended: ImportStatus } | undefined> {
      const [row] = await inTransaction(pool, async (tx) => {
        await query(tx, S.turn, [id]);
        return query(tx, S.cancel, [id]);
      });
      if (row) {
        onCancelled?.();
        return { cancelled: new Serialized<PetImport>(row.json) };
      }
      const [found] = await query(pool, S.status, [id]);
      return found ? { ended: found.status } : undefined;
    },
  };
}

export type PetImportsRepository = ReturnType<typeof createPetImportsRepository>;

/** jsonb takes no U+0000 and no lone surrogate: a row error's texts without them. */
const jsonbSafe = (error: RowError): RowError => ({ line: error.line, field: jsonbSafeText(error.field), message: jsonbSafeText(error.message) });

/** What the worker does with the imports table (src/catalogue/pet-import-worker.ts). */
export const importWork = {
  /** The imports not ended, oldest first. */
  open: async (on: Queryable): Promise<number[]> => (await query(on, S.open)).map((r) => r.id),
  /** Takes the import's worker lock on this session, if no other session holds it. */
  tryLock: async (on: Queryable, id: number): Promise<boolean> => (await query(on, S.tryLock, [id]))[0]?.locked === true,
  unlock: async (on: Queryable, id: number): Promise<void> => void (await query(on, S.unlock, [id])),
  load: async (on: Queryable, id: number): Promise<ImportRow | undefined> => (await query(on, S.load, [id]))[0],
  start: async (on: Queryable, id: number): Promise<void> => void (await execute(on, S.start, [id])),
  /** Part `seq` of an upload; undefined once the import's parts are deleted (it ended). */
  part: async (on: Queryable, uploadId: number, seq: number): Promise<Buffer | undefined> => (await query(on, S.readPart, [uploadId, seq]))[0]?.data,
  /** Takes the import's turn, then locks its row, for a batch; its status. */
  lockForBatch: async (tx: Queryable, id: number): Promise<ImportStatus | undefined> => {
    await query(tx, S.turn, [id]);
    return (await query(tx, S.lockForBatch, [id]))[0]?.status;
  },
  progress: async (tx: Queryable, id: number, counts: { read: number; imported: number; refused: number; errors: readonly RowError[] }, next: { offset: number; line: number }): Promise<void> =>
    void (await execute(tx, S.progress, [id, counts.read, counts.imported, counts.refused, JSON.stringify(counts.errors.slice(0, 20).map(jsonbSafe)), next.offset, next.line])),
  importPass: async (tx: Queryable, id: number, line: number): Promise<void> => void (await execute(tx, S.importPass, [id, line])),
  // Its parts (up to IMPORT_MAX_BYTES) are deleted with no statement timeout: an import that
  // could not be ended would hold every import behind it.
  finish: async (tx: Queryable, id: number, status: 'succeeded' | 'failed', message?: string): Promise<void> => {
    await tx.query("SELECT set_config('statement_timeout', '0', true)");
    await execute(tx, S.finish, [id, status, message ?? null]);
  },
};
