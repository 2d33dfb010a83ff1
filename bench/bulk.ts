// `npm run bench:bulk`: exports and imports of the whole catalogue, their speed and what
// they cost the service's memory and the other requests.
// Seeds BENCH_BULK_ROWS pets (default 1,000,000), starts this service as `npm run bench`
// does (built, full contract, logging at info), and:
// - exports every pet (exportPets) three times, one after the other: as CSV and as NDJSON,
//   each read as fast as the client can, then as CSV by a client that reads
//   BENCH_BULK_SLOW_KIB KiB a second (default 256) for 10 s and goes away;
// - imports BENCH_BULK_ROWS rows (createPetImport, CSV sent as it is generated) with
//   errorPolicy=skip, then with stop (checked whole, then added), then with skip again
//   without each promise's trigger in turn (the events that feed a mirror, the inventory's
//   counts, the append order's horizon), to give what each costs;
// - imports a body of BENCH_BULK_IMPORT_GB GB (default 1, 10^9 bytes, under the 1 GiB limit)
//   as a dry run (every row read and checked, none added);
// - runs the pets mix at 16 connections for BENCH_BULK_MIX_SECONDS (default 8) idle, then
//   again while an import of BENCH_BULK_ROWS rows runs: the share of its idle throughput it
//   keeps, and createPet's p99.
// The service's RSS is read every 100 ms; each run reports the RSS when it started, the
// highest while it ran, the difference (the bound the service keeps: 100 MiB). Writes
// bench/results/bulk-<time>.md (git-ignored) and the `npm run bench:bulk` section of
// bench/latest.md (tracked; bench/latest.ts).
import http from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import pg from 'pg';
import { recordLatest } from './latest.js';
import { build, machine, measureLoad, root, rssMiB, SALE_PETS, seededDatabase, stamp, startOurs, type Measured, type Server } from './harness.js';
import { petsMix } from './mix.js';

const ROWS = Number(process.env.BENCH_BULK_ROWS ?? 1_000_000);
const SLOW_KIB = Number(process.env.BENCH_BULK_SLOW_KIB ?? 256);
const SLOW_SECONDS = 10;
const BOUND_MIB = 100;
const IMPORT_GB = Number(process.env.BENCH_BULK_IMPORT_GB ?? 1);
const MIX_SECONDS = Number(process.env.BENCH_BULK_MIX_SECONDS ?? 8);
/** A 1 GB body arrives in more than REQUEST_TIMEOUT_MS's default (30 s) on a busy machine. */
process.env.REQUEST_TIMEOUT_MS ??= '600000';
/** The pets seededDatabase stores: ROWS, and those kept for sale. */
const PETS = ROWS + SALE_PETS;

interface Exported {
  name: string;
  rows: number;
  bytes: number;
  seconds: number;
  rssBefore: number;
  rssMax: number;
}

/**
 * Exports every pet from `server` in `accept`'s format, counting lines and bytes as they
 * arrive, while the server's RSS is sampled; `slow`: read at SLOW_KIB KiB/s for SLOW_SECONDS,
 * then go away.
 */
function exportAll(server: Server, name: string, accept: string, slow = false): Promise<Exported> {
  const pid = server.child.pid as number;
  const rssBefore = rssMiB(pid);
  let rssMax = rssBefore;
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, rssMiB(pid))), 100);
  const started = performance.now();
  return new Promise<Exported>((resolve, reject) => {
    const fail = (error: Error) => {
      clearInterval(sampler);
      reject(new Error(`${name}: ${error.message}`));
    };
    const url = new URL('/v1/pets:export', server.url);
    // A connection of its own, without the global agent's idle timeout.
    const request = http.get(url, { agent: false, headers: { authorization: server.authorization, accept } }, (response) => {
      if (response.statusCode !== 200) return fail(new Error(`exportPets answered ${response.statusCode}`));
      let rows = 0;
      let bytes = 0;
      const finish = () => {
        clearInterval(sampler);
        resolve({ name, rows, bytes, seconds: (performance.now() - started) / 1000, rssBefore, rssMax: Math.max(rssMax, rssMiB(pid)) });
      };
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) rows++;
        if (!slow) return;
        // Take no more than SLOW_KIB a second: pause for the time this chunk is worth.
        response.pause();
        setTimeout(() => response.resume(), (chunk.length / (SLOW_KIB * 1024)) * 1000);
        if (performance.now() - started > SLOW_SECONDS * 1000) {
          request.destroy();
          finish();
        }
      });
      response.on('end', finish);
      response.on('error', fail);
    });
    request.on('error', (error) => ((error as { code?: string }).code === 'ECONNRESET' && slow ? undefined : fail(error)));
  });
}

