// `npm run bench:profile`: where a request's time goes under mixed traffic. Runs
// this service (built, full contract, logging at info, as `npm run bench` runs it), the
// reference (bench/reference.ts) and Fastify's hello world (bench/hello.ts: the same
// requests answered with constants) one after the other, each under the same mixed load
// (bench/mix.ts, the same seeds) and under `node --cpu-prof`, and reads the profiles into
// µs per request by category of code (bench/cpuprofile.ts): Node's HTTP parsing and socket
// I/O, Fastify, validation, auth, handlers, the pg driver, serialisation, logging, GC.
//
// Each server runs the load twice, started afresh each time: without the profiler (what
// the request costs) and with it (where the time goes; the profiler's own thread and its
// interrupts add to the cost). The sampler wakes on wall-clock time, and on a shared
// machine the main thread is not always on a core when it does, so a category's share of
// the sampled (non-idle) time is scaled to the main thread's CPU time per request, read
// from /proc (utime + stime of the thread) over the same window. The other threads' CPU
// (V8's GC helpers, libuv's pool) is read from /proc too, by thread name. Only samples
// taken while the measured load ran count (the profile's clock is the monotonic clock, as
// process.hrtime's).
//
// Settings: DATABASE_URL (else an embedded PostgreSQL), BENCH_CONNECTIONS (default 50),
// BENCH_DURATION (s of measured load, default 20), BENCH_WARM_UP (s, default 5),
// BENCH_PROFILE_INTERVAL (sampling interval in µs, default 200), BENCH_SEED_ROWS (default
// 10000), BENCH_SEED (default 1), BENCH_ONLY (which mixed scenario, a regular expression;
// default the first), BENCH_BASELINE (a commit, profiled too: see below). Writes
// bench/results/profile-<time>.md and .json (git-ignored) and the `npm run bench:profile`
// section of bench/latest.md (tracked; bench/latest.ts); the .cpuprofile
// files stay in a temporary folder, named in the output (open them in Chrome's DevTools).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { categories, OTHER, summarise, type CpuProfile, type Summary } from './cpuprofile.js';
import { recordLatest } from './latest.js';
import { build, buildAt, machine, measureLoad, watchLoad, mixedScenarios, root, seededDatabase, stamp, start, startOurs, workingTree, type Measured, type Server } from './harness.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const DURATION = Number(process.env.BENCH_DURATION ?? 20);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 5);
const INTERVAL = Number(process.env.BENCH_PROFILE_INTERVAL ?? 200);
const ROWS = Number(process.env.BENCH_SEED_ROWS ?? 10_000);
const SEED = Number(process.env.BENCH_SEED ?? 1);
const scenario = mixedScenarios.find((s) => new RegExp(process.env.BENCH_ONLY ?? '').test(s.name)) ?? mixedScenarios[0];
if (!scenario) throw new Error('no mixed scenario');

interface Profiled {
  name: string;
  measured: Measured & { transactions: number };
  /** The same load on the same server started without --cpu-prof (what the profiler costs). */
  plain: Measured & { transactions: number };
  summary: Summary;
  /** The main thread's CPU time per request, µs (/proc), in the profiled run. */
  mainUs: number;
  file: string;
}

/**
 * Transactions committed in the service's database so far. A backend reports its counts
 * at most once a second, and when it goes idle after that: read after a pause.
 */
async function commits(url: string | undefined): Promise<number> {
  if (!url) return Number.NaN;
  await new Promise((r) => setTimeout(r, 1500));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()');
    return Number(rows[0]?.n);
  } finally {
    await client.end();
  }
}

/** Starts a server, loads it (warm-up, then the measured window) and stops it; with the database's transactions per request. */
async function loaded({ launch, databaseUrl }: Target, nodeArgs: string[]): Promise<Measured & { transactions: number }> {
  const server = await launch(nodeArgs);
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  const mixed = scenario as (typeof mixedScenarios)[number];
  try {
    await measureLoad(server, mixed, { connections: CONNECTIONS, seconds: WARM_UP, seed: SEED + 50_000, rows: ROWS });
    const before = await commits(databaseUrl);
    const measured = await measureLoad(server, mixed, { connections: CONNECTIONS, seconds: DURATION, seed: SEED, rows: ROWS, threads: true });
    // A statement sent outside BEGIN is a transaction of its own: with coalescing, fewer
    // than one per request.
    return { ...measured, transactions: ((await commits(databaseUrl)) - before) / (measured.answers ?? Number.NaN) };
  } finally {
    // A profile is written when the process exits (both servers exit on SIGTERM).
    server.child.kill('SIGTERM');
    await exited;
  }
}

