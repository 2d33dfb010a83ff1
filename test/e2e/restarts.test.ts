// `npm start` again and again on one data folder (the embedded PostgreSQL): a start that
// fails leaves nothing running and no key it did not show; a restart with nothing changed
// compiles nothing and prints no new key; after a SIGKILL, the next start stops the
// PostgreSQL left running and serves; SIGTERM to the pid `npm start` hands a supervisor
// drains. In a copy of the repository whose node_modules is this tree's (the install is
// test/e2e/fresh-machine.test.ts's).
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { alive } from '../process.js';
import { copyWithThisTreesModules, newcomerEnv, npmStartIn } from '../support/npm-start.js';

const folder = copyWithThisTreesModules();
const env = newcomerEnv();
const { start, firstStart, processesOn, gone, stopWhileInFlight, owner, compiledAt } = npmStartIn(folder, env);
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('npm start on one data folder, again and again', { timeout: 180_000 }, () => {
  let key = '';
  let petId = 0;
  /** The pet as createPet answered it, its times included. */
  let createdPet: Record<string, unknown> = {};
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
  });

  it('the first start after it makes and shows the key, and serves', async () => {
    const { started: first, key: shown } = await firstStart();
    key = shown;
    timings.cold = first.readyMs;
    const created = await fetch(`${first.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Survivor', categoryId: 7, status: 'available' }),
    });
    expect(created.status).toBe(201);
    createdPet = (await created.json()) as Record<string, unknown>;
    petId = createdPet.id as number;
    expect(createdPet).toEqual({ id: petId, name: 'Survivor', categoryId: 7, status: 'available', createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/), updatedAt: createdPet.createdAt });
    first.child.kill('SIGTERM');
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
    // As created, its times as createPet answered them: a restart changes nothing.
    expect(await read.json()).toEqual({ id: petId, name: 'Survivor', categoryId: 7, status: 'available', createdAt: createdPet.createdAt, updatedAt: createdPet.updatedAt });
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
    // dist/ is the tree's build (test/support/npm-start.ts): none of these starts compiles.
    console.log(`start-to-ready through npm start: first (initdb) ${Math.round(timings.cold ?? 0)} ms, again ${Math.round(timings.warm ?? 0)} ms, after SIGKILL ${Math.round(timings.recovery ?? 0)} ms`);
  });
});