interface Imported {
  name: string;
  rows: number;
  imported: number;
  bytes: number;
  /** From the first byte sent to the 202. */
  sendSeconds: number;
  /** From the first byte sent to the import's end. */
  seconds: number;
  status: string;
  rssBefore: number;
  rssMax: number;
}

/**
 * A CSV body of `rows` rows, generated as it is sent, each name padded to `nameLength`; with
 * `bytes`, rows until the body has at least that many bytes. `counted` is told how many rows
 * were written, once they all have been.
 */
function csvBody(rows: number, nameLength: number, tag: string, bytes = 0, counted?: (rows: number) => void): Readable {
  const pad = 'x'.repeat(nameLength);
  return Readable.from(
    (function* () {
      let written = 'name,categoryId,status\n'.length;
      yield 'name,categoryId,status\n';
      let i = 0;
      while (i < rows || written < bytes) {
        let piece = '';
        for (let n = 0; n < 2000 && (i < rows || written + piece.length < bytes); n++, i++) piece += `${`${tag} ${i} ${pad}`.slice(0, nameLength)},${1 + (i % 50)},${i % 3 === 0 ? '' : 'available'}\n`;
        written += piece.length;
        yield piece;
      }
      counted?.(i);
    })(),
  );
}

/** Sends `body` to createPetImport with `query`, then reads the import every 200 ms until it ends, the service's RSS sampled all along. */
async function importAll(server: Server, name: string, body: Readable, rows: number, query: string): Promise<Imported> {
  const pid = server.child.pid as number;
  const rssBefore = rssMiB(pid);
  let rssMax = rssBefore;
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, rssMiB(pid))), 100);
  const started = performance.now();
  let bytes = 0;
  body.on('data', (chunk: string) => (bytes += Buffer.byteLength(chunk)));
  try {
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = http.request(new URL(`/v1/pet-imports?${query}`, server.url), { method: 'POST', agent: false, headers: { authorization: server.authorization, 'content-type': 'text/csv' } }, (response) => {
        let text = '';
        response.on('data', (c: Buffer) => (text += c));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      });
      request.on('error', reject);
      body.pipe(request);
    });
    if (answer.status !== 202) throw new Error(`${name}: createPetImport answered ${answer.status} ${answer.text}`);
    const sendSeconds = (performance.now() - started) / 1000;
    const { id } = JSON.parse(answer.text) as { id: number };
    for (;;) {
      const state = (await (await fetch(new URL(`/v1/pet-imports/${id}`, server.url), { headers: { authorization: server.authorization } })).json()) as { status: string; rowsRead: number; rowsImported: number };
      if (!['queued', 'running'].includes(state.status)) {
        return { name, rows, imported: state.rowsImported, bytes, sendSeconds, seconds: (performance.now() - started) / 1000, status: `${state.status}, ${state.rowsRead.toLocaleString('en')} read`, rssBefore, rssMax: Math.max(rssMax, rssMiB(pid)) };
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    clearInterval(sampler);
  }
}

