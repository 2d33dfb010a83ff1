// `npm run bench`: this service against a hand-written bare Fastify + pg reference
// (bench/reference.ts), measured alternately (A B A B ...) in one run with autocannon, on
// the same seeded database. Prints a table (requests/s, p50, p99, peak RSS, ours/reference)
// and writes it to bench/results/ with the machine's description. Medians of REPS runs.
//
// Settings (environment): DATABASE_URL (else an embedded PostgreSQL), BENCH_DURATION (s,
// default 10), BENCH_REPS (default 3), BENCH_CONNECTIONS (default 16), BENCH_SEED_ROWS
// (default 10000), BENCH_LOG_LEVEL (ours' log level, default info: the contract's setting;
// other values only to measure what logging costs), BENCH_ONLY (a regular expression:
// only the scenarios whose name matches).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { build, loadRequest, machine, peakRssMiB, root, scenarios, seededDatabase, stamp, start, startOurs, type Scenario, type Server } from './harness.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ROWS = Number(process.env.BENCH_SEED_ROWS ?? 10_000);
// Only the scenarios whose name matches (a regular expression), for ablations.
const ONLY = new RegExp(process.env.BENCH_ONLY ?? '');

async function measure(server: Server, scenario: Scenario, seconds: number) {
  const result = await autocannon({
    url: server.url,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { authorization: server.authorization, 'content-type': 'application/json' },
    requests: [loadRequest(scenario, ROWS)],
  });
  const ok = scenario.method === 'POST' ? result['2xx'] : result['2xx'];
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${server.name} ${scenario.name}: ${result.non2xx} non-2xx, ${result.errors} errors (of ${ok + result.non2xx})`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

async function main(): Promise<void> {
  build();
  const database = await seededDatabase(ROWS);
  const ours = await startOurs(database.url, database.key);
  const reference = await start('reference', ['--import', 'tsx', 'bench/reference.ts'], { DATABASE_URL: database.url, REFERENCE_TOKEN: 'reference' }, 'Bearer reference');

  const rows: string[] = [];
  const json: Record<string, unknown>[] = [];
  try {
    for (const scenario of scenarios.filter((s) => ONLY.test(s.name))) {
      const runs: Record<string, { rps: number; p50: number; p99: number }[]> = { ours: [], reference: [] };
      for (const server of [ours, reference]) await measure(server, scenario, 2); // warm-up
      for (let rep = 0; rep < REPS; rep++) {
        for (const server of rep % 2 === 0 ? [ours, reference] : [reference, ours]) runs[server.name]?.push(await measure(server, scenario, DURATION));
      }
      const summary = (n: string) => ({ rps: median(runs[n]!.map((r) => r.rps)), p50: median(runs[n]!.map((r) => r.p50)), p99: median(runs[n]!.map((r) => r.p99)) });
      const a = summary('ours');
      const b = summary('reference');
      const ratio = a.rps / b.rps;
      rows.push(`| ${scenario.name} | ${Math.round(a.rps)} | ${Math.round(b.rps)} | **${ratio.toFixed(2)}** | ${a.p50} / ${a.p99} | ${b.p50} / ${b.p99} |`);
      json.push({ scenario: scenario.name, ours: a, reference: b, ratio });
      console.log(rows[rows.length - 1]);
    }
  } finally {
    const rss = { ours: peakRssMiB(ours.child.pid as number), reference: peakRssMiB(reference.child.pid as number) };
    ours.child.kill('SIGTERM');
    reference.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    const description = machine(database.pgVersion);
    const table = [
      `# Benchmark ${new Date().toISOString()}`,
      '',
      `Machine: ${description}. Load generator, both servers and PostgreSQL share it.`,
      `autocannon, ${CONNECTIONS} connections, ${DURATION} s per run, ${REPS} runs per server alternating (A B, B A, ...), medians; ${ROWS} seeded pets.`,
      'Ours: full contract in force (validation, auth, error handling, request ids, deprecation headers, rate limiting on, security headers, logging at info, to /dev/null).',
      '',
      '| Operation | ours req/s | reference req/s | ours/reference | ours p50 / p99 ms | reference p50 / p99 ms |',
      '|---|---|---|---|---|---|',
      ...rows,
      '',
      `Peak RSS: ours ${rss.ours} MiB, reference ${rss.reference} MiB.`,
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
