// Behaviour outside the operations: unknown routes, request ids, health probes, and a
// database that cannot be reached.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { closePool, createPool } from '../../src/db/pool.js';
import { contractViolations } from '../contract.js';
import { buildTestApp, createTestDatabase, testConfig, type TestApp } from '../helper.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t.close());

describe('routes the contract does not have', () => {
  it.each([
    ['an unknown path', { method: 'GET', url: '/v1/animals' }],
    ['a path outside /v1', { method: 'GET', url: '/pets' }],
    ['an unknown path under an order', { method: 'POST', url: '/v1/store/orders/1/refund' }],
  ])('%s is 404 with the Error body', async (_title, request) => {
    const response = await t.api({ ...request, headers: t.auth });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'not_found', status: 404 });
  });

  // 404 up to 1.1.0; RFC 9110 §15.5.6 says 405 with the methods the path takes.
  it.each([
    ['an undeclared method', { method: 'PUT', url: '/v1/pets/1', allow: 'DELETE, GET, HEAD, PATCH' }],
    ['PUT on the collection', { method: 'PUT', url: '/v1/pets', allow: 'GET, HEAD, POST' }],
    ['OPTIONS without CORS', { method: 'OPTIONS', url: '/v1/store/orders', allow: 'GET, HEAD, POST' }],
    ['a trailing slash on the collection (the path of one pet, with an empty id)', { method: 'POST', url: '/v1/pets/', allow: 'DELETE, GET, HEAD, PATCH' }],
    ['GET on an action', { method: 'GET', url: '/v1/store/orders/1/cancel', allow: 'POST' }],
    ['DELETE on an order (orders are never deleted)', { method: 'DELETE', url: '/v1/store/orders/1', allow: 'GET, HEAD' }],
    ['POST on the contract', { method: 'POST', url: '/v1/openapi.json', allow: 'GET, HEAD' }],
    ['DELETE on the root', { method: 'DELETE', url: '/', allow: 'GET, HEAD' }],
  ])('%s is 405 with Allow and the Error body', async (_title, { allow, ...request }) => {
    const response = await t.api({ ...request, headers: t.auth });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe(allow);
    expect(response.json()).toEqual({ code: 'method_not_allowed', message: `${request.method} is not allowed on ${request.url}; it allows ${allow}`, status: 405 });
  });
});

describe('GET /', () => {
  it('says where the documentation and the contract are, in the body and as RFC 8631 links', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ name: 'Animal Store API', version: expect.stringMatching(/^1\.\d+\.\d+$/), api: '/v1', docs: '/docs', redoc: '/docs/redoc', openapiJson: '/v1/openapi.json', openapiYaml: '/v1/openapi.yaml' });
    expect(response.headers.link).toBe('</docs>; rel="service-doc", </docs/redoc>; rel="service-doc", </v1/openapi.json>; rel="service-desc"; type="application/json", </v1/openapi.yaml>; rel="service-desc"; type="application/yaml"');
    for (const target of ['/docs', '/docs/redoc', '/v1/openapi.json', '/v1/openapi.yaml']) expect((await t.app.inject({ method: 'GET', url: target })).statusCode).toBe(200);
  });
});

