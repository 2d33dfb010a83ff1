// `npm run bench`: this service against a bare Fastify + pg reference written as a user would
// write it (bench/reference.ts), measured alternately (A B, B A, ...) in one run with
// autocannon at each concurrency, on the same seeded catalogue. The same run measures the
// machine's limits: Fastify's hello world (bench/hello.ts) and pgbench running the listPets
// query straight against PostgreSQL. Prints a table per concurrency (requests/s, p50, p99,
// ours/reference, ours as a fraction of each limit) and writes it to bench/results/ with the
// machine's description. Medians of REPS runs.
//
// Settings (environment): DATABASE_URL (else an embedded PostgreSQL), BENCH_CONNECTIONS
// (comma-separated, default 16,50,200), BENCH_DURATION (s, default 8), BENCH_REPS (default 3),
// BENCH_SEED_ROWS (default 10000), BENCH_LOG_LEVEL (ours' log level, default info: the
// contract's setting; other values only to measure what logging costs), BENCH_ONLY (a regular
// expression: only the scenarios whose name matches), PGBENCH (path of pgbench; by default the
// one on PATH or under /usr/lib/postgresql).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { build, loadRequest, machine, peakRssMiB, root, scenarios, seededDatabase, stamp, start, startOurs, type Scenario, type Server } from './harness.js';

const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '16,50,200').split(',').map(Number);
const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const ROWS = Number(process.env.BENCH_SEED_ROWS ?? 10_000);
const ONLY = new RegExp(process.env.BENCH_ONLY ?? '');

interface Sample {
  rps: number;
  p50: number;
  p99: number;
}