/** A server to profile: how to start it (with node's arguments), and its database if any. */
interface Target {
  name: string;
  launch: (nodeArgs: string[]) => Promise<Server>;
  databaseUrl?: string;
}

/** The server under the load without, then with --cpu-prof; reads the profile. */
async function profiled(target: Target, dir: string): Promise<Profiled> {
  const { name } = target;
  const plain = await loaded(target, []);
  const out = path.join(dir, name);
  mkdirSync(out);
  const measured = await loaded(target, ['--cpu-prof', `--cpu-prof-dir=${out}`, `--cpu-prof-interval=${INTERVAL}`]);
  const file = readdirSync(out).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`${name} wrote no profile in ${out}`);
  const profile = JSON.parse(readFileSync(path.join(out, file), 'utf8')) as CpuProfile;
  const summary = summarise(profile, measured.window);
  return { name, measured, plain, summary, mainUs: measured.threads?.main ?? Number.NaN, file: path.join(out, file) };
}

const load = watchLoad();
build();
// BENCH_BASELINE=<commit>: that commit's service is profiled too, under the same load in the
// same run, as 'baseline' (built as `npm run bench` builds one): a before/after profile.
const baseline = process.env.BENCH_BASELINE ? await buildAt(process.env.BENCH_BASELINE) : undefined;
const database = await seededDatabase(ROWS, workingTree, baseline);
const dir = mkdtempSync(path.join(os.tmpdir(), 'animal-store-profile-'));
const targets: Target[] = [
  { name: 'ours', launch: (nodeArgs) => startOurs(database.url, database.key, 'ours', root, nodeArgs), databaseUrl: database.url },
  ...(baseline && database.baselineUrl
    ? [{ name: `baseline ${baseline.commit}`, launch: (nodeArgs: string[]) => startOurs(database.baselineUrl as string, database.key, 'baseline', baseline.dir, nodeArgs), databaseUrl: database.baselineUrl }]
    : []),
  { name: 'reference', launch: (nodeArgs) => start('reference', [...nodeArgs, '--import', 'tsx', 'bench/reference.ts'], { DATABASE_URL: database.referenceUrl, REFERENCE_TOKEN: 'reference' }, 'Bearer reference'), databaseUrl: database.referenceUrl },
  { name: 'hello world', launch: (nodeArgs) => start('hello', [...nodeArgs, '--import', 'tsx', 'bench/hello.ts'], {}, 'Bearer none') },
];
const results: Profiled[] = [];
try {
  for (const target of targets) results.push(await profiled(target, dir));
} finally {
  await database.close();
  baseline?.remove();
}

