// The service on its embedded PostgreSQL (no DATABASE_URL): who owns the data folder,
// and what a terminal's Ctrl-C does.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { alive, runTs, startServer, within, WAIT_MS } from '../process.js';

// A data folder per case: a case that fails cannot leave the next one a folder in use.
const folders: string[] = [];
const newDataDir = (): string => {
  folders.push(mkdtempSync(path.join(tmpdir(), 'animal-store-embedded-')));
  return folders.at(-1) as string;
};
afterAll(() => folders.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const owner = (dataDir: string) => JSON.parse(readFileSync(path.join(dataDir, 'owner.json'), 'utf8')) as { pid: number; postgresPid: number };

describe('embedded PostgreSQL', () => {
  it('refuses a second service on a folder a live service owns, with a clear message and exit 1', async () => {
    const dataDir = newDataDir();
    const first = await startServer({ DATA_DIR: dataDir });
    try {
      const second = await runTs('src/server.ts', [], { DATA_DIR: dataDir, PORT: '0' });
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`The embedded PostgreSQL in ${dataDir} is in use by another running service (pid ${owner(dataDir).pid})`);
      // The first one is unharmed: ready, once its probe's query (750 ms at most, which a
      // machine busy with the second start can pass) has answered.
      await within(WAIT_MS, async () => (await fetch(`${first.url}/readyz`)).status === 200);
    } finally {
      expect(await first.stop('SIGTERM')).toBe(0);
    }
  });

  it('runs PostgreSQL in its own process group, so Ctrl-C reaches the service only, which stops it last', async () => {
    const dataDir = newDataDir();
    const server = await startServer({ DATA_DIR: dataDir });
    const { postgresPid } = owner(dataDir);
    const group = (pid: number) => execFileSync('ps', ['-o', 'pgid=', '-p', String(pid)], { encoding: 'utf8' }).trim();
    expect(group(postgresPid)).not.toBe(group(server.child.pid as number));
    // Ctrl-C in a terminal: SIGINT to the foreground process group (here, the service's).
    process.kill(server.child.pid as number, 'SIGINT');
    expect(await server.exited, server.output()).toBe(0);
    expect(alive(postgresPid)).toBe(false);
    expect(server.output()).not.toMatch(/terminating connection due to administrator command/);
  });
});
