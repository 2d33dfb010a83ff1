// What `npm run bench`, `bench:soak` and `bench:profile` share: a seeded database (an
// embedded PostgreSQL unless DATABASE_URL is given), servers started as child processes,
// the scenarios (fixed URLs, and mixed traffic walked per connection), one measured run of
// a scenario, CPU and RSS readings and the machine's description.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { WEBHOOK_EVENT_TYPES } from '../generated/webhooks.js';
import { generateApiKey, hashApiKey } from '../src/api-keys/verifier.js';
import { openEmbeddedPostgres } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { BREEDS, buyMix, catalogueMix, categoryMix, connectionSeed, headerOf, nextLink, ordersMix, petsForSale, petsMix, renameMix, searchMix, sortedMix, Walk, type Mix, type Seen } from './mix.js';
import { quantile } from './stats.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The four measured operations (listPets twice, getPet, createPet), each with every connection asking the same URL. */
export interface FixedScenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** getPet over ids spread across the seeded rows. */
  randomId?: boolean;
  mix?: undefined;
}

/** Mixed traffic (bench/mix.ts): each connection walks the mix from a seed of its own. */
export interface MixedScenario {
  name: string;
  mix: Mix;
}

export type Scenario = FixedScenario | MixedScenario;

export const scenarios: FixedScenario[] = [
  { name: 'GET /v1/pets?limit=20', method: 'GET', path: '/v1/pets?limit=20' },
  { name: 'GET /v1/pets?limit=100&status=available', method: 'GET', path: '/v1/pets?limit=100&status=available' },
  { name: 'GET /v1/pets/{id} (random ids)', method: 'GET', path: '/v1/pets/1', randomId: true },
  { name: 'POST /v1/pets', method: 'POST', path: '/v1/pets', body: JSON.stringify({ name: 'Bench', categoryId: 3, status: 'available' }) },
];

/**
 * The walked scenarios (their actions are in bench/mix.ts): the two mixes, then single
 * operations over random ids: `buyMix` (buying alone), `renameMix` (updatePet) and
 * `categoryMix` (listPets with categoryId), `sortedMix` (listPets with orderBy). Each is checked for the same answers from ours
 * and the reference before the runs (checkSameAnswers).
 */
export const mixedScenarios: MixedScenario[] = [petsMix, ordersMix, catalogueMix, buyMix, renameMix, categoryMix, sortedMix, searchMix].map((mix) => ({ name: mix.name, mix }));

/**
 * Pets for sale: ids rows+1 .. rows+SALE_PETS of every seeded catalogue, all `available`,
 * apart from the `rows` pets the other scenarios read, in two halves. A server's runs that
 * sell use the halves in turn: before each, `restock` makes its half available again, and
 * the run hands each buy the next pet of it (so no two connections order the same pet, and
 * no placement meets 409). autocannon resolves when its time is up with requests still in
 * flight, which the server answers to closed sockets: a placement that commits after the
 * run lands in the half the next run does not use, and that half is restocked a whole run
 * later. At 2,000 orders a second, a 6 s run uses 12,000 pets.
 */
export const SALE_PETS = Number(process.env.BENCH_SALE_PETS ?? 40_000);
const HALF = Math.floor(SALE_PETS / 2);
const runsThatSold = new Map<string, number>();

/** Whether a scenario places orders. */
export const sells = (scenario: Scenario | Mix): boolean => Boolean(('mix' in scenario && scenario.mix ? scenario.mix : (scenario as Mix)).actions?.some((a) => a.name === 'buy'));

/**
 * Before a run that sells on `server`: the next half of its pets for sale, restocked (every
 * order still placed for one of them cancelled, every one of them `available`). Returns
 * the half's pets, handed out in turn.
 */
