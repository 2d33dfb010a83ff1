// An import's rows, read from its body (docs/decisions/0009-pet-imports.md): the header of a
// CSV body, checked when the body is submitted, and the rows after it, each a NewPet or the
// reason it is refused, with the byte where the next row starts (a batch that commits
// records it, and an import resumed after a crash starts there).
//
// CSV is read by csv-parse (RFC 4180, quoted fields over several lines); NDJSON line by line.
// Each row is checked against the contract's NewPet schema, as createPet checks its body,
// and refused with the words a 400 of createPet would give.
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse as parseCsv, type CsvError } from 'csv-parse';
import { parse as parseCsvText } from 'csv-parse/sync';
import type { components } from '../../generated/v1.js';
import { spec } from '../contract/spec.js';
import { ApiError, shown } from '../errors/catalogue.js';
import { ruleMessage } from '../errors/validation-messages.js';
import { inexactNumber, MAX_DEPTH, nestsDeeperThan } from '../http/json-text.js';

export type NewPet = components['schemas']['NewPet'];
export type ImportFormat = 'text/csv' | 'application/x-ndjson';

/** The columns a CSV import takes, required first. */
export const IMPORT_COLUMNS = ['name', 'categoryId', 'status', 'tags'] as const;
const REQUIRED_COLUMNS = ['name', 'categoryId'] as const;

/** A row (a CSV record, an NDJSON line) longer than this is refused: a NewPet takes a few hundred bytes. */
export const MAX_ROW_BYTES = 64 * 1024;

/** The parser is given a body this many bytes at a time. */
const FEED_BYTES = 16 * 1024;

