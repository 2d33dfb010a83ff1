// The README's promise: on a machine with Node and nothing else, `npm ci && npm start`
// serves the API on an embedded PostgreSQL. The repository is copied into an empty
// folder, installed and started there exactly as the README says, with DATABASE_URL unset.
// Every way of stopping it (SIGTERM to the pid npm start hands a supervisor, SIGTERM to
// node, Ctrl-C's SIGINT to the group) drains HTTP and leaves no process; a start that fails
// leaves nothing running and no key it did not show. A restart compiles nothing when nothing
// changed, compiles what changed before serving it, and never serves a build that failed.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, root } from '../process.js';
import { createWhileStopping, undrained } from '../support/drain.js';

const folder = mkdtempSync(path.join(tmpdir(), 'animal-store-fresh-'));
const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', CI: 'true' };
delete env.DATABASE_URL;
delete env.TEST_DATABASE_URL;
delete env.NODE_OPTIONS;
delete env.VITEST;

interface Started {
  child: ChildProcess;
  exited: Promise<number | null>;
  url: string;
  stdout: () => string;
  stderr: () => string;
  readyMs: number;
}

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

beforeAll(() => {
  // Tracked files plus new ones not yet committed; nothing ignored (no node_modules, .data, dist).
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    if (!existsSync(path.join(root, file))) continue;
    mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
    copyFileSync(path.join(root, file), path.join(folder, file));
  }
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: folder, env, stdio: 'ignore' });
}, 300_000);
afterAll(() => rmSync(folder, { recursive: true, force: true }));

