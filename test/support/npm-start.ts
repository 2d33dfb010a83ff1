// `npm start` in a copy of the repository, as the README runs it: a copy of the tracked and
// new files in an empty folder (nothing ignored: no node_modules, .data or dist), the
// service started and stopped there, and what a stop leaves behind.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { alive, root } from '../process.js';
import { createWhileStopping, undrained } from './drain.js';

/**
 * A new folder holding the repository's tracked and new files: in memory (/dev/shm) where
 * the machine has it, since `npm ci` writes some 860 packages there (a quarter faster than
 * on this machine's disk), else in the temporary folder.
 */
export function copyOfTheTree(): string {
  const parent = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const folder = mkdtempSync(path.join(parent, 'animal-store-fresh-'));
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    if (!existsSync(path.join(root, file))) continue;
    mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
    copyFileSync(path.join(root, file), path.join(folder, file));
  }
  return folder;
}

/**
 * A copy of the tree whose node_modules is this tree's (a link), and whose dist/ is this
 * tree's build (made by test/setup/database.ts, with its fingerprint of the sources): for
 * what does not depend on the install or on a first compilation, which
 * test/e2e/fresh-machine.test.ts makes with `npm ci` and `npm start` from nothing. The copy's
 * first start compiles nothing when the sources are those the build was made from; the
 * changes these cases make are compiled as on any machine (scripts/build-when-changed.mjs).
 */
export function copyWithThisTreesModules(): string {
  const folder = copyOfTheTree();
  symlinkSync(path.join(root, 'node_modules'), path.join(folder, 'node_modules'), 'dir');
  // The compiled sources and the fingerprint that says which sources they are; not tsc's
  // build info (its times, within the clock's step of the cases' edits, could make `tsc -b`
  // call a changed copy up to date) nor other tools' files (test/browser/redoc.test.ts rewrites one).
  for (const entry of ['src', 'generated', 'build-inputs.sha256']) cpSync(path.join(root, 'dist', entry), path.join(folder, 'dist', entry), { recursive: true });
  return folder;
}

/** The environment of a newcomer's terminal: no database, CI=true, nothing of vitest's. */
export function newcomerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', CI: 'true' };
  delete env.DATABASE_URL;
  delete env.TEST_DATABASE_URL;
  delete env.NODE_OPTIONS;
  delete env.VITEST;
  delete env.MAX_EVENT_LOOP_DELAY_MS;
  return env;
}

export interface Started {
  child: ChildProcess;
  exited: Promise<number | null>;
  url: string;
  stdout: () => string;
  stderr: () => string;
  readyMs: number;
}

/** `npm start` and what to look at, in `folder`. */
export function npmStartIn(folder: string, env: NodeJS.ProcessEnv) {
  /** Runs the README's start command in the copy; resolves when /readyz answers 200. */
  async function start(): Promise<Started> {
    const began = performance.now();
    // Its own process group, as a terminal gives it: Ctrl-C is SIGINT to that group.
    const child = spawn('npm', ['start'], { cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c) => (stdout += c));
    child.stderr?.on('data', (c) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let url: string | undefined;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}:\n${stdout}\n${stderr}`);
      url ??= /Server listening at (http:\/\/[\d.:]+)/.exec(stdout)?.[1];
      if (url && (await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false))) break;
      if (performance.now() - began > 120_000) throw new Error(`not ready after 120 s:\n${stdout}\n${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // What the service wrote before it answered ready is in the pipe by now, but the turn of
    // the event loop that read the answer may not have read the pipe yet: the next one does.
    for (let turn = 0; turn < 2; turn++) await new Promise((r) => setImmediate(r));
    return { child, exited, url, stdout: () => stdout, stderr: () => stderr, readyMs: performance.now() - began };
  }

  /** Pids of the processes whose command line names `dir` (PostgreSQL's run with `-D dir`). */
  function processesOn(dir: string): number[] {
    return readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(dir);
        } catch {
          return false; // gone meanwhile
        }
      })
      .map(Number);
  }

  /** A process group with no process left in it. */
  const groupGone = (pgid: number): boolean => {
    try {
      process.kill(-pgid, 0);
      return false;
    } catch {
      return true;
    }
  };

  async function gone(check: () => boolean, ms = 30_000): Promise<boolean> {
    const deadline = performance.now() + ms;
    while (!check()) {
      if (performance.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 50));
    }
    return true;
  }

  /**
   * Stops the service with `stop` while creates are being sent (test/support/drain.ts), and
   * checks that HTTP drained: every create the service saw was answered 201 (the others were
   * refused or reset unseen), and afterwards npm, node, the embedded PostgreSQL and everything
   * in npm's process group are gone.
   */
  async function stopWhileInFlight(started: Started, key: string, tag: string, stop: () => void): Promise<void> {
    const { pid, postgresPid } = owner();
    // What the failed-start case's check would see of a running server.
    expect(processesOn(path.join(folder, '.data', 'pg'))).toContain(postgresPid);
    const outcomes = await createWhileStopping({ url: started.url, key, workers: 4, tag, before: 8, stop });
    // npm (or node, for a supervisor that signals node) reports the clean stop as 0.
    expect(await started.exited).toBe(0);
    expect(undrained(outcomes, started.stdout())).toEqual([]);
    expect(outcomes.some((o) => o.status === 201)).toBe(true);
    expect(await gone(() => !alive(pid))).toBe(true);
    expect(await gone(() => !alive(postgresPid))).toBe(true);
    expect(await gone(() => groupGone(started.child.pid as number))).toBe(true);
    expect(processesOn(path.join(folder, '.data', 'pg'))).toEqual([]);
    expect(existsSync(path.join(folder, '.data', 'pg', 'postmaster.pid'))).toBe(false);
  }

  const owner = () => JSON.parse(readFileSync(path.join(folder, '.data', 'owner.json'), 'utf8')) as { pid: number; postgresPid: number };
  /** The parent pid of a process (/proc/<pid>/stat: pid, (comm), state, ppid, ...). */
  const parentOf = (pid: number): number => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
  /** When the compiled server was last written. */
  const compiledAt = (): number => statSync(path.join(folder, 'dist', 'src', 'server.js')).mtimeMs;

  /** The first start on a new data folder: it prints the development key, read here. */
  async function firstStart(): Promise<{ started: Started; key: string }> {
    const started = await start();
    const key = /Development API key \(shown once, keep it\): (ask_\S+)/.exec(started.stderr())?.[1] ?? '';
    expect(key, `no key line in:\n${started.stderr()}`).toMatch(/^ask_/);
    return { started, key };
  }

  return { start, firstStart, processesOn, gone, groupGone, stopWhileInFlight, owner, parentOf, compiledAt };
}