/** A header row longer than this is refused: a file of one endless line is not a CSV header. */
export const MAX_HEADER_BYTES = 64 * 1024;

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** A CSV categoryId: decimal digits, as many as an id can have (the schema's maximum decides the rest). */
const DECIMAL = /^(?:0|[1-9][0-9]{0,15})$/;

/** Where a body's rows start: after its byte order mark, and after a CSV body's header row. */
export interface RowsStart {
  /** The CSV columns, in the header's order (none for NDJSON). */
  columns?: string[];
  offset: number;
  line: number;
}

const SAVE_WITH_LF = 'save the file with CRLF or LF line ends';
const CR_ALONE = `The lines end with CR alone: ${SAVE_WITH_LF}`;
/** JSON's white space: space, tab, LF, CR. */
const JSON_SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
/** An NDJSON row's end and the next row's start with CR alone between them. */
const CR_BETWEEN_ROWS = /\}[ \t]*\r[ \t\r]*\{/;

/**
 * Where the rows of a body whose first bytes are `head` start, once `head` holds the first
 * line whole (or is the whole body: `ended`); undefined while more is needed. A CSV header
 * that lacks `name` or `categoryId`, names another column or one twice, or an empty body,
 * is a 400 that says what to send.
 */
export function rowsStart(format: ImportFormat, head: Buffer, ended: boolean): RowsStart | undefined {
  const bom = head.subarray(0, 3).equals(BOM) ? 3 : 0;
  if (format === 'application/x-ndjson') {
    // Decided by the first byte that is not white space: an empty body (white space, a byte
    // order mark) is refused, however long.
    // JSON's white space (space, tab, LF, CR) before the first row, in bytes, however the body
    // arrives in chunks: held here, so bounded.
    let first = bom;
    while (first < head.length && JSON_SPACE.has(head[first] as number)) first++;
    if (first === head.length && ended) throw new ApiError('bad_request', 'Body is empty: send one NewPet as a JSON object per line');
    if (first - bom > MAX_HEADER_BYTES) throw new ApiError('bad_request', `Body starts with more than ${MAX_HEADER_BYTES} bytes of white space: send one NewPet as a JSON object per line`);
    if (first === head.length) return undefined;
    // Lines that end with CR alone would be read as one line, not JSON: refused as CSV's are,
    // once the first line that holds a row is whole (or the head is full, or the body ends).
    const end = head.indexOf(0x0a, first);
    if (end === -1 && !ended && head.length <= MAX_HEADER_BYTES) return undefined;
    if (CR_BETWEEN_ROWS.test(head.subarray(bom, end === -1 ? head.length : end).toString('latin1'))) throw new ApiError('bad_request', CR_ALONE);
    return { offset: bom, line: 1 };
  }
  const end = head.indexOf(0x0a, bom);
  const first = head.subarray(bom, end === -1 ? head.length : end);
  // Lines that end with CR alone would be read as one line: the whole file its header.
  const cr = first.indexOf(0x0d);
  if (cr !== -1 && (cr < first.length - 1 || end === -1)) {
    if (end !== -1 || ended || head.length > MAX_HEADER_BYTES) throw new ApiError('bad_request', CR_ALONE);
  }
  if (end === -1 && !ended) {
    if (head.length > MAX_HEADER_BYTES) throw new ApiError('bad_request', `The header row is longer than ${MAX_HEADER_BYTES} bytes: the first line must name the columns name, categoryId and, if you like, status and tags`);
    return undefined;
  }
  const line = first.toString('utf8').replace(/\r$/, '');
  if (line.trim() === '') throw new ApiError('bad_request', 'Body is empty or starts with an empty line: the first line must name the columns name, categoryId and, if you like, status and tags');
  let columns: string[];
  try {
    columns = (parseCsvText(line, { relax_column_count: true }) as string[][])[0] ?? [];
  } catch {
    throw new ApiError('bad_request', 'The header row is not valid CSV: name the columns name, categoryId and, if you like, status and tags, separated by commas');
  }
  const seen = new Set<string>();
  for (const column of columns) {
    if (column === 'id') throw new ApiError('bad_request', 'The header row names the column id: the service assigns ids, so remove the column (an export imports once its id column is removed)');
    if (!(IMPORT_COLUMNS as readonly string[]).includes(column)) {
      const meant = IMPORT_COLUMNS.find((known) => known.toLowerCase() === column.trim().toLowerCase());
      if (meant !== undefined) throw new ApiError('bad_request', `The header row names the column ${JSON.stringify(shown(column))}: write it ${meant}, as it is spelt here (column names are exact: case and spaces count)`);
      throw new ApiError('bad_request', `The header row names the column ${JSON.stringify(shown(column))}, which an import does not take: the columns are ${IMPORT_COLUMNS.join(', ').replace(/, (?=[^,]*$)/, ' and ')}`);
    }
    if (seen.has(column)) throw new ApiError('bad_request', `The header row names the column ${column} twice: name each column once`);
    seen.add(column);
  }
  for (const column of REQUIRED_COLUMNS) {
    if (!seen.has(column)) throw new ApiError('bad_request', `The header row lacks the column ${column}: name the columns name, categoryId and, if you like, status and tags`);
  }
  return { columns, offset: end === -1 ? head.length : end + 1, line: 2 };
}

// NewPet as the contract has it, checked as a JSON body is (src/routes/validation.ts:
// every error, no coercion, documentation keywords ignored).
const ajv = new Ajv2020({ strict: false, allErrors: true, verbose: true, coerceTypes: false });
addFormats.default(ajv);
ajv.addSchema({ ...(spec as object), $id: 'contract' });
const validNewPet = ajv.getSchema('contract#/components/schemas/NewPet');
if (!validNewPet) throw new Error('the contract has no NewPet schema');

/** A refused row: its line, the field at fault ('' for the row as a whole), and what to fix. */
export interface RowError {
  line: number;
  field: string;
  message: string;
}

/** A row read: the pet it adds, or why it is refused; and where the row after it starts. */
export type Row = { line: number; next: { offset: number; line: number } } & ({ pet: NewPet } | { error: RowError });

/** The first problem NewPet's schema finds in `value`, as a row error; undefined when it is a NewPet. */
function check(value: unknown, line: number): RowError | undefined {
  if (validNewPet?.(value)) return undefined;
  const first = (validNewPet?.errors ?? [])[0] as (ErrorObject & { parentSchema?: { 'x-pattern-description'?: string } }) | undefined;
  if (!first) return { line, field: '', message: 'is not a NewPet' };
  let field = first.instancePath.replace(/^\//, '');
  if (first.keyword === 'required') field = String(first.params.missingProperty);
  if (first.keyword === 'additionalProperties') field = String(first.params.additionalProperty);
  return { line, field: shown(field), message: ruleMessage(first) };
}

/** The error a body that csv-parse cannot read further gives, in words for its client. */
export class UnreadableRows extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

const CSV_ERRORS: Record<string, string> = {
  CSV_QUOTE_NOT_CLOSED: 'a quoted field is not closed before the end of the file: close its quote (a quote inside a quoted field is written twice)',
  CSV_INVALID_CLOSING_QUOTE: 'a quoted field goes on after its closing quote: quote the whole field, and write a quote inside it twice',
  INVALID_OPENING_QUOTE: 'a field that is not quoted holds a quote: quote the whole field, and write a quote inside it twice',
  CSV_MAX_RECORD_SIZE: `a row is longer than ${MAX_ROW_BYTES} bytes (a quote left open runs on to the end of the file): close the quote, or split the row`,
};

/**
 * Counts the lines of a byte stream as a parser takes it: the bytes are kept from the last
 * record's end until the parser has read past them, and `advance(to)` counts the line ends
 * up to byte `to`. (csv-parse's own line count is off by one after a quoted CRLF.)
 */
function lineCounter(start: { offset: number; line: number }) {
  const kept: { at: number; bytes: Buffer }[] = [];
  let offset = start.offset;
  let line = start.line;
  return {
    keep(bytes: Buffer, at: number): void {
      kept.push({ at, bytes });
    },
    /** The line at byte `offset`, where the next record starts. */
    get line(): number {
      return line;
    },
    advance(to: number): void {
      for (const { at, bytes } of kept) {
        const from = Math.max(offset, at) - at;
        const until = Math.min(to, at + bytes.length) - at;
        for (let i = bytes.indexOf(0x0a, from); i !== -1 && i < until; i = bytes.indexOf(0x0a, i + 1)) line++;
      }
      offset = to;
      while (kept.length > 0 && (kept[0]?.at ?? 0) + (kept[0]?.bytes.length ?? 0) <= offset) kept.shift();
    },
  };
}

/** A record as csv-parse gives it with `info` and `raw`: its fields, its length in bytes, its text. */
interface CsvRecord {
  record: string[];
  info: { bytes: number };
  raw: string;
}
/**
 * A quoted field (a quote inside written twice), and a CR that ends no line outside one
 * (csv-parse's `raw` keeps the CR of a CRLF that ends the record, not its LF).
 */
const QUOTED = /"(?:[^"]|"")*"/g;
const CR_OUTSIDE_QUOTES = /\r(?!\n|$)/;