/** Runs `work` with the pets triggers `triggers` disabled (ALTER TABLE ... DISABLE TRIGGER), enabled again after. */
async function without<T>(url: string, triggers: string[], work: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const trigger of triggers) await client.query(`ALTER TABLE pets DISABLE TRIGGER ${trigger}`);
    return await work();
  } finally {
    for (const trigger of triggers) await client.query(`ALTER TABLE pets ENABLE TRIGGER ${trigger}`);
    await client.end();
  }
}

build();
const database = await seededDatabase(ROWS);
const ours = await startOurs(database.url, database.key);
const runs: Exported[] = [];
const imports: Imported[] = [];
let idle: Measured | undefined;
let busy: Measured | undefined;
let busyImport: Imported | undefined;
/** Sessions of the database waiting for a lock, every 20 ms while the mix ran beside an import. */
const lockSamples: number[] = [];
try {
  runs.push(await exportAll(ours, 'CSV, read at once', 'text/csv'));
  runs.push(await exportAll(ours, 'NDJSON, read at once', 'application/x-ndjson'));
  runs.push(await exportAll(ours, `CSV, read at ${SLOW_KIB} KiB/s for ${SLOW_SECONDS} s, then left`, 'text/csv', true));

  const rowsImport = (name: string, tag: string, query: string) => importAll(ours, name, csvBody(ROWS, 24, tag), ROWS, query);

  // No one waits, first, on the seeded catalogue settled (vacuumed and analysed): the pets
  // mix idle, then while an import runs, the sessions waiting for a lock counted every 20 ms.
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  try {
    await admin.query('VACUUM ANALYZE pets, events');
    const mixOptions = { connections: 16, seconds: MIX_SECONDS, seed: 1, rows: ROWS };
    idle = await measureLoad(ours, { name: 'mixed: pets', mix: petsMix }, mixOptions);
    const running = rowsImport('errorPolicy=skip, while the pets mix runs at 16 connections', 'busy', 'errorPolicy=skip');
    await new Promise((r) => setTimeout(r, 1000));
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await admin.query<{ waiting: number }>("SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
        lockSamples.push(rows[0]?.waiting ?? 0);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    busy = await measureLoad(ours, { name: 'mixed: pets', mix: petsMix }, mixOptions);
    sampling = false;
    await sampler;
    busyImport = await running;
  } finally {
    await admin.end();
  }

  imports.push(await rowsImport('errorPolicy=skip, every promise', 'skip', 'errorPolicy=skip'));
  imports.push(await rowsImport('errorPolicy=stop (checked whole, then added)', 'stop', 'errorPolicy=stop'));
  imports.push(await without(database.url, ['pets_events_inserts'], () => rowsImport('skip, without the events (no pet.created: a mirror misses them)', 'noevents', 'errorPolicy=skip')));
  imports.push(await without(database.url, ['pets_count_inserts'], () => rowsImport("skip, without the inventory's counts", 'nocount', 'errorPolicy=skip')));
  imports.push(await without(database.url, ['pets_append_order_mark'], () => rowsImport("skip, without the append order's horizon (the ids still drawn in order)", 'nohorizon', 'errorPolicy=skip')));
  // At least IMPORT_GB GB (10^9 bytes; the names are ASCII: a character a byte), below the limit (1 GiB).
  let longRows = 0;
  const big = await importAll(ours, `${IMPORT_GB} GB of rows with 100-character names, dryRun=true`, csvBody(0, 100, 'big', Math.round(IMPORT_GB * 1e9), (n) => (longRows = n)), 0, 'dryRun=true&errorPolicy=skip');
  imports.push({ ...big, rows: longRows });
} finally {
  ours.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 1000));
  await database.close();
}

