// `npm run bench:soak`: does the service's memory stay flat under sustained load? Runs this
// service (as `npm run bench` does: full contract, logging at info) under a mixed load of
// the four benchmarked operations for BENCH_SOAK_SECONDS (default 300), reads its RSS every
// 5 s, and compares the rest of the run with the level reached after the first minute
// (warm-up: JIT, pools, caches). Writes bench/results/soak-<time>.md (git-ignored) and the
// `npm run bench:soak` section of bench/latest.md (tracked; bench/latest.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { recordLatest } from './latest.js';
import { build, loadRequest, machine, root, rssMiB, scenarios, seededDatabase, stamp, startOurs } from './harness.js';

const SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 300);
const WARM_UP_SECONDS = Math.min(60, SECONDS / 5);
const ROWS = 10_000;

build();
const database = await seededDatabase(ROWS);
const ours = await startOurs(database.url, database.key);
const pid = ours.child.pid as number;
const samples: { s: number; rss: number }[] = [];
const started = performance.now();
const timer = setInterval(() => samples.push({ s: Math.round((performance.now() - started) / 1000), rss: rssMiB(pid) }), 5000);
let result: autocannon.Result;
try {
  result = await autocannon({
    url: ours.url,
    connections: 16,
    duration: SECONDS,
    headers: { authorization: ours.authorization, 'content-type': 'application/json' },
    requests: scenarios.map((scenario) => loadRequest(scenario, ROWS)),
  });
} finally {
  clearInterval(timer);
  ours.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 1000));
  await database.close();
}

const warm = samples.filter((x) => x.s >= WARM_UP_SECONDS);
const base = warm[0]?.rss ?? 0;
const max = Math.max(...warm.map((x) => x.rss));
const min = Math.min(...warm.map((x) => x.rss));
const last = warm[warm.length - 1]?.rss ?? 0;
const growth = (max - base) / base;
const lines = [
  `# Soak ${new Date().toISOString()}`,
  '',
  `Machine: ${machine(database.pgVersion)}.`,
  `autocannon, 16 connections, ${SECONDS} s, the four operations of \`npm run bench\` in turn; ${ROWS} seeded pets (plus those created). RSS of the service every 5 s.`,
  '',
  `Requests: ${result.requests.total} (${Math.round(result.requests.average)}/s), non-2xx: ${result.non2xx}, errors: ${result.errors}.`,
  '',
  `| RSS after ${WARM_UP_SECONDS} s (baseline) | min after | max after | at the end | max vs baseline |`,
  '|---|---|---|---|---|',
  `| ${base} MiB | ${min} MiB | ${max} MiB | ${last} MiB | **${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)}%** |`,
  '',
  `Flat (within 10% of the baseline): **${Math.abs(growth) <= 0.1 && (base - min) / base <= 0.1 ? 'yes' : 'no'}**.`,
  '',
  'Samples (s: MiB):',
  '',
  samples.map((x) => `${x.s}: ${x.rss}`).join(', '),
  '',
];
mkdirSync(path.join(root, 'bench/results'), { recursive: true });
const results = path.join(root, 'bench/results', `soak-${stamp()}.md`);
writeFileSync(results, lines.join('\n'));
recordLatest('bench:soak', lines.join('\n'), results);
console.log(lines.join('\n'));
