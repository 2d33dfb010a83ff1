// `npm run pets -- import FILE` and `npm run pets -- export`: the operators' way to move a
// catalogue in and out, over the API with a key, like any client (the typed client,
// client/src). The service's URL and key come from the environment:
//   ANIMAL_STORE_URL      the API's base, default http://127.0.0.1:3000/v1
//   ANIMAL_STORE_API_KEY  a key with pets:write (import) or pets:read (export)
//
// import FILE [--format csv|ndjson] [--error-policy stop|skip] [--dry-run]
//   Sends the file as it is read, then follows the import to its end with a progress bar
//   (rows done, rate, time left) on standard error, and a summary. Exits 0 when every row was
//   imported (or checked, --dry-run), 1 when rows were refused or the import failed or was
//   cancelled, 2 when the command could not run. The format is the file's extension's
//   (.ndjson, .jsonl: NDJSON; else CSV) unless --format says.
// export [--format csv|ndjson] [--status S] [--category-id N] [--id N ...]
//   Writes the export to standard output.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { SingleBar } from 'cli-progress';
import { AnimalStoreError, createAnimalStoreClient, type PetImport } from '../../client/src/index.js';

const USAGE = `Usage:
  npm run pets -- import FILE [--format csv|ndjson] [--error-policy stop|skip] [--dry-run]
  npm run pets -- export [--format csv|ndjson] [--status available|pending|sold] [--category-id N] [--id N ...]
Environment: ANIMAL_STORE_URL (default http://127.0.0.1:3000/v1), ANIMAL_STORE_API_KEY (required).`;

const say = (line: string): void => void process.stderr.write(`${line}\n`);

class UsageError extends Error {}

type Format = 'text/csv' | 'application/x-ndjson';
const formatOf = (given: string | undefined, file?: string): Format => {
  if (given === 'csv') return 'text/csv';
  if (given === 'ndjson') return 'application/x-ndjson';
  if (given !== undefined) throw new UsageError(`--format ${given}: give csv or ndjson`);
  return file && /\.(ndjson|jsonl)$/i.test(file) ? 'application/x-ndjson' : 'text/csv';
};

function client() {
  const apiKey = process.env.ANIMAL_STORE_API_KEY;
  if (!apiKey) throw new UsageError('ANIMAL_STORE_API_KEY is not set: give a key with pets:write (import) or pets:read (export)');
  return createAnimalStoreClient({ baseUrl: process.env.ANIMAL_STORE_URL ?? 'http://127.0.0.1:3000/v1', apiKey });
}

/** The rows a file holds, as its line ends count them (a name never holds one): the bar's total. */
async function countRows(file: string, format: Format): Promise<number> {
  let ends = 0;
  let last = 0x0a;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) ends++;
    if (chunk.length > 0) last = chunk[chunk.length - 1] ?? last;
  }
  const lines = ends + (last === 0x0a ? 0 : 1);
  return Math.max(0, format === 'text/csv' ? lines - 1 : lines);
}

/** The bar on standard error; without a terminal, a line every 2 seconds. */
function progressBar(): SingleBar {
  return new SingleBar({
    format: '{phase} |{bar}| {percentage}% | {value}/{total} {unit} | {rate}/s | {eta_formatted} left',
    stream: process.stderr,
    noTTYOutput: true,
    notTTYSchedule: 2000,
    etaBuffer: 20,
    hideCursor: true,
  });
}