// Node 20 names every thread 'node' (the main one is 'main' here, by its id); the others
// are V8's platform workers (GC marking and scavenging, compilation) and libuv's pool (file
// writes: the log's).
const THREADS: Record<string, string> = { main: 'main thread', node: 'other threads (V8 GC and compiler workers, libuv pool)', 'v8:ProfEvntProc': "the profiler's thread" };
const us = (x: number | undefined): string => (x !== undefined && Number.isFinite(x) ? x.toFixed(1) : '–');
/** µs per request of a category: its share of the busy (non-idle) samples times the main thread's CPU per request. */
function perRequest(p: Profiled, sampled: number): number {
  const busy = p.summary.sampled - (p.summary.byCategory.get('idle')?.self ?? 0);
  return (sampled / busy) * p.mainUs;
}
const ours = results[0] as Profiled;
const hello = results[results.length - 1] as Profiled;
const names = [...categories.map((c) => c.name), OTHER].filter((n) => n !== 'idle');
const row = (label: string, cell: (r: Profiled) => string): string => `| ${label} | ${results.map(cell).join(' | ')} |`;
const threadNames = [...new Set(results.flatMap((r) => [...Object.keys(r.measured.threads ?? {}), ...Object.keys(r.plain.threads ?? {})]))].filter((t) =>
  results.some((r) => (r.measured.threads?.[t] ?? 0) + (r.plain.threads?.[t] ?? 0) > 0.05),
);
const idle = (r: Profiled): number => (100 * (r.summary.byCategory.get('idle')?.self ?? 0)) / r.summary.sampled;
const lines = [
  `# Profile under mixed traffic ${new Date().toISOString()}`,
  '',
  `Machine: ${machine(database.pgVersion)}; ${load.stop()}.`,
  `${scenario.name} (bench/mix.ts: ${scenario.mix.actions.map((a) => `${a.name} ${a.percent}%`).join(', ')} of actions), ${CONNECTIONS} connections, ${WARM_UP} s warm-up then ${DURATION} s measured, seed ${SEED}; ${ROWS} seeded pets. \`node --cpu-prof --cpu-prof-interval=${INTERVAL}\`.`,
  'Each server started afresh for each of two runs: without the profiler, then with it. Reference: bench/reference.ts. Hello world: bench/hello.ts answering the same requests with constants (no database).',
  '',
  `| | ${results.map((r) => r.name).join(' | ')} |`,
  `|---|${results.map(() => '---|').join('')}`,
  row('requests/s (profiled; without the profiler)', (r) => `${Math.round(r.measured.rps)}; ${Math.round(r.plain.rps)}`),
  row('p50 / p99 ms (profiled; without)', (r) => `${r.measured.p50.toFixed(1)} / ${r.measured.p99.toFixed(1)}; ${r.plain.p50.toFixed(1)} / ${r.plain.p99.toFixed(1)}`),
  row('process CPU µs/request, all threads (profiled; without)', (r) => `${us(r.measured.cpuUs)}; ${us(r.plain.cpuUs)}`),
  ...threadNames.map((t) => row(`${THREADS[t] ?? `thread \`${t}\``} µs/request (profiled; without)`, (r) => `${us(r.measured.threads?.[t] ?? 0)}; ${us(r.plain.threads?.[t] ?? 0)}`)),
  row('database transactions per request (profiled; without)', (r) => (Number.isFinite(r.plain.transactions) ? `${r.measured.transactions.toFixed(2)}; ${r.plain.transactions.toFixed(2)}` : '–')),
  row('main thread idle (share of sampled time)', (r) => `${idle(r).toFixed(0)}%`),
  row('samples in the window', (r) => String(r.summary.samples)),
  '',
  'Main thread, µs per request by category (self: samples whose innermost categorised frame is the category; total: samples with the category anywhere on the stack), scaled to the profiled run\'s main-thread CPU per request:',
  '',
  `| Category | ${results.map((r) => `${r.name} self / total`).join(' | ')} | ours − hello world (self) | ours: largest functions (self µs/request) |`,
  `|---|${results.map(() => '---|').join('')}---|---|`,
  ...names.map((n) => {
    const cells = results.map((r) => {
      const c = r.summary.byCategory.get(n) ?? { self: 0, total: 0 };
      return `${us(perRequest(r, c.self))} / ${us(perRequest(r, c.total))}`;
    });
    const largest = (ours.summary.functionsOf.get(n) ?? [])
      .slice(0, 4)
      .map(([f, t]) => `\`${f}\` ${us(perRequest(ours, t))}`)
      .join(', ');
    const difference = perRequest(ours, ours.summary.byCategory.get(n)?.self ?? 0) - perRequest(hello, hello.summary.byCategory.get(n)?.self ?? 0);
    return `| ${n} | ${cells.join(' | ')} | ${us(difference)} | ${largest} |`;
  }),
  `| **main thread (busy)** | ${results.map((r) => `**${us(r.mainUs)}**`).join(' | ')} | **${us(ours.mainUs - hello.mainUs)}** | |`,
  '',
  'Ours, the 30 functions with the most self time (µs per request):',
  '',
  '| Function | µs/request |',
  '|---|---|',
  ...ours.summary.byFunction
    .filter(([f]) => !f.startsWith('(idle)'))
    .slice(0, 30)
    .map(([f, t]) => `| \`${f}\` | ${us(perRequest(ours, t))} |`),
  '',
  `Profiles: ${results.map((r) => r.file).join(', ')}.`,
  '',
];
mkdirSync(path.join(root, 'bench/results'), { recursive: true });
const when = stamp();
const resultsFile = path.join(root, 'bench/results', `profile-${when}.md`);
writeFileSync(resultsFile, lines.join('\n'));
recordLatest('bench:profile', lines.join('\n'), resultsFile);
writeFileSync(
  path.join(root, 'bench/results', `profile-${when}.json`),
  JSON.stringify(
    results.map((r) => ({
      name: r.name,
      measured: r.measured,
      plain: r.plain,
      mainUs: r.mainUs,
      sampled: r.summary.sampled,
      samples: r.summary.samples,
      byCategory: Object.fromEntries(r.summary.byCategory),
      topFunctions: r.summary.byFunction.slice(0, 100),
      functionsOf: Object.fromEntries([...r.summary.functionsOf].map(([c, f]) => [c, f.slice(0, 20)])),
    })),
    null,
    2,
  ),
);
console.log(lines.join('\n'));