export async function restock(server: Server, rows: number): Promise<() => number> {
  const turn = runsThatSold.get(server.name) ?? 0;
  runsThatSold.set(server.name, turn + 1);
  const first = rows + 1 + (turn % 2) * HALF;
  const last = first + HALF - 1;
  // Hello world (bench:profile) answers orders with constants: it has no database to
  // restock, and sells nothing, so its ids come round again. At 40,000 req/s its 25 s runs
  // asked for more placements than a half holds, and the profile stopped.
  if (!server.databaseUrl) {
    let next = 0;
    return () => first + (next++ % HALF);
  }
  const db = new pg.Client({ connectionString: server.databaseUrl });
  await db.connect();
  try {
    await db.query('BEGIN');
    await db.query("UPDATE orders SET status = 'cancelled', closed_at = now() WHERE status = 'placed' AND pet_id BETWEEN $1 AND $2", [first, last]);
    await db.query("UPDATE pets SET status = 'available' WHERE id BETWEEN $1 AND $2 AND status IS DISTINCT FROM 'available'", [first, last]);
    await db.query('COMMIT');
  } finally {
    await db.end();
  }
  return petsForSale(first, HALF);
}

/** A scenario as an autocannon request, over `rows` seeded pets. */
export function loadRequest(scenario: FixedScenario, rows: number): autocannon.Request {
  return {
    method: scenario.method,
    path: scenario.path,
    ...(scenario.body ? { body: scenario.body } : {}),
    ...(scenario.randomId ? { setupRequest: (request: autocannon.Request) => ({ ...request, path: `/v1/pets/${1 + Math.floor(Math.random() * rows)}` }) } : {}),
  };
}

/** Answers and latencies per operation of a mixed run, over all its connections. */
export type MixTally = Map<string, number[]>;

/**
 * Makes each autocannon connection walk `mix` from its own seed (the run's seed and the
 * connection's number), for `setupClient`: the connection's request list becomes one
 * request whose `setupRequest` asks the walk for the next step, and whose `onResponse` hands
 * it what was seen (autocannon calls `onResponse` before building the next request, and
 * with one request in flight per connection, the walk's steps follow one another as a
 * user's would). Each answer's latency is kept under its operation in `tally`.
 */
export function walkClients(mix: Mix, rows: number, runSeed: number, tally: MixTally, failures = new Map<string, number>(), forSale?: () => number): (client: autocannon.Client) => void {
  let connection = 0;
  return (client) => {
    const walk = new Walk(mix, connectionSeed(runSeed, connection++), rows, forSale);
    let seen: Seen | undefined;
    let inFlight = '';
    client.setRequests([
      {
        setupRequest: (request) => {
          const step = walk.next(seen);
          seen = undefined;
          inFlight = step.operation;
          return step.body === undefined
            ? { ...request, method: step.method, path: step.path }
            : { ...request, method: step.method, path: step.path, body: step.body, headers: { ...request.headers, 'content-type': 'application/json' } };
        },
        onResponse: (status, _body, _context, headers) => {
          const all = headers as Record<string, string | string[] | undefined>;
          // What was not 2xx, by operation and status, for the error that ends the run.
          if (status < 200 || status > 299) failures.set(`${inFlight} ${status}`, (failures.get(`${inFlight} ${status}`) ?? 0) + 1);
          seen = { status, next: nextLink(all), location: headerOf(all, 'location') };
        },
      },
    ]);
    client.on('response', (_status: number, _bytes: number, ms: number) => {
      let latencies = tally.get(inFlight);
      if (!latencies) tally.set(inFlight, (latencies = []));
      latencies.push(ms);
    });
  };
}

export interface Measured {
  rps: number;
  /** Latency quantiles in ms, from every response's own time (not autocannon's whole-ms histogram). */
  p50: number;
  p99: number;
  /** The server's CPU time (user + system, all threads) per answered request, in µs. */
  cpuUs?: number;
  /**
   * This machine's PostgreSQL processes' CPU time per answered request, in µs (0 when the
   * database runs elsewhere): the work a server hands the database (its statements,
   * triggers, commits) costs the same cores on a one-machine bench.
   */
  dbCpuUs?: number;
  /** Mixed traffic: answers, p50 and p99 (ms) per operation. */
  operations?: Record<string, { answers: number; p50: number; p99: number }>;
  /** Answers in the run. */
  answers?: number;
  /** When the load ran, in µs of the monotonic clock (a --cpu-prof profile's clock on Linux). */
  window?: { start: number; end: number };
  /** With `threads`: the server's CPU time per answered request (µs) by thread name ('main' is the main thread). */
  threads?: Record<string, number>;
}

