// `npm start` after a type error (scripts/build-when-changed.mjs): every start fails before
// anything runs until the error is undone, and then the last good sources are served, never
// what the failed build wrote. In a copy of the repository whose node_modules is this
// tree's, with the embedded PostgreSQL.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyWithThisTreesModules, newcomerEnv, npmStartIn } from '../support/npm-start.js';

const folder = copyWithThisTreesModules();
const env = newcomerEnv();
const { firstStart, stopWhileInFlight } = npmStartIn(folder, env);
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('npm start after a type error', { timeout: 180_000 }, () => {
  it('a type error stops npm start before anything runs, on every start until it is undone; undoing it serves the last good sources', async () => {
    // The copy's dist/ is the last good build (the tree's, test/support/npm-start.ts).
    // A failed `tsc -b` still writes what it compiled into dist/: here a changed version
    // beside a type error. Once both edits are undone, the start must serve the sources as
    // they are, not what the failed build wrote.
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
      // Nothing ran: not even the embedded PostgreSQL's data folder was made.
      expect(existsSync(path.join(folder, '.data'))).toBe(false);
    }
    writeFileSync(source, good);
    writeFileSync(broken, goodPaths);
    const { started, key } = await firstStart();
    const served = (await (await fetch(`${started.url}/v1/openapi.json`)).json()) as { info: { version: string } };
    expect(served.info.version).toBe(version);
    await stopWhileInFlight(started, key, 'after-type-error', () => process.kill(started.child.pid as number, 'SIGTERM'));
  });
});
