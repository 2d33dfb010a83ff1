// `npm start` compiles before it serves (scripts/build-when-changed.mjs): a changed source is
// compiled before the next start serves it (a type error: test/e2e/type-error.test.ts).
// In a copy of the repository whose node_modules is this tree's (what is installed is not
// what these cases are about: test/e2e/fresh-machine.test.ts runs `npm ci`), with the
// embedded PostgreSQL; the stops are Ctrl-C (SIGINT to the process group) and SIGTERM to npm.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyWithThisTreesModules, newcomerEnv, npmStartIn } from '../support/npm-start.js';

const folder = copyWithThisTreesModules();
const env = newcomerEnv();
const { start, firstStart, stopWhileInFlight } = npmStartIn(folder, env);
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('npm start after a change to the sources', { timeout: 180_000 }, () => {
  it('a source change is compiled before the next start serves it; then Ctrl-C (SIGINT to the process group) drains and leaves nothing', async () => {
    // A first start (on the tree's build) prints the development key; SIGTERM to npm stops it.
    const { started: first, key } = await firstStart();
    await stopWhileInFlight(first, key, 'sigterm-npm', () => process.kill(first.child.pid as number, 'SIGTERM'));
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
});