describe('request ids', () => {
  it('generates one and echoes it', async () => {
    const response = await t.api({ method: 'GET', url: '/v1/pets', headers: t.auth });
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
  it('keeps a well-formed one from the client, on errors too', async () => {
    const response = await t.api({ method: 'GET', url: '/v1/pets?limit=0', headers: { ...t.auth, 'x-request-id': 'client-123.abc' } });
    expect(response.statusCode).toBe(400);
    expect(response.headers['x-request-id']).toBe('client-123.abc');
  });
  it('replaces one that could forge log lines', async () => {
    const response = await t.api({ method: 'GET', url: '/v1/pets', headers: { ...t.auth, 'x-request-id': 'x'.repeat(200) } });
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('health probes', () => {
  it('/healthz and /readyz answer without a key', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
  });

  it('/readyz is 503 until start-up has finished (src/server.ts: the development key)', async () => {
    let startedUp = false;
    const app = await buildApp({ config: testConfig(t.url), pool: t.pool, startedUp: () => startedUp });
    try {
      const starting = await app.inject({ method: 'GET', url: '/readyz' });
      expect(starting.statusCode).toBe(503);
      expect(starting.headers['retry-after']).toBe('1');
      expect(starting.json()).toEqual({ code: 'unavailable', message: 'The service is still starting', status: 503 });
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      startedUp = true;
      const started = await app.inject({ method: 'GET', url: '/readyz' });
      expect(started.statusCode).toBe(200);
      expect(started.json()).toEqual({ status: 'ready' });
    } finally {
      await app.close();
    }
  });
});

describe('with the database unreachable', () => {
  it('a database that accepts connections but never answers: 503 after the connect timeout, not a hang', async () => {
    // A black hole on loopback: TCP connects, PostgreSQL never speaks.
    const { createServer } = await import('node:net');
    const sockets: import('node:net').Socket[] = [];
    const hole = createServer((socket) => void sockets.push(socket)).listen(0, '127.0.0.1');
    await new Promise((r) => hole.once('listening', r));
    const url = `postgres://postgres@127.0.0.1:${(hole.address() as { port: number }).port}/none`;
    const pool = createPool({ DATABASE_URL: url, DB_POOL_MAX: 2, DB_CONNECT_TIMEOUT_MS: 1000, DB_STATEMENT_TIMEOUT_MS: 1000 });
    const app = await buildApp({ config: testConfig(url), pool });
    try {
      const started = performance.now();
      const response = await app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: 'Bearer ask_any' } });
      const ms = performance.now() - started;
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({ code: 'unavailable', status: 503 });
      // It waited for the connect timeout (1 s), and no longer than the test's limit.
      expect(ms).toBeGreaterThan(900);
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    } finally {
      await app.close();
      await pool.end();
      for (const socket of sockets) socket.destroy();
      hole.close();
    }
  }, 180_000);

  it('answers 503 with Retry-After, and /readyz is not ready', async () => {
    // Port 1 on loopback: connections are refused at once, like a stopped server.
    const url = 'postgres://postgres@127.0.0.1:1/none';
    const pool = createPool({ DATABASE_URL: url, DB_POOL_MAX: 2, DB_CONNECT_TIMEOUT_MS: 1000, DB_STATEMENT_TIMEOUT_MS: 1000 });
    const app = await buildApp({ config: testConfig(url), pool });
    try {
      for (const request of [
        { method: 'GET', url: '/v1/pets' },
        { method: 'POST', url: '/v1/pets', payload: { name: 'Rex', categoryId: 1 } },
        { method: 'GET', url: '/v1/pets/1' },
      ] as const) {
        const response = await app.inject({ ...request, headers: { authorization: 'Bearer ask_any' } });
        expect(contractViolations(request.method, request.url, response)).toEqual([]);
        expect(response.statusCode).toBe(503);
        expect(response.headers['retry-after']).toBe('1');
        expect(response.json()).toEqual({ code: 'unavailable', message: 'Service temporarily unavailable, retry later', status: 503 });
      }
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({ code: 'unavailable', status: 503 });
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await app.close();
      await pool.end();
    }
  });
});

describe('closing the pools', () => {
  it('closePool resolves once every connection of the pool has ended, so stopping the database next costs none of them (no connection reported lost)', async () => {
    const database = await createTestDatabase();
    const url = database.url;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const lost: string[] = [];
    try {
      for (let round = 0; round < 5; round++) {
        const pool = createPool({ DATABASE_URL: url, DB_POOL_MAX: 4, DB_CONNECT_TIMEOUT_MS: 10_000, DB_STATEMENT_TIMEOUT_MS: 10_000 }, { warn: (_fields, message) => lost.push(message) });
        const pids = await Promise.all(Array.from({ length: 4 }, async () => (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.05)')).rows[0]?.pid));
        await closePool(pool);
        // What stopping the database does to the connections still open: terminate them.
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ANY($1::int[])', [pids]);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(lost).toEqual([]);
    } finally {
      await admin.end();
      await database.drop();
    }
  });
});
