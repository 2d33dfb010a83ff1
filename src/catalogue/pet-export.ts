// exportPets: every pet that matches listPets' filters, as CSV or NDJSON, streamed from one
// snapshot. A connection of its own holds a REPEATABLE READ READ ONLY transaction, whose
// snapshot is taken by its first statement, before the answer starts; a server-side cursor
// (pg-query-stream, over pg-cursor) reads the rows a batch at a time as the client takes
// them (stream backpressure), so memory stays constant whatever the catalogue's size.
// CSV is written by csv-stringify (the `csv` project): quoting is its, not ours.
//
// The connection goes back to the pool when the export ends (after COMMIT), and is
// destroyed when it does not end well (the client went away, a statement failed): a
// connection left mid-transaction with an open cursor is never reused. Why this shape, and
// the invariants a change keeps: docs/decisions/0008-pet-export.md.
import { pipeline, Readable, Transform, type TransformCallback } from 'node:stream';
import { stringify } from 'csv-stringify';
import type pg from 'pg';
import QueryStream from 'pg-query-stream';
import type { components } from '../../generated/v1.js';
import { connectionHolders } from '../db/held-connections.js';
import { ApiError } from '../errors/catalogue.js';

type Pet = components['schemas']['Pet'];

/** The media types an export is written in, the default first. */
export const EXPORT_FORMATS = ['text/csv', 'application/x-ndjson'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The CSV columns, in order: the Pet's fields. */
export const CSV_COLUMNS = ['id', 'name', 'categoryId', 'status', 'tags'] as const;

/** listPets' filters, as an export takes them (all optional, ANDed). */
export interface ExportFilters {
  status?: Pet['status'] | undefined;
  categoryId?: number | undefined;
  ids?: readonly number[] | undefined;
}

/** What a row of the export's statement holds: the pet's JSON, or its CSV fields as text. */
const SELECTED: Record<ExportFormat, string> = {
  'application/x-ndjson': 'pet_json(pets) AS json',
  'text/csv': "id::text AS id, name, category_id::text AS category_id, coalesce(status, '') AS status, coalesce(array_to_string(tags, ' '), '') AS tags",
};

/**
 * The export's statement: every pet that matches the filters, in id order (`pets.id`, the
 * column: CSV's `id` is its text, which would sort 10 before 9). A filter not given is NULL
 * and holds for every pet.
 */
const exportSql = (format: ExportFormat): string => `SELECT ${SELECTED[format]} FROM pets
  WHERE deleted_at IS NULL AND ($1::text IS NULL OR status = $1) AND ($2::bigint IS NULL OR category_id = $2)
    AND ($3::bigint[] IS NULL OR id = ANY ($3::bigint[]))
  ORDER BY pets.id`;

/** Rows fetched per round trip. */
const BATCH_SIZE = 500;

/** Exports running at once on this instance: at most half each pool's connections (src/db/held-connections.ts). */
const exporting = connectionHolders();

/** The text is written out in pieces of about this size, not a piece per row. */
const PIECE_BYTES = 64 * 1024;

/**
 * Gathers the text into pieces of PIECE_BYTES (the last one shorter): a row is some 30 to
 * 100 bytes, and a write per row would cost the answer a chunk header and a system call each.
 */
function pieces(): Transform {
  let held: string[] = [];
  let size = 0;
  return new Transform({
    transform(text: Buffer | string, _encoding: BufferEncoding, done: TransformCallback) {
      const piece = String(text);
      held.push(piece);
      size += piece.length;
      if (size < PIECE_BYTES) return done();
      const out = held.join('');
      held = [];
      size = 0;
      done(null, out);
    },
    flush(done: TransformCallback) {
      done(null, held.length ? held.join('') : undefined);
    },
  });
}

/** A row of the export's statement as the format's text (a JSON line) or record (CSV fields). */
type Row = { json: string } | { id: string; name: string; category_id: string; status: string; tags: string };
function formatter(format: ExportFormat): Transform {
  return new Transform({
    writableObjectMode: true,
    readableObjectMode: format === 'text/csv',
    transform(row: Row, _encoding: BufferEncoding, done: TransformCallback) {
      done(null, 'json' in row ? `${row.json}\n` : [row.id, row.name, row.category_id, row.status, row.tags]);
    },
  });
}

/**
 * Passes the text on, and calls `idle` when none has passed for `ms`: a client that stopped
 * reading (the answer's buffers full) or a statement that stopped producing.
 */
function watched(ms: number, idle: () => void): Transform {
  const timer = setTimeout(idle, ms);
  return new Transform({
    transform(text: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
      timer.refresh();
      done(null, text);
    },
    flush(done: TransformCallback) {
      clearTimeout(timer);
      done();
    },
    destroy(error: Error | null, done: (error: Error | null) => void) {
      clearTimeout(timer);
      done(error);
    },
  });
}

/**
 * The export's text, as a stream: the snapshot is taken before this resolves (a database
 * that cannot be reached rejects it, before any answer is sent). Invariant: an export holds
 * a connection and a snapshot (which holds back vacuum) only while its text moves; one that
 * moves nothing for `idleMs` is ended, and its connection destroyed.
 */
export async function exportPets(pool: pg.Pool, filters: ExportFilters, format: ExportFormat, idleMs: number): Promise<Readable> {
  const hold = exporting.take(pool);
  if ('full' in hold) throw new ApiError('unavailable', `${hold.full} exports are running on this instance, the most it runs at once: retry later`);
  // Once, when the export's text has all been read or the export has failed or been left.
  const over = hold.release;
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    over();
    throw error;
  }
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    // The cursor's statement lasts as long as its client reads, which the pool's statement
    // timeout (DB_STATEMENT_TIMEOUT_MS, 5 s) would cut short: none for this transaction.
    // The exports running at once are bounded instead (above). The snapshot is taken by
    // this statement, the transaction's first that reads, not by BEGIN.
    await client.query("SELECT set_config('statement_timeout', '0', true)");
  } catch (error) {
    client.release(true);
    over();
    throw error;
  }
  const values = [filters.status ?? null, filters.categoryId ?? null, filters.ids ? [...filters.ids] : null];
  const rows = client.query(new QueryStream(exportSql(format), values, { batchSize: BATCH_SIZE, highWaterMark: BATCH_SIZE }));
  // An error the checked-out connection reports on its own (its session ended, a restart)
  // has a listener while the export holds it, and destroys the export's stream with it.
  const lost = (error: Error) => text.destroy(error);
  client.on('error', lost);
  // The connection goes back once: after COMMIT when every stream has ended well, or
  // destroyed as soon as the text is (an error, the client gone, HEAD), without waiting for
  // the cursor's fetch in flight. The export counts among those running until then.
  let given = false;
  const giveBack = (failed: boolean) => {
    if (given) return;
    given = true;
    over();
    client.off('error', lost);
    if (failed) return client.release(true);
    client.query('COMMIT').then(
      () => client.release(),
      () => client.release(true),
    );
  };
  const done = (error: Error | null | undefined) => giveBack(Boolean(error));
  // Before its first byte, the answer is 503 (the statement produced nothing: retry); after
  // it, the connection is cut and the client sees a truncated answer.
  const idle = () => text.destroy(new ApiError('unavailable', `The export moved nothing for ${idleMs} ms: retry later`));
  const text: Readable =
    format === 'application/x-ndjson'
      ? pipeline(rows, formatter(format), pieces(), watched(idleMs, idle), done)
      : pipeline(rows, formatter(format), stringify({ header: true, columns: [...CSV_COLUMNS], record_delimiter: 'windows', quoted_match: /[\r\n]/ }), pieces(), watched(idleMs, idle), done);
  // The export stops counting when its last byte has been read, before the cursor's close
  // and the COMMIT: an export answered in full never makes the next one wait for those.
  text.once('end', over);
  text.once('close', () => {
    if (!text.readableEnded) giveBack(true);
  });
  return text;
}