async function measure(server: Server, scenario: Scenario, connections: number, seconds: number): Promise<Sample> {
  const result = await autocannon({
    url: server.url,
    connections,
    duration: seconds,
    headers: { authorization: server.authorization, 'content-type': 'application/json' },
    requests: [loadRequest(scenario, ROWS)],
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${server.name} ${scenario.name}: ${result.non2xx} non-2xx, ${result.errors} errors (of ${result['2xx'] + result.non2xx})`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const summary = (runs: Sample[]): Sample => ({ rps: median(runs.map((r) => r.rps)), p50: median(runs.map((r) => r.p50)), p99: median(runs.map((r) => r.p99)) });

function findPgbench(): string | undefined {
  if (process.env.PGBENCH) return process.env.PGBENCH;
  try {
    return execFileSync('sh', ['-c', 'command -v pgbench'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort().reverse() : [];
    return versions.map((v) => `/usr/lib/postgresql/${v}/bin/pgbench`).find((p) => existsSync(p));
  }
}

/** Transactions/s of pgbench running `sql` (prepared, one statement a transaction) with `clients` clients. */
function pgbench(binary: string, url: string, sql: string, clients: number, seconds: number): number {
  const file = path.join(os.tmpdir(), `animal-store-pgbench-${process.pid}.sql`);
  writeFileSync(file, `${sql};\n`);
  const output = execFileSync(binary, ['-n', '-M', 'prepared', '-c', String(clients), '-j', String(Math.min(clients, os.availableParallelism())), '-T', String(seconds), '-f', file, url], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return Number(/tps = ([\d.]+)/.exec(output)?.[1] ?? NaN);
}

// The listPets queries as pgbench runs them: the reference's plain SQL, one more row than the
// page (as both servers ask).
const limitSql: Record<string, string> = {
  'GET /v1/pets?limit=20': 'SELECT id, name, category_id, status FROM pets WHERE id > 0 ORDER BY id LIMIT 21',
  'GET /v1/pets?limit=100&status=available': "SELECT id, name, category_id, status FROM pets WHERE status = 'available' AND id > 0 ORDER BY id LIMIT 101",
};

async function main(): Promise<void> {
  build();
  const database = await seededDatabase(ROWS);
  const ours = await startOurs(database.url, database.key);
  const reference = await start('reference', ['--import', 'tsx', 'bench/reference.ts'], { DATABASE_URL: database.referenceUrl, REFERENCE_TOKEN: 'reference' }, 'Bearer reference');
  const hello = await start('hello', ['--import', 'tsx', 'bench/hello.ts'], {}, '', '/');
  const pgbenchBinary = findPgbench();
  const notes: string[] = [];
  if (!pgbenchBinary) notes.push('pgbench: not found (it ships with PostgreSQL\'s client tools: `apt-get install postgresql-client`, or set PGBENCH); its column is empty.');

  const sections: string[] = [];
  const json: Record<string, unknown>[] = [];
  try {
    for (const connections of CONNECTIONS) {
      const helloRuns: Sample[] = [];
      for (let rep = 0; rep < REPS; rep++) helloRuns.push(await measure(hello, { name: 'hello', method: 'GET', path: '/' }, connections, DURATION));
      const helloRps = summary(helloRuns).rps;
      const rows: string[] = [];
      for (const scenario of scenarios.filter((s) => ONLY.test(s.name))) {
        const runs: Record<string, Sample[]> = { ours: [], reference: [] };
        for (const server of [ours, reference]) await measure(server, scenario, connections, 2); // warm-up
        for (let rep = 0; rep < REPS; rep++) {
          for (const server of rep % 2 === 0 ? [ours, reference] : [reference, ours]) runs[server.name]?.push(await measure(server, scenario, connections, DURATION));
        }
        const a = summary(runs.ours!);
        const b = summary(runs.reference!);
        const sql = limitSql[scenario.name];
        const pg = sql && pgbenchBinary ? pgbench(pgbenchBinary, database.url, sql, connections, DURATION) : undefined;
        const ratio = a.rps / b.rps;
        const tail = a.p99 / Math.max(a.p50, 1);
        rows.push(
          `| ${scenario.name} | ${Math.round(a.rps)} | ${Math.round(b.rps)} | **${ratio.toFixed(2)}** | ${a.p50} / ${a.p99} | ${tail.toFixed(1)} | ${b.p50} / ${b.p99} | ${(a.rps / helloRps).toFixed(2)} | ${pg ? `${Math.round(pg)} (${(a.rps / pg).toFixed(2)})` : '-'} |`,
        );
        json.push({ connections, scenario: scenario.name, ours: a, reference: b, ratio, p99OverP50: tail, hello: helloRps, pgbench: pg ?? null });
        console.log(`${connections} connections: ${rows[rows.length - 1]}`);
      }
      sections.push(
        [
          `### ${connections} connections (hello world: ${Math.round(helloRps)} req/s)`,
          '',
          '| Operation | ours req/s | reference req/s | ours/reference | ours p50 / p99 ms | ours p99/p50 | reference p50 / p99 ms | ours / hello world | pgbench tps (ours / pgbench) |',
          '|---|---|---|---|---|---|---|---|---|',
          ...rows,
          '',
        ].join('\n'),
      );
    }
  } finally {
    const rss = { ours: peakRssMiB(ours.child.pid as number), reference: peakRssMiB(reference.child.pid as number) };
    for (const server of [ours, reference, hello]) server.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    const description = machine(database.pgVersion);
    const table = [
      `# Benchmark ${new Date().toISOString()}`,
      '',
      `Machine: ${description}. Load generator, the servers and PostgreSQL share it.`,
      `autocannon at ${CONNECTIONS.join(', ')} connections, ${DURATION} s per run, ${REPS} runs per server alternating (A B, B A, ...), medians; ${ROWS} seeded pets.`,
      'Ours: full contract in force (validation, auth, error handling, request ids, deprecation headers, rate limiting on, security headers, wire-level checks, pets committed in id order, logging at info, to /dev/null).',
      'Reference: bench/reference.ts, Fastify + pg with its defaults (pool of 10), plain parameterised queries, a constant-string auth check, no validation, on its own copy of the catalogue without the id-order lock.',
      'Limits: hello world is bench/hello.ts (Fastify, no database); pgbench runs the listPets query (prepared) with as many clients as connections.',
      '',
      ...sections,
      `Peak RSS: ours ${rss.ours} MiB, reference ${rss.reference} MiB.`,
      ...notes.map((n) => `\n${n}`),
      '',
    ].join('\n');
    mkdirSync(path.join(root, 'bench/results'), { recursive: true });
    const when = stamp();
    writeFileSync(path.join(root, 'bench/results', `bench-${when}.md`), table);
    writeFileSync(path.join(root, 'bench/results', `bench-${when}.json`), JSON.stringify({ machine: description, rows: json, rss }, null, 2));
    console.log(`\n${table}`);
    await database.close();
  }
}

await main();
