// Runs imports (docs/decisions/0009-pet-imports.md): on each instance, one import at a time,
// taken from those not ended, oldest first, under a session advisory lock on its id. A
// session that dies (its instance killed) releases its lock, and another instance's worker,
// or this one's after a restart, takes the import up where its last batch committed.
//
// A pass reads the rows from where the import's row says the next batch starts, and commits
// a batch of them at a time (invariant 2 of src/catalogue/pet-imports.ts): in one
// transaction, under the import's row lock, the pets it adds, its counts and its refused
// rows, and where the next batch starts. The next batch is read while one commits.
import type { FastifyBaseLogger } from 'fastify';
import type pg from 'pg';
import { transactionOn, withConnection, type HeldConnection } from '../db/transaction.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { failureLog } from '../jobs/failures.js';
import { readRows, UnreadableRows, type NewPet, type RowError } from './pet-import-rows.js';
import { importWork, type ImportRow, type ImportStatus } from './pet-imports.js';
import type { PetsRepository } from './pets.js';

export interface ImportWorkerOptions {
  /** Rows per batch (IMPORT_BATCH_ROWS). */
  batchRows: number;
  log: FastifyBaseLogger;
  /** Told of the rows each committed batch added and refused. */
  onRows?: (imported: number, refused: number) => void;
  /** Told of each import this worker ended. */
  onFinished?: (status: 'succeeded' | 'failed') => void;
}

/** Whether the database refused a statement for its data (SQLSTATE class 22, a data exception, or 23, a constraint), not for a lost connection or a timeout. */
const refusedByDatabase = (error: unknown): boolean => /^2[23]/.test(String((error as { code?: unknown }).code ?? ''));

/** Whether a statement ran past the pool's statement timeout (SQLSTATE 57014). */
const timedOut = (error: unknown): boolean => (error as { code?: unknown }).code === '57014';

/**
 * How many times in a row an import may fail at one place, on an error that is not the
 * database being away, before it is ended failed: an error that recurs there at every try
 * would otherwise hold the import running, and every import behind it queued, for ever
 * (invariant 6 of docs/decisions/0009-pet-imports.md).
 */
const TRIES = 3;

/** An import's parts were deleted under the worker: it was cancelled. */
class PartsGone extends Error {}

interface Batch {
  /** The lines its first and last rows start on. */
  firstLine: number | undefined;
  lastLine: number | undefined;
  pets: NewPet[];
  errors: RowError[];
  read: number;
  refused: number;
  next: { offset: number; line: number } | undefined;
  /** The rows ended. */
  ended: boolean;
  /** The first bad row, where a bad row ends the import (a `stop` import's validation). */
  bad?: RowError;
  unreadable?: UnreadableRows;
  gone?: boolean;
}

type PassOutcome = 'done' | 'stopped';

