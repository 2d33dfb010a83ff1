// Rate limits, security headers, CORS and load shedding.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildTestApp, createApiKey, createTestDatabase, type TestApp } from '../helper.js';
import { within, WAIT_MS } from '../process.js';
import { REDIS_URL, requires } from '../support/requires.js';

const haveRedis = await requires('redis', 'test/api/protection.test.ts "with REDIS_URL, instances share one budget"');

const opened: TestApp[] = [];
afterEach(async () => {
  for (const t of opened.splice(0)) await t.close();
});
async function app(env: Record<string, string>, url?: string): Promise<TestApp> {
  const t = await buildTestApp({ env, ...(url ? { url } : {}) });
  opened.push(t);
  return t;
}
const list = (t: TestApp, headers: Record<string, string>) => t.api({ method: 'GET', url: '/v1/pets', headers });

describe('rate limits', () => {
  it('per API key: over the budget is 429 with the Error body, Retry-After and RateLimit headers', async () => {
    const t = await app({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' });
    for (let i = 0; i < 3; i++) expect((await list(t, t.auth)).statusCode).toBe(200);
    const refused = await list(t, t.auth);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(refused.json().message).toMatch(/^Rate limit exceeded: at most 3 requests per 60 s/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['ratelimit-limit']).toBe('3');
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    // Another key has its own budget.
    const { key } = await createApiKey(t.pool, 'second');
    // (A new key reaches the instance's cache through NOTIFY, within milliseconds.)
    await within(WAIT_MS, async () => (await t.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })).statusCode === 200);
  });

  it('without a valid key: per client address, with its own (smaller) budget, before authentication', async () => {
    const t = await app({ RATE_LIMIT_MAX: '100', RATE_LIMIT_ANONYMOUS_MAX: '2' });
    expect((await list(t, {})).statusCode).toBe(401);
    expect((await list(t, { authorization: 'Bearer ask_wrong' })).statusCode).toBe(401);
    const refused = await list(t, {});
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'rate_limited', status: 429 });
    // A caller with a key is not held back by anonymous traffic from its address.
    expect((await list(t, t.auth)).statusCode).toBe(200);
  });

  it('the deprecated getPet keeps its deprecation headers on a 429', async () => {
    const t = await app({ RATE_LIMIT_MAX: '1' });
    await t.api({ method: 'GET', url: '/v1/pets/1', headers: t.auth });
    const refused = await t.api({ method: 'GET', url: '/v1/pets/1', headers: t.auth });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers.sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
  });

  it('probes and docs are not limited', async () => {
    const t = await app({ RATE_LIMIT_ANONYMOUS_MAX: '1' });
    for (let i = 0; i < 5; i++) expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  it.skipIf(!haveRedis)('with REDIS_URL, instances share one budget', async () => {
    const database = await createTestDatabase();
    try {
      // A prefix of our own in the shared Redis: every run starts from zero.
      const env = { RATE_LIMIT_MAX: '4', REDIS_URL, REDIS_PREFIX: `test-${randomUUID()}:`, RATE_LIMIT_WINDOW_MS: '60000' };
      const a = await app(env, database.url);
      const b = await app(env, database.url);
      const { key } = await createApiKey(a.pool, 'shared');
      const headers = { authorization: `Bearer ${key}` };
      // Let the new key reach both caches (NOTIFY) without spending from its budget.
      await new Promise((r) => setTimeout(r, 300));
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await list(i % 2 === 0 ? a : b, headers)).statusCode);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    } finally {
      await database.drop();
    }
  });
});

