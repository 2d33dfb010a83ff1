// The README's promise: on a machine with Node and nothing else, `npm ci && npm start`
// serves the API on an embedded PostgreSQL. The repository is copied into an empty
// folder, installed and started there exactly as the README says, with DATABASE_URL unset.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, root } from '../process.js';

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
  stderr: () => string;
  readyMs: number;
}

/** Runs the README's start command in the copy; resolves when /readyz answers 200. */
async function start(): Promise<Started> {
  const began = performance.now();
  const child = spawn('npm', ['start'], { cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
  return { child, exited, url, stderr: () => stderr, readyMs: performance.now() - began };
}

const owner = () => JSON.parse(readFileSync(path.join(folder, '.data', 'owner.json'), 'utf8')) as { pid: number; postgresPid: number };

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

describe('a fresh machine, with the README commands', () => {
  let key = '';
  let petId = 0;
  const timings: Record<string, number> = {};

  it('starts, prints a development key once, and serves with it', async () => {
    const first = await start();
    timings.cold = first.readyMs;
    key = /Development API key \(shown once, keep it\): (ask_\S+)/.exec(first.stderr())?.[1] ?? '';
    expect(key).toMatch(/^ask_/);
    expect(first.stderr()).toContain(`curl -H "Authorization: Bearer ${key}" ${first.url}/v1/pets`);
    const created = await fetch(`${first.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Survivor', categoryId: 7, status: 'available' }),
    });
    expect(created.status).toBe(201);
    petId = ((await created.json()) as { id: number }).id;

    // SIGTERM to the service: exit 0 and no PostgreSQL left behind.
    const { pid, postgresPid } = owner();
    process.kill(pid, 'SIGTERM');
    expect(await first.exited).toBe(0);
    expect(alive(postgresPid)).toBe(false);
  });

  it('starts again on the same data, without a new key, and reads the pet back', async () => {
    const again = await start();
    timings.warm = again.readyMs;
    expect(again.stderr()).not.toContain('Development API key');
    const read = await fetch(`${again.url}/v1/pets/${petId}`, { headers: { authorization: `Bearer ${key}` } });
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({ id: petId, name: 'Survivor', categoryId: 7, status: 'available' });

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
    const { pid, postgresPid } = owner();
    process.kill(pid, 'SIGTERM');
    expect(await recovered.exited).toBe(0);
    expect(alive(postgresPid)).toBe(false);
    console.log(`start-to-ready through npm start (includes the TypeScript build): cold ${Math.round(timings.cold ?? 0)} ms, warm ${Math.round(timings.warm ?? 0)} ms, after SIGKILL ${Math.round(timings.recovery ?? 0)} ms`);
  });
});