async function importFile(file: string, options: { format?: string; 'error-policy'?: string; 'dry-run'?: boolean }): Promise<number> {
  const format = formatOf(options.format, file);
  const errorPolicy = options['error-policy'] ?? 'stop';
  if (errorPolicy !== 'stop' && errorPolicy !== 'skip') throw new UsageError(`--error-policy ${errorPolicy}: give stop or skip`);
  const dryRun = options['dry-run'] === true;
  const size = (await stat(file)).size;
  const total = await countRows(file, format);
  const store = client();
  const bar = progressBar();
  const started = Date.now();

  // Sending: the bar counts bytes.
  bar.start(size, 0, { phase: 'sending  ', unit: 'bytes', rate: 0 });
  let sent = 0;
  const counting = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      sent += chunk.length;
      bar.update(sent, { rate: Math.round(sent / Math.max(0.001, (Date.now() - started) / 1000)) });
      done(null, chunk);
    },
  });
  const body = Readable.toWeb(createReadStream(file).pipe(counting)) as ReadableStream<Uint8Array>;
  const { data: submitted } = await store.createPetImport(body, { format, errorPolicy, dryRun });

  // Running: the bar counts rows. A `stop` import checks every row, then adds them.
  const twoPasses = errorPolicy === 'stop' && !dryRun;
  let at = { time: Date.now(), rows: 0 };
  bar.setTotal(Math.max(total, 1));
  const show = (i: PetImport): void => {
    const adding = twoPasses ? i.rowsImported > 0 || (i.rowsRead >= total && total > 0) : !dryRun;
    const rows = adding && twoPasses ? i.rowsImported : i.rowsRead;
    const now = Date.now();
    const rate = now > at.time ? Math.round(((rows - at.rows) * 1000) / (now - at.time)) : 0;
    if (now - at.time >= 1000) at = { time: now, rows };
    bar.update(Math.min(rows, Math.max(total, 1)), { phase: adding ? 'importing' : 'checking ', unit: 'rows', rate: Math.max(rate, 0) });
  };
  bar.update(0, { phase: twoPasses || dryRun ? 'checking ' : 'importing', unit: 'rows', rate: 0 });
  const done = await store.waitForImport(submitted.id, { intervalMs: 250, onProgress: show });
  bar.stop();

  const seconds = (Date.now() - started) / 1000;
  say(`Import ${done.id} ${done.status} in ${seconds.toFixed(1)} s: ${done.rowsRead} rows read, ${done.rowsImported} imported, ${done.rowsRefused} refused${dryRun ? ' (dry run: none added)' : ''}.`);
  if (done.message) say(done.message);
  for (const e of done.errors) say(`  line ${e.line}${e.field ? `, ${e.field}` : ''}: ${e.message}`);
  if (done.rowsRefused > done.errors.length) say(`  ... and ${done.rowsRefused - done.errors.length} more refused rows`);
  return done.status === 'succeeded' && done.rowsRefused === 0 ? 0 : 1;
}

async function exportPets(options: { format?: string; status?: string; 'category-id'?: string; id?: string[] }): Promise<number> {
  const format = formatOf(options.format);
  const status = options.status;
  if (status !== undefined && !['available', 'pending', 'sold'].includes(status)) throw new UsageError(`--status ${status}: give available, pending or sold`);
  const number = (flag: string, value: string): number => {
    if (!/^[1-9][0-9]{0,15}$/.test(value)) throw new UsageError(`--${flag} ${value}: give an id, an integer from 1`);
    return Number(value);
  };
  const query = {
    ...(status ? { status: status as 'available' | 'pending' | 'sold' } : {}),
    ...(options['category-id'] ? { categoryId: number('category-id', options['category-id']) } : {}),
    ...(options.id?.length ? { id: options.id.map((id) => number('id', id)) } : {}),
  };
  const { data } = await client().exportPets(query, { format });
  await pipeline(Readable.fromWeb(data as unknown as import('node:stream/web').ReadableStream), process.stdout);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      format: { type: 'string' },
      'error-policy': { type: 'string' },
      'dry-run': { type: 'boolean' },
      status: { type: 'string' },
      'category-id': { type: 'string' },
      id: { type: 'string', multiple: true },
      help: { type: 'boolean' },
    },
  });
  const [command, file, ...rest] = positionals;
  if (values.help) {
    say(USAGE);
    return 0;
  }
  if (command === 'import' && file !== undefined && rest.length === 0) return importFile(file, values);
  if (command === 'export' && file === undefined) return exportPets(values);
  throw new UsageError(USAGE);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) say(error.message);
    else if (error instanceof AnimalStoreError) say(`The service answered ${error.status} ${error.code}: ${error.message}`);
    else if (error instanceof Error && 'code' in error && error.code === 'ENOENT') say(`No such file: ${(error as NodeJS.ErrnoException).path ?? ''}`);
    else say(`Could not reach the service or read the file: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 2;
  },
);
