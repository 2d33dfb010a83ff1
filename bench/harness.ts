// What `npm run bench` and `npm run bench:soak` share: a seeded database (an embedded
// PostgreSQL unless DATABASE_URL is given), servers started as child processes, RSS
// readings and the machine's description.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type autocannon from 'autocannon';
import pg from 'pg';
import { generateApiKey, hashApiKey } from '../src/auth/apiKeys.js';
import { openEmbeddedPostgres } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The four measured operations (the list). */
export interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** getPet over ids spread across the seeded rows. */
  randomId?: boolean;
}

export const scenarios: Scenario[] = [
  { name: 'GET /v1/pets?limit=20', method: 'GET', path: '/v1/pets?limit=20' },
  { name: 'GET /v1/pets?limit=100&status=available', method: 'GET', path: '/v1/pets?limit=100&status=available' },
  { name: 'GET /v1/pets/{id} (random ids)', method: 'GET', path: '/v1/pets/1', randomId: true },
  { name: 'POST /v1/pets', method: 'POST', path: '/v1/pets', body: JSON.stringify({ name: 'Bench', categoryId: 3, status: 'available' }) },
];

/** A scenario as an autocannon request, over `rows` seeded pets. */
export function loadRequest(scenario: Scenario, rows: number): autocannon.Request {
  return {
    method: scenario.method,
    path: scenario.path,
    ...(scenario.body ? { body: scenario.body } : {}),
    ...(scenario.randomId ? { setupRequest: (request: autocannon.Request) => ({ ...request, path: `/v1/pets/${1 + Math.floor(Math.random() * rows)}` }) } : {}),
  };
}

export interface Server {
  name: string;
  url: string;
  child: ChildProcess;
  authorization: string;
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
  const sink = openSync('/dev/null', 'w');
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', sink, 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; tries < 600; tries++) {
    if (child.exitCode !== null) throw new Error(`${name} exited ${child.exitCode}`);
    const up = await fetch(`${url}/v1/pets/1`, { headers: { authorization } }).then(
      (r) => r.status !== 401,
      () => false,
    );
    if (up) return { name, url, child, authorization };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} did not start`);
}

/**
 * Our service as the bench runs it: the full contract in force, logging at info. `dir` is
 * the project to run: this one, or a baseline built by `buildBaseline`.
 */
export function startOurs(databaseUrl: string, key: string, name = 'ours', dir = root): Promise<Server> {
  return start(
    name,
    ['dist/src/server.js'],
    { DATABASE_URL: databaseUrl, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', RATE_LIMIT_MAX: '10000000', MIGRATE_ON_START: 'false' },
    `Bearer ${key}`,
    dir,
  );
}

/** A build of the service: this working tree, or the service as it was at a commit (for a before/after measured in one run). */
export interface Build {
  /** Short commit id, or 'working tree'. */
  commit: string;
  dir: string;
  /** Its own migrations (its migrations/ folder). */
  migrate: (url: string) => Promise<unknown>;
  remove: () => void;
}

export const workingTree: Build = { commit: 'working tree', dir: root, migrate: (url) => migrate(url, { info: () => {} }), remove: () => {} };

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
  return { commit, dir, migrate: (url) => migrateThere(url, { info: () => {} }), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

function status(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`));
  return Math.round(Number(/\d+/.exec(line ?? '')?.[0] ?? 0) / 1024);
}
/** Peak resident set size of a process so far (VmHWM), in MiB. */
export const peakRssMiB = (pid: number): number => status(pid, 'VmHWM');
/** Resident set size of a process now (VmRSS), in MiB. */
export const rssMiB = (pid: number): number => status(pid, 'VmRSS');
/** CPU time a process has used so far (user + system, all threads), in ms: /proc/<pid>/stat, in clock ticks of 10 ms. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
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
    // A realistic mix: mostly available, some pending, a few sold, some without status.
    await db.query(
      `INSERT INTO pets (name, category_id, status)
       SELECT 'pet-' || i, 1 + i % 50, (ARRAY['available','available','available','pending','sold',NULL])[1 + i % 6]
       FROM generate_series(1, $1) AS i`,
      [rows],
    );
    await db.query('ANALYZE pets');
    await db.query('INSERT INTO api_keys (name, key_hash) VALUES ($1, $2)', ['bench', hashApiKey(key)]);
    // The reference is what a user would write without our pagination guarantee: its
    // inserts do not take the id-order lock (migrations/1763700000004_…).
    if (database === `${name}_reference`) await db.query('DROP TRIGGER IF EXISTS pets_insert_in_id_order ON pets');
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

export const stamp = (): string => new Date().toISOString().replace(/[:.]/g, '-');