describe('security headers', () => {
  // JSON answers: OWASP's REST set, fixed; the /docs pages: helmet's full set.
  const apiHeaders: [string, (t: TestApp) => Promise<{ headers: Record<string, unknown> }>][] = [
    ['listPets 200', (t) => list(t, t.auth)],
    ['listPets 401', (t) => list(t, {})],
    ['unknown path 404', (t) => t.app.inject({ method: 'GET', url: '/v1/nothing' })],
    ['/healthz', (t) => t.app.inject({ method: 'GET', url: '/healthz' })],
    ['/v1/openapi.json', (t) => t.app.inject({ method: 'GET', url: '/v1/openapi.json' })],
  ];
  it.each(apiHeaders)('%s: nothing may load, frame, sniff or cache it', async (_title, call) => {
    const response = await call(await app({}));
    expect(response.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    expect(response.headers['x-powered-by']).toBeUndefined();
  });

  it('API answers are not stored by caches, except the published contract', async () => {
    const t = await app({});
    expect((await list(t, t.auth)).headers['cache-control']).toBe('no-store');
    expect((await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).headers['cache-control']).toBe('public, max-age=300');
  });

  it('the /docs pages get helmet\'s set, whose CSP lets Swagger UI run', async () => {
    const t = await app({});
    for (const url of ['/docs', '/docs/', '/docs/static/index.html']) {
      const response = await t.app.inject({ method: 'GET', url });
      expect(response.headers['content-security-policy'], url).toContain("default-src 'self'");
      expect(response.headers['content-security-policy'], url).toContain("script-src 'self'");
      expect(response.headers['x-frame-options'], url).toBe('SAMEORIGIN');
      expect(response.headers['x-content-type-options'], url).toBe('nosniff');
      expect(response.headers['cache-control'], url).not.toBe('no-store');
    }
  });
});

describe('CORS', () => {
  // One app with CORS on for the cases that read it (an app costs about a second to build).
  let on: TestApp | undefined;
  const corsOn = async (): Promise<TestApp> => (on ??= await buildTestApp({ env: { CORS_ORIGINS: 'https://app.example,https://admin.example' } }));
  afterAll(async () => on?.close());
  const preflight = (t: TestApp) =>
    t.app.inject({ method: 'OPTIONS', url: '/v1/pets', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' } });

  it('is off by default: no CORS headers, OPTIONS is a method the path does not take (405, Allow)', async () => {
    const t = await app({});
    const response = await preflight(t);
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD, POST');
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('CORS_ORIGINS allows the listed origins only', async () => {
    const t = await corsOn();
    const response = await preflight(t);
    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(String(response.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization');
    const simple = await list(t, { ...t.auth, origin: 'https://admin.example' });
    expect(simple.headers['access-control-allow-origin']).toBe('https://admin.example');
    expect(String(simple.headers['access-control-expose-headers'])).toContain('Location');
    const other = await list(t, { ...t.auth, origin: 'https://evil.example' });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    // An answer that varies by Accept as well keeps both.
    const exported = await t.api({ method: 'GET', url: '/v1/pets:export', headers: { ...t.auth, origin: 'https://admin.example' } });
    expect(exported.headers.vary).toBe('Origin, Accept');
    const refused = await t.api({ method: 'GET', url: '/v1/pets:export', headers: { ...t.auth, origin: 'https://admin.example', accept: 'application/json' } });
    expect([refused.statusCode, refused.headers.vary]).toEqual([406, 'Origin, Accept']);
  });

  it("a browser may use every operation of the contract: its methods, header parameters (If-Match) and answer headers (ETag)", async () => {
    const t = await corsOn();
    const patch = await t.app.inject({ method: 'OPTIONS', url: '/v1/pets/1', headers: { origin: 'https://app.example', 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization,content-type,if-match' } });
    expect(patch.statusCode).toBe(204);
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) expect(String(patch.headers['access-control-allow-methods']).split(/, ?/)).toContain(method);
    for (const header of ['Authorization', 'Content-Type', 'If-Match', 'If-None-Match', 'Idempotency-Key']) expect(String(patch.headers['access-control-allow-headers']).split(/, ?/)).toContain(header);
    const read = await t.api({ method: 'GET', url: '/v1/categories', headers: { ...t.auth, origin: 'https://app.example' } });
    for (const header of ['ETag', 'Location', 'Link', 'WWW-Authenticate', 'RateLimit', 'Retry-After']) expect(String(read.headers['access-control-expose-headers']).split(/, ?/)).toContain(header);
  });

  it('an OPTIONS that is no preflight gets what another method would: 405 with Allow and the Error body, or 404 where no route is', async () => {
    const t = await corsOn();
    for (const headers of [{}, { origin: 'https://app.example' }, { 'access-control-request-method': 'GET' }]) {
      const answer = await t.app.inject({ method: 'OPTIONS', url: '/v1/pets', headers });
      expect(answer.statusCode).toBe(405);
      expect(answer.headers.allow).toBe('GET, HEAD, POST');
      expect(answer.json()).toMatchObject({ code: 'method_not_allowed', status: 405 });
    }
    const bare = await t.app.inject({ method: 'OPTIONS', url: '/v1/nope' });
    expect(bare.statusCode).toBe(404);
    expect(bare.json()).toMatchObject({ code: 'not_found', status: 404 });
  });

  it('the served contract varies by Origin and Host, and /docs/json by Host', async () => {
    const t = await corsOn();
    const served = await t.api({ method: 'GET', url: '/v1/openapi.json', headers: { origin: 'https://app.example' } });
    expect(String(served.headers.vary).split(/, ?/).sort()).toEqual(['Host', 'Origin']);
    const docs = await t.api({ method: 'GET', url: '/docs/json' });
    expect(String(docs.headers.vary).split(/, ?/)).toContain('Host');
  });
});

describe('load shedding', () => {
  it('while the event loop stalls, requests get 503 with the Error body and Retry-After', async () => {
    const t = await app({ MAX_EVENT_LOOP_DELAY_MS: '50' });
    // Stall the loop for 1.5 s (longer than under-pressure's 1 s sampling period), so the
    // sample taken right after it sees the lag.
    const stall = () => {
      const until = Date.now() + 1500;
      while (Date.now() < until) {
        /* busy */
      }
    };
    // Right after start-up, a stall counts as start-up: a new instance does not shed its
    // first requests (pressure counts two sampling periods after ready).
    stall();
    await new Promise((r) => setTimeout(r, 20));
    expect((await list(t, t.auth)).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 1000));
    stall();
    await new Promise((r) => setTimeout(r, 20));
    const shedding = await list(t, t.auth);
    expect(shedding.statusCode).toBe(503);
    expect(shedding.headers['retry-after']).toBe('1');
    expect(shedding.json()).toEqual({ code: 'unavailable', message: 'Service temporarily overloaded, retry later', status: 503 });
    // Meanwhile the probes still answer: a busy instance is neither dead nor unready.
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    expect((await list(t, t.auth)).statusCode).toBe(503);
  });
});
