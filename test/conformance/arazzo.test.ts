// The Arazzo workflows (openapi/tests/*.arazzo.yaml) run by `redocly respect` against the
// real service: a tool we did not write checks every answer against the contract.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase } from '../helper.js';
import { apikey, root, startServer, type ServerProcess } from '../process.js';

let server: ServerProcess;
let database: { url: string; drop: () => Promise<void> };
let key: string;

beforeAll(async () => {
  database = await createTestDatabase();
  key = (await apikey(['create', 'arazzo'], database.url)).stdout.trim();
  // WEBHOOK_ALLOW_PRIVATE: the webhookEndpoints workflow's endpoint is on 127.0.0.1.
  server = await startServer({ DATABASE_URL: database.url, WEBHOOK_ALLOW_PRIVATE: 'true' });
}, 180_000);
afterAll(async () => {
  expect(await server.stop('SIGTERM')).toBe(0);
  await database.drop();
});

const workflows = readdirSync(path.join(root, 'openapi/tests')).filter((f) => f.endsWith('.arazzo.yaml'));

it.each(workflows)('redocly respect %s passes against the live service', async (file) => {
  const result = await promisify(execFile)(
    path.join(root, 'node_modules/.bin/redocly'),
    ['respect', path.join('openapi/tests', file), '--server', `store=${server.url}/v1`, '--input', `apiKey=${key}`],
    { cwd: root, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' } },
  ).catch((failed: { stdout: string; stderr: string; code: number }) => failed);
  const output = `${result.stdout}\n${result.stderr}`;
  expect(output, output).toMatch(/Workflows: (\d+) passed, \1 total/);
  expect(output).not.toContain(key);
});
