// `npm run pets -- import FILE` and `npm run pets -- export`, run as operators run them
// (the compiled command, a child process) against a service on a socket, with a key in the
// environment: the summary and exit code of an import, its progress on standard error, and
// an export on standard output.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runTs } from '../process.js';
import { listen, type ListeningApp } from '../support/wire.js';

let w: ListeningApp;
let dir: string;
beforeAll(async () => {
  w = await listen({ env: { RATE_LIMIT_MAX: '100000', IMPORT_POLL_MS: '100' } });
  dir = await mkdtemp(path.join(tmpdir(), 'pets-cli-'));
});
afterAll(async () => {
  await w.close();
  await rm(dir, { recursive: true, force: true });
});

const pets = (args: string[], key: string | undefined = w.key) => runTs('src/cli/pets.ts', args, { ANIMAL_STORE_URL: `${w.origin}/v1`, ANIMAL_STORE_API_KEY: key });

it('import: a progress line, a summary naming each refused row, exit 1 when rows were refused and 0 when none were', async () => {
  const file = path.join(dir, 'supplier.csv');
  await writeFile(file, 'name,categoryId,status\r\nCli Rex,301,available\r\nCli Bad,x,\r\nCli Tom,301,\r\n');
  const refused = await pets(['import', file, '--error-policy', 'skip']);
  expect(refused.code, refused.stderr).toBe(1);
  expect(refused.stderr).toMatch(/importing \|.*\| 100% \| 3\/3 rows/);
  expect(refused.stderr).toMatch(/^Import \d+ succeeded in \d+\.\d s: 3 rows read, 2 imported, 1 refused\.$/m);
  expect(refused.stderr).toContain("  line 3, categoryId: must be an integer in plain decimal digits (the category's id)");

  const ndjson = path.join(dir, 'more.ndjson');
  await writeFile(ndjson, '{"name":"Cli Kiwi","categoryId":301}\n');
  const clean = await pets(['import', ndjson]);
  expect(clean.code, clean.stderr).toBe(0);
  expect(clean.stderr).toMatch(/^Import \d+ succeeded in \d+\.\d s: 1 rows read, 1 imported, 0 refused\.$/m);
});

it('export: the export on standard output, as the filters and --format say', async () => {
  const out = await pets(['export', '--format', 'ndjson', '--category-id', '301']);
  expect(out.code, out.stderr).toBe(0);
  expect(out.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { name: string }).name)).toEqual(['Cli Rex', 'Cli Tom', 'Cli Kiwi']);
});

it('without a key, or with a bad flag: exit 2 and what to do', async () => {
  const noKey = await pets(['export'], '');
  expect(noKey.code).toBe(2);
  expect(noKey.stderr).toContain('ANIMAL_STORE_API_KEY is not set');
  const badFlag = await pets(['import', 'x.csv', '--error-policy', 'maybe']);
  expect(badFlag.code).toBe(2);
  expect(badFlag.stderr).toContain('--error-policy maybe: give stop or skip');
});