export interface LoadOptions {
  connections: number;
  seconds: number;
  /** Chooses the mixed traffic's requests (the fixed scenarios ignore it). */
  seed: number;
  /** Seeded pets (ids 1..rows). */
  rows: number;
  /** Also read each thread's CPU time (for profiles). */
  threads?: boolean;
}

/** One run of `scenario` against `server` with autocannon; throws on any non-2xx answer or error. */
export async function measureLoad(server: Server, scenario: Scenario, { connections, seconds, seed, rows, threads }: LoadOptions): Promise<Measured> {
  // autocannon's histogram counts whole milliseconds (a 2.9 ms median reads 2), which at a
  // p50 of 2 or 3 ms makes p99/p50 a ratio of rounded numbers; each response's time is kept
  // here instead (its 'response' event gives it in ms with a fraction).
  const latencies: number[] = [];
  const tally: MixTally = new Map();
  const failures = new Map<string, number>();
  const pid = server.child.pid as number;
  const threadsBefore = threads ? threadCpuMs(pid) : undefined;
  // One run's pets for sale, shared by its connections.
  const forSale = sells(scenario) ? await restock(server, rows) : undefined;
  const cpuBefore = cpuMs(pid);
  const dbBefore = postgresCpuMs();
  const start = Number(process.hrtime.bigint() / 1000n);
  const result = await autocannon({
    url: server.url,
    connections,
    duration: seconds,
    ...(scenario.mix
      ? {
          // A client sends content-type only with a body (walkClients adds it to creates).
          headers: { authorization: server.authorization },
          setupClient: walkClients(scenario.mix, rows, seed, tally, failures, forSale),
        }
      : {
          headers: { authorization: server.authorization, 'content-type': 'application/json' },
          requests: [loadRequest(scenario, rows)],
          setupClient: (client: autocannon.Client) => client.on('response', (_status: number, _bytes: number, ms: number) => latencies.push(ms)),
        }),
  });
  const end = Number(process.hrtime.bigint() / 1000n);
  const cpu = cpuMs(pid) - cpuBefore;
  const dbCpu = [...postgresCpuMs()].reduce((sum, [dbPid, ms]) => sum + ms - (dbBefore.get(dbPid) ?? 0), 0);
  const threadsAfter = threadsBefore ? threadCpuMs(pid) : undefined;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${server.name} ${scenario.name}: ${result.non2xx} non-2xx, ${result.errors} errors (of ${result['2xx'] + result.non2xx})${failures.size ? `: ${[...failures].map(([what, n]) => `${n} × ${what}`).join(', ')}` : ''}`);
  const operations: NonNullable<Measured['operations']> = {};
  for (const [operation, times] of [...tally].sort(([a], [b]) => a.localeCompare(b))) {
    times.sort((a, b) => a - b);
    operations[operation] = { answers: times.length, p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
    // Not push(...times): spreading 100,000 arguments (hello world, 20 s) overflows the stack.
    for (const t of times) latencies.push(t);
  }
  latencies.sort((a, b) => a - b);
  const total = result.requests.total;
  return {
    rps: result.requests.average,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    cpuUs: (cpu * 1000) / total,
    dbCpuUs: (dbCpu * 1000) / total,
    answers: total,
    window: { start, end },
    ...(scenario.mix ? { operations } : {}),
    ...(threadsBefore && threadsAfter ? { threads: Object.fromEntries([...threadsAfter].map(([name, ms]) => [name, ((ms - (threadsBefore.get(name) ?? 0)) * 1000) / total])) } : {}),
  };
}

/**
 * Walks `mix` for `steps` requests on two servers side by side, one request at a time, and
 * throws unless both answered each with the same status and, for reads, the same body: the
 * two are then doing the same work in a mixed run (the same pages, not just the same URLs).
 * Creates are compared without their ids (each server numbers its own); renames (PATCH)
 * whole: they name seeded pets, which have the same ids on both.
 */
/** A body without the values each server gives itself: `*At` times, and with `ids` the `id`. */
function withoutOwnValues(body: unknown, ids: boolean): unknown {
  if (Array.isArray(body)) return body.map((item) => withoutOwnValues(item, ids));
  if (!body || typeof body !== 'object') return body;
  return Object.fromEntries(Object.entries(body).filter(([k]) => !(ids && k === 'id') && !k.endsWith('At')));
}

export async function checkSameAnswers(servers: [Server, Server], mix: Mix, rows: number, seed: number, steps: number): Promise<void> {
  const forSale = sells(mix) ? await Promise.all(servers.map((server) => restock(server, rows))) : [undefined, undefined];
  const walks = servers.map((_, s) => new Walk(mix, seed, rows, forSale[s]));
  const seen: (Seen | undefined)[] = [undefined, undefined];
  for (let i = 0; i < steps; i++) {
    const answers = await Promise.all(
      servers.map(async (server, s) => {
        const step = (walks[s] as Walk).next(seen[s]);
        const response = await fetch(new URL(step.path, server.url), {
          method: step.method,
          headers: { authorization: server.authorization, ...(step.body ? { 'content-type': 'application/json' } : {}) },
          ...(step.body ? { body: step.body } : {}),
        });
        const text = await response.text();
        const body = (text === '' ? undefined : JSON.parse(text)) as unknown;
        seen[s] = { status: response.status, next: nextLink({ link: response.headers.get('link') ?? undefined }), location: response.headers.get('location') ?? undefined };
        // What each server assigns itself: ids (of what it creates), and every time (a pet's
        // and an order's: each catalogue was seeded at its own moment).
        const comparable = withoutOwnValues(body, step.method === 'POST');
        return { step: `${step.method} ${step.path}`, status: response.status, next: seen[s]?.next !== undefined, body: JSON.stringify(comparable) ?? '' };
      }),
    );
    const [a, b] = answers as [(typeof answers)[number], (typeof answers)[number]];
    if (a.status !== b.status || a.next !== b.next || a.body !== b.body) {
      throw new Error(`${mix.name}, step ${i}: ${servers[0].name} and ${servers[1].name} answered differently:\n  ${a.step}: ${a.status} ${a.body.slice(0, 300)}\n  ${b.step}: ${b.status} ${b.body.slice(0, 300)}`);
    }
  }
}

export interface Server {
  name: string;
  url: string;
  child: ChildProcess;
  authorization: string;
  /** Its database (for `restock`). */
  databaseUrl?: string;
}

/** Compiles the service: the bench runs `node dist/src/server.js`, as production does. */
export function build(): void {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
}

/**
 * Starts a server on a fixed free port with its output going to /dev/null (the service
 * still logs at info; only the bench process must not spend CPU reading it), and resolves
 * once it answers.
 */
export async function start(name: string, args: string[], env: NodeJS.ProcessEnv, authorization: string, cwd = root): Promise<Server> {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = probe.address() as { port: number };
      probe.close(() => resolve(p));
    });
  });
  // BENCH_SERVER_LOG=<folder>: each server's output goes to <folder>/<name>.log instead, to
  // read what a failed run's server said.
  const sink = openSync(process.env.BENCH_SERVER_LOG ? path.join(process.env.BENCH_SERVER_LOG, `${name}.log`) : '/dev/null', 'w');
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', sink, 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; tries < 600; tries++) {
    if (child.exitCode !== null) throw new Error(`${name} exited ${child.exitCode}`);
    const up = await fetch(`${url}/v1/pets/1`, { headers: { authorization } }).then(
      (r) => r.status !== 401,
      () => false,
    );
    if (up) return { name, url, child, authorization, ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}) };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} did not start`);
}

