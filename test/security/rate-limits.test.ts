// Rate limits apply to what the router matched, whatever the spelling of the URL: once a
// budget is spent, every spelling that reaches a /v1 route is refused with 429 and the
// RateLimit headers, while what is not limited on purpose stays served. To extend: add a row
// with the spelling (`{port}` is the server's port), or to the table of what is not limited.
// Both sets of headers are read: the older draft's RateLimit-Limit, -Remaining and -Reset,
// and the current draft's structured RateLimit-Policy and RateLimit, whose policy is "key"
// or "address".
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

/** The window every budget below is given, in seconds (RATE_LIMIT_WINDOW_MS / 1000). */
const WINDOW_S = 600;

/** The current draft's fields: the policy's name and parameters, exactly as sent, and `RateLimit`'s parsed. */
function structured(answer: RawAnswer): { policy: string | undefined; name: string; remaining: number; reset: number } {
  const [, name = '', remaining = 'NaN', reset = 'NaN'] = /^"([a-z]+)";r=([0-9]+);t=([0-9]+)$/.exec(answer.headers.ratelimit ?? '') ?? [];
  return { policy: answer.headers['ratelimit-policy'], name, remaining: Number(remaining), reset: Number(reset) };
}

function expectLimited(answer: RawAnswer, limit: number, policy: string): void {
  expectErrorAnswer(answer, 429);
  expect(answer.headers['ratelimit-limit']).toBe(String(limit));
  expect(answer.headers['ratelimit-remaining']).toBe('0');
  expect(Number(answer.headers['ratelimit-reset'])).toBeGreaterThan(0);
  expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
  const fields = structured(answer);
  expect(fields.policy).toBe(`"${policy}";q=${limit};w=${WINDOW_S}`);
  expect(fields.name).toBe(policy);
  expect(fields.remaining).toBe(0);
  expect(fields.reset).toBeGreaterThan(0);
  expect(fields.reset).toBeLessThanOrEqual(WINDOW_S);
  expect(String(fields.reset)).toBe(answer.headers['ratelimit-reset']);
}

const budgets = [
  ['with a key', { max: 3, authorized: true, policy: 'key' }],
  ['without a key', { max: 2, authorized: false, policy: 'address' }],
] as const;

describe.each(budgets)('%s, once the budget is spent', (_title, { max, authorized, policy }) => {
  let t: ListeningApp;
  let headers: Record<string, string>;
  const spending: RawAnswer[] = [];
  beforeAll(async () => {
    t = await listen({ env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_ANONYMOUS_MAX: '2', RATE_LIMIT_WINDOW_MS: String(WINDOW_S * 1000), METRICS: 'open' } });
    headers = authorized ? t.auth : {};
    for (let i = 0; i < max; i++) spending.push(await call(t.port, { method: 'GET', target: '/v1/pets', headers }));
  });
  afterAll(async () => t.close());

  it(`the answers that spend it carry both sets of headers, the "${policy}" policy's remaining count going down`, () => {
    spending.forEach((answer, i) => {
      expect(answer.status).toBe(authorized ? 200 : 401);
      expect(answer.headers['ratelimit-limit']).toBe(String(max));
      expect(answer.headers['ratelimit-remaining']).toBe(String(max - i - 1));
      const fields = structured(answer);
      expect(fields.policy).toBe(`"${policy}";q=${max};w=${WINDOW_S}`);
      expect(fields.name).toBe(policy);
      expect(fields.remaining).toBe(max - i - 1);
      expect(fields.reset).toBeGreaterThan(0);
      expect(fields.reset).toBeLessThanOrEqual(WINDOW_S);
      expect(String(fields.reset)).toBe(answer.headers['ratelimit-reset']);
      expect(answer.headers['retry-after']).toBeUndefined();
    });
  });

  it.each(spellings)('%s is refused with 429', async (_spelling, { target }) => {
    expectLimited(await call(t.port, { method: 'GET', target: target.replace('{port}', String(t.port)), headers }), max, policy);
  });

  it.each(unlimited)('%s is not limited', async (_title, { target, want }) => {
    const answer = await call(t.port, { method: 'GET', target, headers });
    expect(answer.status).toBe(want);
    expect(answer.headers['ratelimit-limit']).toBeUndefined();
    expect(answer.headers['ratelimit-policy']).toBeUndefined();
    expect(answer.headers.ratelimit).toBeUndefined();
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
    expect(answer.headers['ratelimit-policy']).toBe('"address";q=50;w=600');
  });

  it('one Authorization header with the key is counted on the key budget', async () => {
    const answer = await call(t.port, { method: 'GET', target: '/v1/pets', headers: t.auth });
    expect(answer.status).toBe(200);
    expect(answer.headers['ratelimit-limit']).toBe('1000');
    expect(answer.headers['ratelimit-policy']).toBe('"key";q=1000;w=600');
  });
});