// Each case runs npm start (a TypeScript build, then start-up) on a busy 2-core machine.
describe('a fresh machine, with the README commands', { timeout: 180_000 }, () => {
  let key = '';
  let petId = 0;
  const timings: Record<string, number> = {};

  it('a start that fails (port in use, after the embedded database opened) exits 1 and leaves no PostgreSQL and no key', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    const port = (taken.address() as { port: number }).port;
    try {
      const child = spawn('npm', ['start'], { cwd: folder, env: { ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout?.on('data', (c) => (output += c));
      child.stderr?.on('data', (c) => (output += c));
      const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      expect(code).toBe(1);
      expect(output).toContain('Start-up failed');
      expect(output).toContain('EADDRINUSE');
      expect(output).not.toContain('Development API key');
      // The embedded server it had opened is stopped: no process runs on its data folder,
      // and its lock file is gone with it.
      expect(await gone(() => processesOn(path.join(folder, '.data', 'pg')).length === 0)).toBe(true);
      expect(existsSync(path.join(folder, '.data', 'pg', 'postmaster.pid'))).toBe(false);
    } finally {
      taken.close();
    }
    // The next test's start is the one that makes and shows the key.
  });

  it('starts, prints a development key once, and serves with it', async () => {
    const first = await start();
    timings.cold = first.readyMs;
    // Ready means start-up has finished: the key, stored and printed after listening, is
    // on the terminal by the time /readyz first answers 200 (it used to be able to answer
    // first, which CI saw once under load).
    const keyLine = /Development API key \(shown once, keep it\): (ask_\S+)/;
    key = keyLine.exec(first.stderr())?.[1] ?? '';
    expect(key, `no key line in:\n${first.stderr()}`).toMatch(/^ask_/);
    expect(first.stderr()).toContain(`curl -H "Authorization: Bearer ${key}" ${first.url}/v1/pets`);
    const created = await fetch(`${first.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Survivor', categoryId: 7, status: 'available' }),
    });
    expect(created.status).toBe(201);
    petId = ((await created.json()) as { id: number }).id;

    // docs/running.md: node is npm's own child (the start script execs it: no shell between), so
    // npm's SIGTERM and SIGINT reach it.
    const { pid } = owner();
    expect(parentOf(pid)).toBe(first.child.pid);

    // SIGTERM to node itself (a supervisor that knows the service's pid): npm reports its 0.
    await stopWhileInFlight(first, key, 'sigterm-node', () => process.kill(pid, 'SIGTERM'));
    expect(await first.exited).toBe(0);
  });

  it('starts again on the same data, without a new key or a new compilation, and reads the pet back', async () => {
    const built = compiledAt();
    const again = await start();
    timings.warm = again.readyMs;
    // Nothing changed since the last start: the prestart check found dist/ up to date, and
    // nothing was compiled or written.
    expect(compiledAt()).toBe(built);
    const read = await fetch(`${again.url}/v1/pets/${petId}`, { headers: { authorization: `Bearer ${key}` } });
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({ id: petId, name: 'Survivor', categoryId: 7, status: 'available', tags: [], createdAt: expect.any(String), updatedAt: expect.any(String) });
    // At readiness a key would already be printed (above); checked after a request anyway.
    expect(again.stderr()).not.toContain('Development API key');

    // SIGKILL leaves PostgreSQL running with the folder locked...
    const { pid, postgresPid } = owner();
    process.kill(pid, 'SIGKILL');
    await again.exited;
    expect(alive(postgresPid)).toBe(true);
  });

  it('recovers on the next start after a SIGKILL', async () => {
    const { postgresPid: orphan } = owner();
    const recovered = await start();
    timings.recovery = recovered.readyMs;
    expect(recovered.stderr()).toContain(`stopping the server (pid ${orphan}) left running by a service that is gone`);
    expect(alive(orphan)).toBe(false);
    const read = await fetch(`${recovered.url}/v1/pets/${petId}`, { headers: { authorization: `Bearer ${key}` } });
    expect(read.status).toBe(200);
    // SIGTERM to the pid `npm start` hands a supervisor: npm's.
    await stopWhileInFlight(recovered, key, 'sigterm-npm', () => process.kill(recovered.child.pid as number, 'SIGTERM'));
    // dist/ was compiled by the failing start, the first case: none of these compiles.
    console.log(`start-to-ready through npm start: first (initdb) ${Math.round(timings.cold ?? 0)} ms, again ${Math.round(timings.warm ?? 0)} ms, after SIGKILL ${Math.round(timings.recovery ?? 0)} ms`);
  });

  it('a source change is compiled before the next start serves it; then Ctrl-C (SIGINT to the process group) drains and leaves nothing', async () => {
    // An edit to a compiled input (here the contract's version in generated/openapi.ts) must
    // be what the next start serves, never the dist/ of the start before.
    const source = path.join(folder, 'generated', 'openapi.ts');
    const text = readFileSync(source, 'utf8');
    const version = /"version": "([^"]+)"/.exec(text)?.[1];
    expect(version).toBeDefined();
    writeFileSync(source, text.replace(`"version": "${version}"`, `"version": "${version}-edited"`));
    const started = await start();
    const served = (await (await fetch(`${started.url}/v1/openapi.json`)).json()) as { info: { version: string } };
    expect(served.info.version).toBe(`${version}-edited`);
    await stopWhileInFlight(started, key, 'sigint-group', () => process.kill(-(started.child.pid as number), 'SIGINT'));
  });

  it('a type error stops npm start before anything runs, on every start until it is undone; undoing it serves the last good sources', async () => {
    // A failed `tsc -b` still writes what it compiled into dist/: here a changed version
    // beside a type error. Once both edits are undone, the start must serve the sources as
    // they are (the edited version of the case above), not what the failed build wrote.
    const source = path.join(folder, 'generated', 'openapi.ts');
    const broken = path.join(folder, 'src', 'paths.ts');
    const [good, goodPaths] = [readFileSync(source, 'utf8'), readFileSync(broken, 'utf8')];
    const version = /"version": "([^"]+)"/.exec(good)?.[1] as string;
    writeFileSync(source, good.replace(`"version": "${version}"`, `"version": "${version}-broken"`));
    writeFileSync(broken, `${goodPaths}\nexport const broken: number = 'not a number';\n`);
    for (let attempt = 0; attempt < 2; attempt++) {
      const child = spawn('npm', ['start'], { cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout?.on('data', (c) => (output += c));
      child.stderr?.on('data', (c) => (output += c));
      const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      expect(code, output).not.toBe(0);
      expect(output).toContain('error TS2322');
      expect(output).not.toContain('Server listening');
    }
    writeFileSync(source, good);
    writeFileSync(broken, goodPaths);
    const started = await start();
    const served = (await (await fetch(`${started.url}/v1/openapi.json`)).json()) as { info: { version: string } };
    expect(served.info.version).toBe(version);
    await stopWhileInFlight(started, key, 'after-type-error', () => process.kill(started.child.pid as number, 'SIGTERM'));
  });
});
