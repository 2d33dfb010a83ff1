// Rate limits apply to what the router matched, whatever the spelling of the URL: once a
// budget is spent, every spelling that reaches a /v1 route is refused with 429 and the
// RateLimit headers, while what is not limited on purpose stays served. To extend: add a row
// with the spelling (`{port}` is the server's port), or to the table of what is not limited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectErrorAnswer, listen, type ListeningApp, type RawAnswer } from '../support/wire.js';

const spellings: [string, { target: string }][] = [
  ['the plain path', { target: '/v1/pets' }],
  ['"v" percent-encoded', { target: '/%761/pets' }],
  ['"1" percent-encoded, getPet', { target: '/v%31/pets/1' }],
  ['both encoded, listOrders', { target: '/%76%31/store/orders' }],
  ['lower-case hex in an escape', { target: '/%76%31/pets' }],
  ['absolute form', { target: 'http://127.0.0.1:{port}/v1/pets' }],
  ['absolute form, encoded', { target: 'http://127.0.0.1:{port}/%761/pets/1' }],
  ['the published contract, encoded', { target: '/%761/openapi.json' }],
  ['the published YAML, absolute form', { target: 'http://127.0.0.1:{port}/v1/openapi.yaml' }],
];

// What spends from no budget, on purpose (docs/security.md): none of it touches the database
// per request except /readyz, which has a cost bound of its own. `want`: its status.
const unlimited: [string, { target: string; want: number }][] = [
  ['/healthz', { target: '/healthz', want: 200 }],
  ['/readyz', { target: '/readyz', want: 200 }],
  ['/docs/', { target: '/docs/', want: 200 }],
  ['/metrics', { target: '/metrics', want: 200 }],
  ['an unmatched path (404)', { target: '/nope', want: 404 }],
  ['an unmatched path under /v1 (404)', { target: '/v1/nope', want: 404 }],
];

function expectLimited(answer: RawAnswer, limit: number): void {
  expectErrorAnswer(answer, 429);
  expect(answer.headers['ratelimit-limit']).toBe(String(limit));
  expect(answer.headers['ratelimit-remaining']).toBe('0');
  expect(Number(answer.headers['ratelimit-reset'])).toBeGreaterThan(0);
  expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
}

const budgets = [
  ['with a key', { max: 3, authorized: true }],
  ['without a key', { max: 2, authorized: false }],
] as const;

describe.each(budgets)('%s, once the budget is spent', (_title, { max, authorized }) => {
  let t: ListeningApp;
  let headers: Record<string, string>;
  beforeAll(async () => {
    t = await listen({ env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_ANONYMOUS_MAX: '2', RATE_LIMIT_WINDOW_MS: '600000', METRICS: 'open' } });
    headers = authorized ? t.auth : {};
    for (let i = 0; i < max; i++) {
      const answer = await call(t.port, { method: 'GET', target: '/v1/pets', headers });
      expect(answer.status).toBe(authorized ? 200 : 401);
      expect(answer.headers['ratelimit-remaining']).toBe(String(max - i - 1));
    }
  });
  afterAll(async () => t.close());

  it.each(spellings)('%s is refused with 429', async (_spelling, { target }) => {
    expectLimited(await call(t.port, { method: 'GET', target: target.replace('{port}', String(t.port)), headers }), max);
  });

  it.each(unlimited)('%s is not limited', async (_title, { target, want }) => {
    const answer = await call(t.port, { method: 'GET', target, headers });
    expect(answer.status).toBe(want);
    expect(answer.headers['ratelimit-limit']).toBeUndefined();
  });
});

// The limiter reads Authorization as authentication does: a request authentication will
// refuse spends its address's budget, never the budget of the key it named first.
describe('two Authorization headers', () => {
  let t: ListeningApp;
  beforeAll(async () => {
    t = await listen({ env: { RATE_LIMIT_MAX: '1000', RATE_LIMIT_ANONYMOUS_MAX: '50', RATE_LIMIT_WINDOW_MS: '600000' } });
  });
  afterAll(async () => t.close());

  const rows: [string, { second: (key: string) => string }][] = [
    ['the key, then Bearer bogus', { second: () => 'Bearer bogus' }],
    ['the key, then Basic', { second: () => 'Basic dTpw' }],
    ['the key twice', { second: (key) => `Bearer ${key}` }],
  ];
  it.each(rows)('%s: 401, counted on the address budget', async (_title, { second }) => {
    const answer = await call(t.port, { method: 'GET', target: '/v1/pets', headers: [['Authorization', `Bearer ${t.key}`], ['Authorization', second(t.key)]] });
    expectErrorAnswer(answer, 401);
    expect(answer.headers['ratelimit-limit']).toBe('50');
  });

  it('one Authorization header with the key is counted on the key budget', async () => {
    const answer = await call(t.port, { method: 'GET', target: '/v1/pets', headers: t.auth });
    expect(answer.status).toBe(200);
    expect(answer.headers['ratelimit-limit']).toBe('1000');
  });
});