/**
 * The rows of a CSV body, from the byte `start.offset` (line `start.line`), as the chunks of
 * `source` give them (its first chunk starts at that byte). An empty line is no row.
 */
async function* csvRows(source: AsyncIterable<Buffer>, columns: readonly string[], start: { offset: number; line: number }): AsyncGenerator<Row> {
  const parser = parseCsv({ info: true, raw: true, relax_column_count: true, record_delimiter: ['\r\n', '\n'], max_record_size: MAX_ROW_BYTES });
  const lines = lineCounter(start);
  // The records are taken as the parser emits them, into a queue of this file's own: a
  // stream's async iterator drops the records still buffered when the parser fails (a
  // quote left open, found at the end), and those rows come before the failure. The next
  // chunk is written only once the queue is short.
  const queue: CsvRecord[] = [];
  // Taken by index, the array emptied once read through: reading a record costs the same
  // however many wait behind it (decision record 0009).
  let head = 0;
  let failure: unknown;
  let ended = false;
  let stopped = false;
  // Who waits: the feeder for the queue to empty, the reader for records; a change wakes both.
  const waiting: (() => void)[] = [];
  const signal = (): void => {
    for (const wake of waiting.splice(0)) wake();
  };
  const waitForChange = () => new Promise<void>((resolve) => waiting.push(resolve));
  parser.on('data', (record: CsvRecord) => {
    queue.push(record);
    signal();
  });
  parser.on('error', (error: unknown) => {
    failure = error;
    signal();
  });
  parser.on('end', () => {
    ended = true;
    signal();
  });
  const feeding = (async () => {
    try {
      let at = start.offset;
      for await (const part of source) {
        // Invariant: the parser holds at most a slice's records at once, so that records die
        // young and the heap does not grow with the part (decision record 0009).
        for (let from = 0; from < part.length; from += FEED_BYTES) {
          const chunk = part.subarray(from, from + FEED_BYTES);
          lines.keep(chunk, at);
          at += chunk.length;
          while (queue.length - head > 1000 && failure === undefined && !stopped) await waitForChange();
          if (failure !== undefined || stopped) return;
          parser.write(chunk);
        }
      }
      parser.end();
    } catch (error) {
      failure ??= error;
      parser.destroy();
      signal();
    }
  })();
  try {
    for (;;) {
      if (head === queue.length) {
        queue.length = 0;
        head = 0;
        signal();
        if (failure !== undefined) throw failure;
        if (ended) break;
        await waitForChange();
        continue;
      }
      const read = queue[head++] as CsvRecord;
      const { record, info, raw } = read;
      // Every record starts where the one before ended (empty lines are records here).
      const line = lines.line;
      const end = start.offset + info.bytes;
      lines.advance(end);
      if (record.length === 1 && record[0] === '') continue;
      const next = { offset: end, line: lines.line };
      if (record.length !== columns.length) {
        // A CR alone ends no line here: the rows it was meant to part read as one.
        const message = CR_OUTSIDE_QUOTES.test(raw.replace(QUOTED, ''))
          ? `holds a CR alone, which ends no line: ${SAVE_WITH_LF} (a CR inside a quoted field is kept)`
          : `has ${record.length} ${record.length === 1 ? 'field' : 'fields'} where the header names ${columns.length}: give each row one field per column, quoting a field that holds a comma`;
        yield { line, next, error: { line, field: '', message } };
        continue;
      }
      const pet: Record<string, unknown> = {};
      columns.forEach((column, i) => {
        const value = record[i] ?? '';
        if (column === 'name') pet.name = value;
        else if (column === 'tags') pet.tags = value.split(' ').filter((tag) => tag !== '');
        else if (value !== '') pet[column] = column === 'categoryId' && DECIMAL.test(value) ? Number(value) : value;
      });
      // CSV has no types: a categoryId is a text of digits, said so where it is not.
      const error = typeof pet.categoryId === 'string' ? { line, field: 'categoryId', message: "must be an integer in plain decimal digits (the category's id)" } : check(pet, line);
      yield error ? { line, next, error } : { line, next, pet: pet as NewPet };
    }
  } catch (error) {
    const words = CSV_ERRORS[(error as CsvError).code];
    if (!words) throw error;
    // The record that cannot be read starts where the last one read ended.
    throw new UnreadableRows(lines.line, `Line ${lines.line}: ${words}`);
  } finally {
    // Read to the end, failed, or left by the consumer: the feeder stops too.
    stopped = true;
    signal();
    await feeding;
  }
}

