// The README's promise: on a machine with Node and nothing else, `npm ci && npm start`
// serves the API on an embedded PostgreSQL. The repository is copied into an empty
// folder, installed and started there exactly as the README says, with DATABASE_URL unset:
// it prints a development key and serves with it, and SIGTERM to node drains HTTP and
// leaves no process. Restarts, a failed start and recovery after SIGKILL are
// test/e2e/restarts.test.ts's; a change to the sources, rebuild.test.ts's and type-error.test.ts's.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyOfTheTree, newcomerEnv, npmStartIn } from '../support/npm-start.js';

const folder = copyOfTheTree();
// No locale set, as in many containers: initdb alone would make a C cluster, which knows
// ASCII letters only; the embedded cluster is made with the builtin C.UTF-8 (src/db/embedded.ts).
const env = newcomerEnv();
for (const name of ['LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'LC_COLLATE']) delete env[name];
const { start, stopWhileInFlight, owner, parentOf } = npmStartIn(folder, env);

beforeAll(() => {
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: folder, env, stdio: 'ignore' });
}, 300_000);
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('a fresh machine, with the README commands', { timeout: 180_000 }, () => {
  it('starts, prints a development key once, and serves with it', async () => {
    const first = await start();
    // Ready means start-up has finished: the key, stored and printed after listening, is
    // on the terminal by the time /readyz first answers 200 (it used to be able to answer
    // first, which CI saw once under load).
    const keyLine = /Development API key \(shown once, keep it\): (ask_\S+)/;
    const key = keyLine.exec(first.stderr())?.[1] ?? '';
    expect(key, `no key line in:\n${first.stderr()}`).toMatch(/^ask_/);
    expect(first.stderr()).toContain(`curl -H "Authorization: Bearer ${key}" ${first.url}/v1/pets`);
    const created = await fetch(`${first.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Survivor', categoryId: 7, status: 'available' }),
    });
    expect(created.status).toBe(201);
    // A name in another script is found by q, lowercased.
    const murka = await fetch(`${first.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Мурка', categoryId: 7 }),
    });
    expect(murka.status).toBe(201);
    const found = await fetch(`${first.url}/v1/pets?q=${encodeURIComponent('мурка')}`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await found.json()) as { name: string }[]).map((p) => p.name)).toEqual(['Мурка']);

    // docs/running.md: node is npm's own child (the start script execs it: no shell between), so
    // npm's SIGTERM and SIGINT reach it.
    const { pid } = owner();
    expect(parentOf(pid)).toBe(first.child.pid);

    // SIGTERM to node itself (a supervisor that knows the service's pid): npm reports its 0.
    await stopWhileInFlight(first, key, 'sigterm-node', () => process.kill(pid, 'SIGTERM'));
    expect(await first.exited).toBe(0);
  });
});