export function createImportWorker(pool: pg.Pool, pets: PetsRepository, options: ImportWorkerOptions) {
  let running: Promise<void> | undefined;
  let closing = false;
  const failures = failureLog(options.log);
  // Rows per batch of an import whose batch ran past the statement timeout (which took
  // `limitMs` to cancel it): a quarter of the last size, down to one row, tried again from its
  // last committed batch; a batch that commits in under a quarter of that time doubles the
  // size for the next, up to IMPORT_BATCH_ROWS.
  const batchRowsOf = new Map<number, { size: number; limitMs: number }>();
  // Per import, where it last failed (its pass and next byte) and how many times in a row there.
  const failedAt = new Map<number, { at: string; times: number }>();

  /** The body of `row` from byte `offset`, part by part. */
  async function* body(row: ImportRow, offset: number): AsyncGenerator<Buffer> {
    const first = Math.floor(offset / row.part_size);
    for (let seq = first; seq * row.part_size < row.size; seq++) {
      const data = await importWork.part(pool, row.upload_id, seq);
      if (!data) throw new PartsGone();
      yield seq === first ? data.subarray(offset % row.part_size) : data;
    }
  }

  /** Reads and commits the rows of `row`'s pass from where it stands. */
  async function pass(held: HeldConnection, row: ImportRow): Promise<PassOutcome> {
    const validating = row.pass === 'validate';
    const adds = !validating;
    // A `stop` import counts its rows in its validation; its import pass only adds them.
    const counts = validating || row.error_policy === 'skip';
    const stopAtBad = validating && row.error_policy === 'stop';
    const shrunk = batchRowsOf.get(row.id);
    let size = shrunk?.size ?? options.batchRows;
    const rows = readRows(row.format, body(row, row.next_offset), { columns: row.columns, offset: row.next_offset, line: row.next_line })[Symbol.asyncIterator]();
    const collect = async (): Promise<Batch> => {
      const batch: Batch = { firstLine: undefined, lastLine: undefined, pets: [], errors: [], read: 0, refused: 0, next: undefined, ended: false };
      try {
        while (batch.read < size) {
          const read = await rows.next();
          if (read.done) {
            batch.ended = true;
            break;
          }
          batch.read++;
          batch.firstLine ??= read.value.line;
          batch.lastLine = read.value.line;
          batch.next = read.value.next;
          if ('pet' in read.value) {
            batch.pets.push(read.value.pet);
            continue;
          }
          batch.refused++;
          if (batch.errors.length < 20) batch.errors.push(read.value.error);
          if (stopAtBad) {
            batch.bad = read.value.error;
            break;
          }
        }
      } catch (error) {
        if (error instanceof UnreadableRows) batch.unreadable = error;
        else if (error instanceof PartsGone) batch.gone = true;
        else throw error;
      }
      return batch;
    };
    // Whether animals were added before the batch being read: an unreadable row's message
    // says so.
    let addedBefore = row.rows_imported > 0;
    /** Commits a batch (invariant 2 of src/catalogue/pet-imports.ts); false when the import is no longer running. */
    const commit = (batch: Batch): Promise<boolean> =>
      transactionOn(held, async (tx) => {
        if ((await importWork.lockForBatch(tx, row.id)) !== 'running') return false;
        if (adds && batch.pets.length > 0) await pets.addBatch(batch.pets, tx);
        if (batch.read > 0 && batch.next) {
          const done = { read: counts ? batch.read : 0, imported: adds ? batch.pets.length : 0, refused: counts ? batch.refused : 0, errors: counts ? batch.errors : [] };
          await importWork.progress(tx, row.id, done, batch.next);
        }
        if (batch.bad) {
          const message = `Line ${batch.bad.line} was refused and errorPolicy is stop: no animal was added; fix the row (errors says how), or import with errorPolicy=skip`;
          await importWork.finish(tx, row.id, 'failed', message);
        } else if (batch.unreadable) {
          const added = adds && (addedBefore || batch.pets.length > 0) ? ' The animals of the rows before it were added.' : ' No animal was added.';
          await importWork.finish(tx, row.id, 'failed', `${batch.unreadable.message}.${added}`.slice(0, 500));
        }
        return true;
      });
    let pending: Promise<Batch> | undefined = collect();
    try {
      for (;;) {
        if (!pending) throw new Error('no batch read');
        const batch: Batch = await pending;
        const last = batch.ended || batch.bad !== undefined || batch.unreadable !== undefined || batch.gone === true;
        pending = last ? undefined : collect();
        let committed: boolean;
        const started = performance.now();
        try {
          committed = await commit(batch);
        } catch (error) {
          // A batch past the statement timeout is tried again, smaller, from where it started;
          // one row alone is tried again as any failure is (runOne counts the tries).
          if (timedOut(error) && size > 1) {
            batchRowsOf.set(row.id, { size: Math.max(1, Math.floor(size / 4)), limitMs: performance.now() - started });
            return 'stopped';
          }
          // A row the schema took and the database refuses (a check of its own) would fail
          // this batch at every attempt: the import fails instead, saying where.
          if (!refusedByDatabase(error)) throw error;
          const lines = `lines ${batch.firstLine ?? row.next_line} to ${batch.lastLine ?? row.next_line}`;
          await fail(held, row.id, `The database refused a row among ${lines} (SQLSTATE ${(error as { code: string }).code}); the rows before them were added. Fix that row, and import the rows from line ${batch.firstLine ?? row.next_line} on`);
          return 'stopped';
        }
        if (!committed || batch.gone) return 'stopped';
        addedBefore ||= adds && batch.pets.length > 0;
        if (shrunk && size < options.batchRows && (performance.now() - started) * 4 < shrunk.limitMs) {
          size = Math.min(options.batchRows, size * 2);
          batchRowsOf.set(row.id, { ...shrunk, size });
        }
        options.onRows?.(adds ? batch.pets.length : 0, counts ? batch.refused : 0);
        if (batch.bad || batch.unreadable) {
          options.onFinished?.('failed');
          return 'stopped';
        }
        if (batch.ended) return 'done';
        if (closing) return 'stopped';
      }
    } finally {
      await pending?.catch(() => undefined);
      await rows.return?.(undefined).catch(() => undefined);
    }
  }

  /** Ends the import `id` failed with `message`, unless it has ended meanwhile (a cancel). */
  async function fail(held: HeldConnection, id: number, message: string): Promise<void> {
    const ended = await transactionOn(held, async (tx) => {
      if ((await importWork.lockForBatch(tx, id)) !== 'running') return false;
      await importWork.finish(tx, id, 'failed', message.slice(0, 500));
      return true;
    });
    batchRowsOf.delete(id);
    failedAt.delete(id);
    if (ended) options.onFinished?.('failed');
  }

  /** Runs the import `id` (this session holds its lock) until it ends or the worker closes. */
  async function run(held: HeldConnection, id: number): Promise<void> {
    const { client } = held;
    let row = await importWork.load(client, id);
    if (!row || (row.status !== 'queued' && row.status !== 'running')) return;
    if (row.status === 'queued') await importWork.start(client, id);
    row = { ...row, status: 'running' };
    for (;;) {
      if ((await pass(held, row)) === 'stopped') return;
      const firstLine: number = row.format === 'text/csv' ? 2 : 1;
      const next = row.pass === 'validate' && !row.dry_run ? 'import' : 'end';
      const ended = await transactionOn(held, async (tx) => {
        const status: ImportStatus | undefined = await importWork.lockForBatch(tx, id);
        if (status !== 'running') return false;
        if (next === 'import') await importWork.importPass(tx, id, firstLine);
        else await importWork.finish(tx, id, 'succeeded');
        return true;
      });
      if (!ended) return;
      if (next === 'end') {
        options.onFinished?.('succeeded');
        return;
      }
      row = { ...row, pass: 'import', next_offset: row.rows_offset, next_line: firstLine };
    }
  }

  /** Takes one import no other worker holds and runs it; whether there was one. */
  async function runOne(): Promise<boolean> {
    return withConnection(pool, async (held) => {
      const open = await importWork.open(held.client);
      // What is kept of imports that have ended (here or on another instance) goes.
      for (const kept of [batchRowsOf, failedAt]) for (const id of kept.keys()) if (!open.includes(id)) kept.delete(id);
      for (const id of open) {
        if (closing) return false;
        if (!(await importWork.tryLock(held.client, id))) continue;
        try {
          await run(held, id);
          failedAt.delete(id);
        } catch (error) {
          // The database away: every import waits for it, and none is to blame. A statement
          // timeout counts as a try: one row, or one step, that never ends in time would
          // otherwise hold the import running for ever.
          if (isDatabaseUnavailable(error) && !timedOut(error)) throw error;
          const row = await importWork.load(held.client, id);
          const at = `${row?.pass}:${row?.next_offset}`;
          const last = failedAt.get(id);
          const times = last?.at === at ? last.times + 1 : 1;
          failedAt.set(id, { at, times });
          if (times < TRIES || !row) throw error;
          options.log.error({ err: { message: error instanceof Error ? error.message : String(error) }, import: id }, `pet import ${id}: failed ${times} times at line ${row.next_line}; ended failed`);
          const why = timedOut(error) ? 'took longer than the database allows a statement (DB_STATEMENT_TIMEOUT_MS)' : "failed (the service's log says why)";
          await fail(held, id, `The import could not go on at line ${row.next_line}: it ${why} ${times} times in a row; the rows before it were added. Import the rows from that line on again`);
        } finally {
          await importWork.unlock(held.client, id).catch(held.broken);
        }
        return true;
      }
      return false;
    });
  }

  return {
    /** Runs the imports waiting, one after the other, unless they are being run already. */
    poke(): void {
      if (running || closing) return;
      running = (async () => {
        while (!closing && (await runOne())) failures.works('pet imports');
      })()
        .catch((error: unknown) => failures.failed('pet imports', error, 'the import is taken up again where its last batch committed, at the next poll'))
        .finally(() => {
          running = undefined;
        });
    },
    /** Stops after the batch in flight: the import stays running, for another worker to go on with. */
    async close(): Promise<void> {
      closing = true;
      await running;
    },
  };
}