const rowsOf = (run: Exported) => (run.name.startsWith('CSV') ? run.rows - 1 : run.rows);
const full = imports[0];
const costOf = (run: Imported | undefined) => (run && full ? `${(((full.seconds - run.seconds) / full.seconds) * 100).toFixed(0)}% of the import's time` : '–');
const createP99 = (m: Measured | undefined) => m?.operations?.createPet?.p99?.toFixed(1) ?? '–';
const lines = [
  `# Bulk ${new Date().toISOString()}`,
  '',
  `Machine: ${machine(database.pgVersion)}.`,
  `exportPets of every pet, ${PETS.toLocaleString('en')} seeded (${ROWS.toLocaleString('en')} and ${SALE_PETS.toLocaleString('en')} for sale), one export at a time on one connection; the service's RSS every 100 ms.`,
  '',
  '| export | rows | MB | s | rows/s | MB/s | RSS at its start | highest RSS | difference (bound) |',
  '|---|---|---|---|---|---|---|---|---|',
  ...runs.map(
    (r) =>
      `| ${r.name} | ${rowsOf(r).toLocaleString('en')} | ${(r.bytes / 1e6).toFixed(1)} | ${r.seconds.toFixed(1)} | ${Math.round(rowsOf(r) / r.seconds).toLocaleString('en')} | ${(r.bytes / 1e6 / r.seconds).toFixed(1)} | ${r.rssBefore} MiB | ${r.rssMax} MiB | **+${r.rssMax - r.rssBefore} MiB** (${BOUND_MIB}) |`,
  ),
  '',
  `Within ${BOUND_MIB} MiB of where each started: **${runs.every((r) => r.rssMax - r.rssBefore <= BOUND_MIB) ? 'yes' : 'no'}**. Every pet exported: **${runs.slice(0, 2).every((r) => rowsOf(r) === PETS) ? 'yes' : 'no'}**.`,
  '',
  `createPetImport, one import at a time, the CSV body generated as it is sent (IMPORT_BATCH_ROWS at its default); time from the first byte sent to the import's end, read every 200 ms.`,
  '',
  '| import | rows | MB | sent in s | ended | s | rows/s | what the promise costs | RSS at its start | highest RSS | difference (bound) |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
  ...[...imports, ...(busyImport ? [busyImport] : [])].map(
    (r, i) =>
      `| ${r.name} | ${r.rows.toLocaleString('en')} | ${(r.bytes / 1e6).toFixed(1)} | ${r.sendSeconds.toFixed(1)} | ${r.status} | ${r.seconds.toFixed(1)} | **${Math.round(r.rows / r.seconds).toLocaleString('en')}** | ${i >= 2 && i <= 4 ? costOf(r) : '–'} | ${r.rssBefore} MiB | ${r.rssMax} MiB | **+${r.rssMax - r.rssBefore} MiB** (${BOUND_MIB}) |`,
  ),
  '',
  `Every row of the ${ROWS.toLocaleString('en')}-row imports added: **${imports.slice(0, 5).every((r) => r.imported === ROWS) ? 'yes' : 'no'}**. Within ${BOUND_MIB} MiB: **${[...imports, ...(busyImport ? [busyImport] : [])].every((r) => r.rssMax - r.rssBefore <= BOUND_MIB) ? 'yes' : 'no'}**.`,
  '',
  `No one waits: the pets mix at 16 connections for ${MIX_SECONDS} s on the seeded catalogue, idle: ${Math.round(idle?.rps ?? 0)} req/s, createPet p99 ${createP99(idle)} ms; while an import runs: ${Math.round(busy?.rps ?? 0)} req/s (**${idle && busy ? (busy.rps / idle.rps).toFixed(2) : '–'}** of idle; at least 0.5), createPet p99 ${createP99(busy)} ms. Sessions waiting for a lock meanwhile, sampled every 20 ms: ${lockSamples.filter((n) => n > 0).length} of ${lockSamples.length} samples had any (the most at once: ${Math.max(0, ...lockSamples)}).`,
  '',
];
mkdirSync(path.join(root, 'bench/results'), { recursive: true });
const results = path.join(root, 'bench/results', `bulk-${stamp()}.md`);
writeFileSync(results, lines.join('\n'));
recordLatest('bench:bulk', lines.join('\n'), results);
console.log(lines.join('\n'));