/**
 * Our service as the bench runs it: the full contract in force, logging at info. `dir` is
 * the project to run: this one, or a baseline built by `buildBaseline`; `nodeArgs` go to
 * node before the script (`--cpu-prof`, for bench/profile.ts).
 */
export async function startOurs(databaseUrl: string, key: string, name = 'ours', dir = root, nodeArgs: string[] = []): Promise<Server> {
  // BENCH_TRACING=on: this tree's service ('ours', not a baseline) traces every request at
  // full sampling, exporting to an OTLP receiver on loopback that reads and drops what it is
  // sent: a process of its own, as a collector is, not taking the load generator's turns.
  const tracing = name === 'ours' && process.env.BENCH_TRACING === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: await otlpSink() } : {};
  return start(
    name,
    [...nodeArgs, 'dist/src/server.js'],
    { DATABASE_URL: databaseUrl, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', RATE_LIMIT_MAX: '10000000', MIGRATE_ON_START: 'false', ...tracing },
    `Bearer ${key}`,
    dir,
  );
}

const SINK = `const server = require('node:http').createServer((q, r) => { q.resume(); q.on('end', () => r.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()); });
server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
let sink: Promise<string> | undefined;
/** An OTLP/HTTP receiver on 127.0.0.1, in a process of its own, that answers 200 to everything: its base URL. */
function otlpSink(): Promise<string> {
  sink ??= new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', SINK], { stdio: ['ignore', 'pipe', 'inherit'] });
    process.once('exit', () => child.kill());
    child.once('error', reject);
    child.stdout.once('data', (port: Buffer) => {
      // It must not keep the bench running; it ends with it.
      child.unref();
      child.stdout.destroy();
      resolve(`http://127.0.0.1:${String(port).trim()}`);
    });
  });
  return sink;
}