/** `text` as jsonb takes it: without U+0000 or a lone surrogate (each becomes U+FFFD). */
export const jsonbSafeText = (text: string): string => text.toWellFormed().replaceAll('\u0000', '\uFFFD');
/** Whether jsonb takes `text` as it is (what `jsonbSafeText` would leave unchanged). */
const jsonbTakes = (text: string): boolean => text.isWellFormed() && !text.includes('\u0000');

/**
 * The first field of `value` (a parsed NDJSON line) holding text that is not well-formed
 * Unicode, as createPet's body parser refuses it: a `\u` escape that leaves a lone surrogate,
 * or U+0000, which no text of the service holds (the pointer's own text made safe to repeat).
 */
function illFormed(value: unknown, pointer = ''): string | undefined {
  if (typeof value === 'string') return jsonbTakes(value) ? undefined : pointer;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    const field = `${pointer}/${jsonbSafeText(key)}`;
    if (!jsonbTakes(key)) return field;
    const found = illFormed(item, field);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * The rows of an NDJSON body, from `start`: one JSON object per line, empty lines skipped. A
 * line longer than MAX_ROW_BYTES is refused as it passes the bound, and its bytes are
 * dropped until its end: the reader holds at most that much of a line.
 */
async function* ndjsonRows(source: AsyncIterable<Buffer>, start: { offset: number; line: number }): AsyncGenerator<Row> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let tooLong = false;
  let offset = start.offset;
  let line = start.line;
  const refused = (next: { offset: number; line: number }, field: string, message: string): Row => ({ line: next.line - 1, next, error: { line: next.line - 1, field, message } });
  const rowOf = (bytes: Buffer, next: { offset: number; line: number }): Row | undefined => {
    if (tooLong) return refused(next, '', `is longer than ${MAX_ROW_BYTES} bytes: a NewPet takes a few hundred`);
    const text = bytes.toString('utf8').replace(/\r$/, '');
    // An empty line: JSON's white space alone.
    if (/^[ \t\r]*$/.test(text)) return undefined;
    // Before anything recurses into it: a line nested thousands deep overflowed the row checks'
    // stack, and the import, failing there at every try, held every import behind it.
    if (text.length > MAX_DEPTH && nestsDeeperThan(text, MAX_DEPTH)) return refused(next, '', `nests arrays or objects more than ${MAX_DEPTH} levels deep: a NewPet needs 2`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // A CR alone ends no line here: the rows it was meant to part read as one.
      if (CR_BETWEEN_ROWS.test(text)) return refused(next, '', `ends a row with CR alone, which ends no line: ${SAVE_WITH_LF}`);
      return refused(next, '', 'is not JSON: write one NewPet as a JSON object on each line');
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return refused(next, '', 'is not a JSON object: write one NewPet as a JSON object on each line');
    const bad = illFormed(value);
    if (bad !== undefined) return refused(next, shown(bad.replace(/^\//, '')), 'must be well-formed Unicode without U+0000 (a \\u escape leaves a lone surrogate, or writes U+0000)');
    // As createPet's body (src/routes/json-body.ts): a number JSON.parse rounded is refused, never stored rounded.
    const inexact = inexactNumber(text);
    if (inexact !== undefined) return refused(next, shown(inexact.pointer.replace(/^\//, '')), inexact.message);
    const error = check(value, next.line - 1);
    return error ? { line: next.line - 1, next, error } : { line: next.line - 1, next, pet: value as NewPet };
  };
  const hold = (bytes: Buffer): void => {
    if (tooLong || bytes.length === 0) return;
    if (heldBytes + bytes.length > MAX_ROW_BYTES) {
      tooLong = true;
      held = [];
      heldBytes = 0;
      return;
    }
    held.push(Buffer.from(bytes));
    heldBytes += bytes.length;
  };
  const take = (): Buffer => {
    const bytes = held.length === 1 ? (held[0] as Buffer) : Buffer.concat(held);
    held = [];
    heldBytes = 0;
    return bytes;
  };
  for await (const chunk of source) {
    let from = 0;
    for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, from)) {
      // A line that lies whole in this chunk is read where it is; only a line's start left
      // over from earlier chunks is held (copied), with this chunk's part of it.
      let bytes: Buffer;
      if (heldBytes === 0 && !tooLong && end - from <= MAX_ROW_BYTES) bytes = chunk.subarray(from, end);
      else {
        hold(chunk.subarray(from, end));
        bytes = take();
      }
      offset += end + 1 - from;
      line += 1;
      from = end + 1;
      const row = rowOf(bytes, { offset, line });
      tooLong = false;
      if (row) yield row;
    }
    hold(chunk.subarray(from));
    offset += chunk.length - from;
  }
  if (heldBytes > 0 || tooLong) {
    const row = rowOf(take(), { offset, line: line + 1 });
    if (row) yield row;
  }
}

/** The rows of a body from `start`, read from `source` (whose first chunk starts at `start.offset`). */
export function readRows(format: ImportFormat, source: AsyncIterable<Buffer>, start: { columns?: readonly string[] | null; offset: number; line: number }): AsyncGenerator<Row> {
  if (format === 'text/csv') return csvRows(source, start.columns ?? [], start);
  return ndjsonRows(source, start);
}
