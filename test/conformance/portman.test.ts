// The Postman collection Portman generates from openapi/v1.yaml (portman/), run by newman
// against the real service on a fresh database: every request is built from the contract's
// examples, and every answer must pass Portman's contract tests (the status, the content
// type, the JSON schema of the body, the required headers). Tools we did not write judge the
// contract and the service together: a request they cannot build, or an answer that does not
// match, fails here.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { operationTable } from '../../generated/operations.js';
import { findOperation } from '../contract.js';
import { createTestDatabase } from '../helper.js';
import { apikey, root, startServer, type ServerProcess } from '../process.js';

/** What newman's JSON reporter writes (the parts read here). */
interface NewmanReport {
  run: {
    stats: Record<'requests' | 'assertions' | 'prerequestScripts' | 'testScripts', { total: number; failed: number }>;
    failures: { error: { message: string }; source?: { name?: string } }[];
    executions: {
      /** The item's execution: newman's JSON reporter repeats it for each request its scripts send. */
      id: string;
      item: { name: string };
      request: { method: string; url: { path: string[] } };
      response?: { code: number };
      assertions?: { assertion: string; error?: { message: string } }[];
    }[];
  };
}

let server: ServerProcess;
let database: { url: string; drop: () => Promise<void> };
let key: string;
let work: string;

beforeAll(async () => {
  database = await createTestDatabase();
  key = (await apikey(['create', 'portman'], database.url)).stdout.trim();
  // WEBHOOK_ALLOW_PRIVATE: the collection's webhook endpoints are on 127.0.0.1 (portman/portman-config.yaml).
  server = await startServer({ DATABASE_URL: database.url, WEBHOOK_ALLOW_PRIVATE: 'true' });
  // Portman writes its working files under ./tmp of the folder it runs in: a folder of this test's own.
  work = mkdtempSync(path.join(tmpdir(), 'portman-'));
}, 180_000);
afterAll(async () => {
  expect(await server.stop('SIGTERM')).toBe(0);
  await database.drop();
  rmSync(work, { recursive: true, force: true });
});

const bin = (name: string) => path.join(root, 'node_modules/.bin', name);
type Ran = { stdout: string; stderr: string; code?: number };
const run = (command: string, args: string[]) =>
  promisify(execFile)(command, args, { cwd: work, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' }, maxBuffer: 64 * 1024 * 1024 })
    .then((done): Ran => ({ ...done, code: 0 }))
    .catch((failed: Ran) => failed);

it('newman runs the collection Portman generates from the contract: every operation, every contract test passing', async () => {
  const collection = path.join(work, 'collection.json');
  const generated = await run(bin('portman'), [
    '--local', path.join(root, 'openapi/v1.yaml'),
    '--portmanConfigFile', path.join(root, 'portman/portman-config.yaml'),
    '--postmanConfigFile', path.join(root, 'portman/postman-config.json'),
    '--baseUrl', `${server.url}/v1`,
    '--output', collection,
  ]);
  expect(generated.code, `${generated.stdout}\n${generated.stderr}`).toBe(0);

  // The key reaches newman in an environment file, not on its command line.
  const environment = path.join(work, 'environment.json');
  writeFileSync(environment, JSON.stringify({ name: 'conformance', values: [{ key: 'bearerToken', value: key, type: 'secret', enabled: true }] }), { mode: 0o600 });
  const report = path.join(work, 'newman.json');
  const ran = await run(bin('newman'), ['run', collection, '--environment', environment, '--reporters', 'cli,json', '--reporter-json-export', report, '--color', 'off', '--disable-unicode', '--timeout-request', '30000']);
  const output = `${ran.stdout}\n${ran.stderr}`;
  expect(output).not.toContain(key);
  expect(existsSync(report), output).toBe(true);

  const { run: summary } = JSON.parse(readFileSync(report, 'utf8')) as NewmanReport;
  expect(summary.failures.map((f) => `${f.source?.name ?? ''}: ${f.error.message}`), output).toEqual([]);
  expect(summary.stats.prerequestScripts.failed, output).toBe(0);
  expect(ran.code, output).toBe(0);

  // Each operation of the contract was requested once (the collection has one request per
  // operation), answered with its first success status, and judged by several assertions.
  const executions = [...new Map(summary.executions.map((e) => [e.id, e])).values()];
  const requested = executions.map((e) => {
    const operation = findOperation(e.request.method, `/${e.request.url.path.join('/')}`);
    const failed = (e.assertions ?? []).filter((a) => a.error).map((a) => `${a.assertion}: ${a.error?.message}`);
    return { operationId: operation?.operationId ?? `${e.request.method} /${e.request.url.path.join('/')}`, status: e.response?.code, assertions: e.assertions?.length ?? 0, failed };
  });
  expect(requested.map((r) => r.operationId).sort()).toEqual(Object.keys(operationTable).sort());
  for (const r of requested) {
    const expected = Number(Object.keys(operationTable[r.operationId as keyof typeof operationTable].responses).find((status) => status.startsWith('2')));
    expect({ ...r, status: r.status }, output).toEqual({ ...r, status: expected, failed: [] });
    expect(r.assertions, `${r.operationId}: its contract tests`).toBeGreaterThanOrEqual(4);
  }
}, 300_000);