/** A build of the service: this working tree, or the service as it was at a commit (for a before/after measured in one run). */
export interface Build {
  /** Short commit id, or 'working tree'. */
  commit: string;
  dir: string;
  /** Its own migrations (its migrations/ folder). */
  migrate: (url: string) => Promise<unknown>;
  /** It has the store (orders): the scenarios that buy can run on it. */
  store: boolean;
  remove: () => void;
}

export const workingTree: Build = { commit: 'working tree', dir: root, migrate: (url) => migrate(url, { info: () => {} }), store: true, remove: () => {} };

/**
 * Extracts `ref` (git archive) into a temporary folder, links this project's node_modules
 * into it and compiles it. The dependencies are today's: a baseline whose code needs a
 * package that has since been removed fails to compile, and says so.
 */
export async function buildAt(ref: string): Promise<Build> {
  const commit = execFileSync('git', ['rev-parse', '--short', `${ref}^{commit}`], { cwd: root, encoding: 'utf8' }).trim();
  const dir = mkdtempSync(path.join(os.tmpdir(), `animal-store-baseline-${commit}-`));
  execFileSync('sh', ['-c', `git archive --format=tar ${commit} | tar -x -C "${dir}"`], { cwd: root });
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'inherit' });
  const { migrate: migrateThere } = (await import(pathToFileURL(path.join(dir, 'dist/src/db/migrate.js')).href)) as typeof import('../src/db/migrate.js');
  const store = existsSync(path.join(dir, 'migrations/1763700000006_create-orders.sql'));
  return { commit, dir, migrate: (url) => migrateThere(url, { info: () => {} }), store, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

function status(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`));
  return Math.round(Number(/\d+/.exec(line ?? '')?.[0] ?? 0) / 1024);
}
/** Peak resident set size of a process so far (VmHWM), in MiB. */
export const peakRssMiB = (pid: number): number => status(pid, 'VmHWM');
/** Resident set size of a process now (VmRSS), in MiB. */
export const rssMiB = (pid: number): number => status(pid, 'VmRSS');
/** CPU time (user + system) in ms of a /proc stat file, in clock ticks of 10 ms. */
function statCpuMs(file: string): number {
  const fields = readFileSync(file, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
/** CPU time a process has used so far (user + system, all threads), in ms: /proc/<pid>/stat. */
export const cpuMs = (pid: number): number => statCpuMs(`/proc/${pid}/stat`);
/**
 * CPU time each PostgreSQL process of this machine (by name: the postmaster, its backends
 * and workers) has used so far, in ms, by pid. A process that ends between two readings
 * takes its time with it; the servers' pooled connections live through a run.
 */
export function postgresCpuMs(): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
      byPid.set(Number(entry), statCpuMs(`/proc/${entry}/stat`));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return byPid;
}
/** CPU time each thread of a process has used so far, in ms, summed by thread name (/proc/<pid>/task/<tid>/comm; the main thread is 'main'). */
export function threadCpuMs(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = tid === String(pid) ? 'main' : readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      byName.set(name, (byName.get(name) ?? 0) + statCpuMs(`/proc/${pid}/task/${tid}/stat`));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return byName;
}

export interface BenchDatabase {
  url: string;
  /** The same seeded catalogue in a database of its own, for the reference (see below). */
  referenceUrl: string;
  /** The same again, migrated by the baseline's own migrations, when one is given. */
  baselineUrl?: string;
  key: string;
  pgVersion: string;
  close: () => Promise<void>;
}

/** A new database, migrated, with `rows` pets in a realistic status mix and one API key. */
/** `ours` and `baseline` migrate their own databases; the reference gets today's schema. */
export async function seededDatabase(rows: number, ours: Build = workingTree, baseline?: Build): Promise<BenchDatabase> {
  let stopDatabase = async (): Promise<void> => {};
  let adminUrl = process.env.DATABASE_URL;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'animal-store-bench-'));
  if (!adminUrl) {
    const embedded = await openEmbeddedPostgres({ dataDir, log: () => {} });
    adminUrl = embedded.adminUrl;
    stopDatabase = () => embedded.stop();
  }
  const name = `animal_store_bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const pgVersion = (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '';
  const urlOf = (database: string): string => {
    const url = new URL(adminUrl as string);
    url.pathname = `/${database}`;
    return url.toString();
  };
  const key = generateApiKey();
  const databases = [name, `${name}_reference`, ...(baseline ? [`${name}_baseline`] : [])];
  for (const database of databases) {
    await admin.query(`CREATE DATABASE ${database}`);
    if (database === name) await ours.migrate(urlOf(database));
    else if (baseline && database === `${name}_baseline`) await baseline.migrate(urlOf(database));
    else await migrate(urlOf(database), { info: () => {} });
    const db = new pg.Client({ connectionString: urlOf(database) });
    await db.connect();
    // A realistic mix: mostly available, some pending, a few sold, some without status, each
    // of 10 breeds (searchMix finds them); then the pets for sale, all available.
    await db.query(
      `INSERT INTO pets (name, category_id, status)
       SELECT 'pet-' || i || ' ' || ($2::text[])[1 + i * 7 % 10],
         1 + i % 50, (ARRAY['available','available','available','pending','sold',NULL])[1 + i % 6]
       FROM generate_series(1, $1) AS i`,
      [rows, BREEDS],
    );
    await db.query("INSERT INTO pets (name, category_id, status) SELECT 'for-sale-' || i, 1 + i % 50, 'available' FROM generate_series(1, $1) AS i", [SALE_PETS]);
    await db.query('ANALYZE pets');
    await db.query('INSERT INTO api_keys (name, key_hash) VALUES ($1, $2)', ['bench', hashApiKey(key)]);
    // The reference is what a user would write without our guarantees: its pet ids are a
    // plain default, without the append order (migrations/1763700000008_…), no statement triggers keep
    // the inventory's totals (…0006), and its orders are a plain table with a serial id
    // (no id section for listOrders' completeness, no key, no one-placed-order-per-pet index).
    if (database === `${name}_reference`) {
      for (const trigger of ['pets_append_order', 'pets_append_order_mark']) await db.query(`DROP TRIGGER IF EXISTS ${trigger} ON pets`);
      await db.query("ALTER TABLE pets ALTER COLUMN id SET DEFAULT nextval('pets_id_seq'), ALTER COLUMN visible_after SET DEFAULT '0'");
      for (const trigger of ['pets_count_inserts', 'pets_count_updates', 'pets_count_deletes', 'pets_count_truncate']) await db.query(`DROP TRIGGER IF EXISTS ${trigger} ON pets`);
      // Nor does a user's service write an event per change.
      for (const trigger of ['pets_events_inserts', 'pets_events_updates', 'pets_events_deletes']) await db.query(`DROP TRIGGER IF EXISTS ${trigger} ON pets`);
      await db.query('DROP TABLE IF EXISTS orders CASCADE');
      await db.query(
        `CREATE TABLE orders (
           id bigserial PRIMARY KEY,
           pet_id bigint NOT NULL REFERENCES pets (id),
           status text NOT NULL,
           placed_at timestamptz NOT NULL DEFAULT now(),
           expires_at timestamptz NOT NULL,
           closed_at timestamptz
         )`,
      );
    }
    await db.end();
  }
  await admin.end();
  return {
    url: urlOf(name),
    referenceUrl: urlOf(`${name}_reference`),
    ...(baseline ? { baselineUrl: urlOf(`${name}_baseline`) } : {}),
    key,
    pgVersion,
    close: async () => {
      // On a server of the user's own (DATABASE_URL), the copies are dropped again: each run
      // would otherwise leave its catalogues behind. FORCE ends a connection still open.
      if (process.env.DATABASE_URL) {
        const dropper = new pg.Client({ connectionString: adminUrl });
        await dropper.connect();
        for (const database of databases) await dropper.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
        await dropper.end();
      }
      await stopDatabase();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function machine(pgVersion: string): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown';
  return `${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.version}, PostgreSQL ${pgVersion}`;
}

/**
 * Samples the machine's 1-minute load average every 10 s until `stop`, which says what it
 * was (start, median, highest): on a machine shared with other work, a run is read in the
 * light of it.
 */
export function watchLoad(): { stop: () => string } {
  const samples = [os.loadavg()[0] as number];
  const timer = setInterval(() => samples.push(os.loadavg()[0] as number), 10_000).unref();
  return {
    stop: () => {
      clearInterval(timer);
      samples.push(os.loadavg()[0] as number);
      const sorted = [...samples].sort((a, b) => a - b);
      return `load average (1 min) ${samples[0]?.toFixed(1)} at the start, median ${quantile(sorted, 0.5).toFixed(1)}, highest ${sorted[sorted.length - 1]?.toFixed(1)} (${os.cpus().length} cores)`;
    },
  };
}

export const stamp = (): string => new Date().toISOString().replace(/[:.]/g, '-');

/**
 * A webhook receiver on loopback that holds every request `holdMs` before it answers 200 (0:
 * at once). At the service's 10 s budget per attempt, each delivery to it times out and is
 * retried, so an endpoint that points at it is always busy (BENCH_WEBHOOKS in bench/run.ts).
 */
export async function webhookReceiver(holdMs: number): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const held = new Set<NodeJS.Timeout>();
  const server = createHttpServer((request, response) => {
    requests += 1;
    request.resume();
    if (holdMs <= 0) {
      response.end();
      return;
    }
    const timer = setTimeout(() => {
      held.delete(timer);
      response.end();
    }, holdMs);
    held.add(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests: () => requests,
    close: async () => {
      for (const timer of held) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Registers `count` webhook endpoints on `server` through createWebhookEndpoint, each for every event type, all at `url`. */
export async function registerWebhookEndpoints(server: Server, url: string, count: number): Promise<void> {
  for (let n = 0; n < count; n++) {
    const response = await fetch(`${server.url}/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: server.authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ url, eventTypes: WEBHOOK_EVENT_TYPES, description: `bench: receiver ${n + 1}` }),
    });
    if (response.status !== 201) throw new Error(`createWebhookEndpoint on ${server.name}: ${response.status} ${await response.text()}`);
  }
}
