// Settings from a `.env` file (ENV_FILE names one; unset, `.env` in the project root):
// `npm start` and the CLI read it before the settings are checked, and a variable the
// environment already has wins over the file's.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTs } from './process.js';

const unreachable = 'postgres://postgres@127.0.0.1:1/unused';

describe('a .env file', () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'env-file-')), 'settings.env');
  writeFileSync(file, `DATABASE_URL=${unreachable}\nPORT=not-a-port\n`);

  it('is read before the settings are checked: a wrong setting in it stops the start, naming it', async () => {
    const result = await runTs('src/server.ts', [], { ENV_FILE: file });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([`Settings read from ${file} (the environment's own win over it).`, 'Invalid configuration: PORT must be an integer from 0 to 65535']);
  });

  it("gives way to the environment's own variables", async () => {
    const result = await runTs('src/server.ts', [], { ENV_FILE: file, PORT: '0', DB_CONNECT_TIMEOUT_MS: '500' });
    expect(result.code).toBe(1);
    // Past the settings: the start fails at the database the file named.
    expect(result.stderr).not.toContain('Invalid configuration');
    expect(result.stderr).toContain('Start-up failed');
  });

  it('that cannot be read is named', async () => {
    const result = await runTs('src/server.ts', [], { ENV_FILE: `${file}.missing` });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`ENV_FILE ${file}.missing cannot be read (ENOENT)`);
  });
});
