// `npm run bench:bulk`: what an export of the whole catalogue costs the service's memory.
// Seeds BENCH_BULK_ROWS pets (default 1,000,000), starts this service as `npm run bench`
// does (built, full contract, logging at info), and exports every pet (exportPets) three
// times, one after the other: as CSV and as NDJSON, each read as fast as the client can, then
// as CSV by a client that reads BENCH_BULK_SLOW_KIB KiB a second (default 256) for 10 s
// and goes away. The service's RSS is read every 100 ms; each export reports the RSS when it
// started, the highest while it ran, the difference (the bound the service keeps: 100 MiB),
// the rows and the bytes per second. Writes bench/results/bulk-<time>.md (git-ignored) and
// the `npm run bench:bulk` section of bench/latest.md (tracked; bench/latest.ts).
import http from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { recordLatest } from './latest.js';
import { build, machine, root, rssMiB, SALE_PETS, seededDatabase, stamp, startOurs, type Server } from './harness.js';

const ROWS = Number(process.env.BENCH_BULK_ROWS ?? 1_000_000);
const SLOW_KIB = Number(process.env.BENCH_BULK_SLOW_KIB ?? 256);
const SLOW_SECONDS = 10;
const BOUND_MIB = 100;
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

build();
const database = await seededDatabase(ROWS);
const ours = await startOurs(database.url, database.key);
const runs: Exported[] = [];
try {
  runs.push(await exportAll(ours, 'CSV, read at once', 'text/csv'));
  runs.push(await exportAll(ours, 'NDJSON, read at once', 'application/x-ndjson'));
  runs.push(await exportAll(ours, `CSV, read at ${SLOW_KIB} KiB/s for ${SLOW_SECONDS} s, then left`, 'text/csv', true));
} finally {
  ours.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 1000));
  await database.close();
}

const rowsOf = (run: Exported) => (run.name.startsWith('CSV') ? run.rows - 1 : run.rows);
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
];
mkdirSync(path.join(root, 'bench/results'), { recursive: true });
const results = path.join(root, 'bench/results', `bulk-${stamp()}.md`);
writeFileSync(results, lines.join('\n'));
recordLatest('bench:bulk', lines.join('\n'), results);
console.log(lines.join('\n'));
