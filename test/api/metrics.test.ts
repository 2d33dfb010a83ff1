// /metrics (Prometheus text): access as configured, and the series an operator watches,
// checked for exact values after a known sequence of requests.
import { afterEach, describe, expect, it } from 'vitest';
import { buildTestApp, createApiKey, type TestApp } from '../helper.js';
import { within, WAIT_MS } from '../process.js';
import { startReceiver } from '../support/receiver.js';

const TOKEN = 'metrics-token-0123456789';
const opened: TestApp[] = [];
afterEach(async () => {
  for (const t of opened.splice(0)) await t.close();
});
async function app(env: Record<string, string>): Promise<TestApp> {
  const t = await buildTestApp({ env });
  opened.push(t);
  return t;
}

/** Every sample of the exposition: name, labels, value. */
function samples(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1] as string, m[2] as string]));
      return { name: match[1] as string, labels, value: Number(match[3]) };
    });
}
const value = (all: ReturnType<typeof samples>, name: string, labels: Record<string, string>): number | undefined =>
  all.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

describe('access to /metrics', () => {
  const cases: [string, { env: Record<string, string>; headers: Record<string, string>; want: number }][] = [
    ['off by default: no such route', { env: {}, headers: {}, want: 404 }],
    ['open: anyone', { env: { METRICS: 'open' }, headers: {}, want: 200 }],
    ['token: without it', { env: { METRICS: 'token', METRICS_TOKEN: TOKEN }, headers: {}, want: 401 }],
    ['token: a wrong one', { env: { METRICS: 'token', METRICS_TOKEN: TOKEN }, headers: { authorization: `Bearer ${TOKEN}x` }, want: 401 }],
    ['token: an API key is not the metrics token', { env: { METRICS: 'token', METRICS_TOKEN: TOKEN }, headers: { authorization: 'Bearer ask_not_the_token_at_all' }, want: 401 }],
    ['token: the right one', { env: { METRICS: 'token', METRICS_TOKEN: TOKEN }, headers: { authorization: `Bearer ${TOKEN}` }, want: 200 }],
  ];
  it.each(cases)('%s', async (_title, { env, headers, want }) => {
    const t = await app(env);
    const response = await t.app.inject({ method: 'GET', url: '/metrics', headers });
    expect(response.statusCode).toBe(want);
    if (want === 200) expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    if (want !== 200) expect(response.json()).toMatchObject({ code: want === 401 ? 'unauthorized' : 'not_found', status: want });
    if (want === 401) expect(response.headers['www-authenticate']).toMatch(/^Bearer /);
  });
});

describe('series after a known sequence of requests', () => {
  it('counts by operation and status, replays, refusals, deprecated calls per key, pool use', async () => {
    const t = await app({ METRICS: 'open', RATE_LIMIT_MAX: '20', RATE_LIMIT_WINDOW_MS: '60000' });
    const json = { 'content-type': 'application/json' };
    const caller = await createApiKey(t.pool, 'legacy-client');
    const other = { authorization: `Bearer ${caller.key}` };
    // New keys reach the app's cache through NOTIFY.
    await within(WAIT_MS, async () => (await t.app.inject({ method: 'GET', url: '/v1/pets', headers: other })).statusCode === 200);

    const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json, 'idempotency-key': 'k1' }, payload: { name: 'Rex', categoryId: 1 } });
    expect(created.statusCode).toBe(201);
    const replayed = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json, 'idempotency-key': 'k1' }, payload: { name: 'Rex', categoryId: 1 } });
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    const id = (created.json() as { id: number }).id;
    for (let i = 0; i < 3; i++) expect((await t.api({ method: 'GET', url: '/v1/pets', headers: t.auth })).statusCode).toBe(200);
    expect((await t.api({ method: 'GET', url: `/v1/pets/${id}`, headers: t.auth })).statusCode).toBe(200);
    expect((await t.api({ method: 'GET', url: '/v1/pets/999999', headers: t.auth })).statusCode).toBe(404);
    expect((await t.api({ method: 'GET', url: `/v1/pets/${id}`, headers: other })).statusCode).toBe(200);
    expect((await t.api({ method: 'GET', url: `/v1/pets/${id}`, headers: {} })).statusCode).toBe(401);
    // `other` has made 1 + 1 requests (the wait may have made more): spend the rest of its 20.
    let refused = 0;
    for (let i = 0; i < 25; i++) if ((await t.app.inject({ method: 'GET', url: '/v1/pets', headers: other })).statusCode === 429) refused++;
    expect(refused).toBeGreaterThan(0);

    const response = await t.app.inject({ method: 'GET', url: '/metrics' });
    const all = samples(response.body);
    const count = (operation: string, method: string, status: string) => value(all, 'animal_store_http_request_duration_seconds_count', { operation, method, status });
    expect(count('createPet', 'POST', '201')).toBe(2);
    expect(count('getPet', 'GET', '200')).toBe(2);
    expect(count('getPet', 'GET', '404')).toBe(1);
    expect(count('getPet', 'GET', '401')).toBe(1);
    expect(count('listPets', 'GET', '429')).toBe(refused);
    expect(value(all, 'animal_store_http_request_duration_seconds_bucket', { operation: 'getPet', status: '200', le: '+Inf' })).toBe(2);
    expect(value(all, 'animal_store_idempotent_replays_total', { operation: 'createPet' })).toBe(1);
    expect(value(all, 'animal_store_rate_limited_total', { operation: 'listPets', by: 'key' })).toBe(refused);
    // Who still calls the deprecated getPet: per key id and name, and without a valid key.
    const owner = (await t.pool.query<{ id: string }>("SELECT id FROM api_keys WHERE name = 'test'")).rows[0]?.id as string;
    expect(value(all, 'animal_store_deprecated_calls_total', { operation: 'getPet', api_key_id: owner, api_key_name: 'test' })).toBe(2);
    expect(value(all, 'animal_store_deprecated_calls_total', { operation: 'getPet', api_key_id: String(caller.id), api_key_name: 'legacy-client' })).toBe(1);
    expect(value(all, 'animal_store_deprecated_calls_total', { operation: 'getPet', api_key_id: '-', api_key_name: '-' })).toBe(1);
    expect(value(all, 'animal_store_deprecated_calls_total', { operation: 'listPets' })).toBeUndefined();
    // Pool: opened connections (tests use a pool of 5), none waiting now.
    expect(value(all, 'animal_store_db_pool_connections', { pool: 'primary', state: 'total' })).toBeGreaterThan(0);
    expect(value(all, 'animal_store_db_pool_connections', { pool: 'primary', state: 'total' })).toBeLessThanOrEqual(5);
    expect(value(all, 'animal_store_db_pool_connections', { pool: 'primary', state: 'waiting' })).toBe(0);
    expect(value(all, 'animal_store_process_resident_memory_bytes', {})).toBeGreaterThan(0);
    // Nothing secret in it: no API key, no SQL.
    expect(response.body).not.toContain(caller.key);
    expect(response.body).not.toContain(t.key);
    expect(response.body).not.toMatch(/SELECT|INSERT/);
  });
});

describe('webhook deliveries, the delivery queue, the timed jobs and the pool size', () => {
  it('counts attempts by outcome, reads the queue (due, scheduled, the oldest due one\'s wait), and reports each job\'s runs and lag', async () => {
    // Retries wait 60 s: a failed message stays scheduled while the test reads it.
    const t = await app({ METRICS: 'open', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE_SECONDS: '60', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_POLL_MS: '50' });
    const receiver = await startReceiver();
    try {
      const scrape = async () => samples((await t.app.inject({ method: 'GET', url: '/metrics' })).body);
      const attempts = (all: ReturnType<typeof samples>, outcome: string) => value(all, 'animal_store_webhook_attempts_total', { outcome });
      const json = { 'content-type': 'application/json' };
      const created = await t.api({ method: 'POST', url: '/v1/webhook-endpoints', headers: { ...t.auth, ...json }, payload: JSON.stringify({ url: `${receiver.url}/hooks`, eventTypes: ['pet.created'] }) });
      expect(created.statusCode).toBe(201);
      const pet = (name: string) => t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name, categoryId: 1 }) });

      // Nothing attempted yet: every outcome at zero, an empty queue.
      let all = await scrape();
      for (const outcome of ['delivered', 'failed', 'gone']) expect(attempts(all, outcome)).toBe(0);
      expect(value(all, 'animal_store_webhook_messages', { state: 'due' })).toBe(0);
      expect(value(all, 'animal_store_webhook_oldest_due_seconds', {})).toBe(0);

      // Delivered.
      expect((await pet('Delivered')).statusCode).toBe(201);
      await within(WAIT_MS, async () => attempts(await scrape(), 'delivered') === 1);

      // Refused with 500: failed, and scheduled for its retry in 60 s.
      receiver.answer(() => ({ status: 500 }));
      expect((await pet('Refused')).statusCode).toBe(201);
      await within(WAIT_MS, async () => attempts(await scrape(), 'failed') === 1);
      all = await scrape();
      expect(value(all, 'animal_store_webhook_messages', { state: 'scheduled' })).toBe(1);
      expect(value(all, 'animal_store_webhook_messages', { state: 'due' })).toBe(0);

      // Made due two minutes ago, and held by the receiver: due, for at least 120 s.
      receiver.answer(() => ({ hold: true }));
      await t.pool.query("UPDATE webhook_messages SET due_at = now() - interval '120 seconds'");
      await within(WAIT_MS, async () => receiver.received.length === 3);
      all = await scrape();
      expect(value(all, 'animal_store_webhook_messages', { state: 'due' })).toBe(1);
      expect(value(all, 'animal_store_webhook_messages', { state: 'scheduled' })).toBe(0);
      expect(value(all, 'animal_store_webhook_oldest_due_seconds', {})).toBeGreaterThanOrEqual(120);
      expect(attempts(all, 'gone')).toBe(0);

      // Every timed job has a lag (it has started), and the orders' expiry (every 500 ms) has run.
      await within(WAIT_MS, async () => (value(await scrape(), 'animal_store_job_runs_total', { name: 'orders expiry', outcome: 'ok' }) ?? 0) > 0);
      all = await scrape();
      const lags = all.filter((s) => s.name === 'animal_store_job_lag_seconds');
      expect(lags.map((s) => s.labels.name).sort()).toEqual(['api keys last used', 'events retention', 'idempotency keys purge', 'inventory fold', 'orders expiry', 'pet imports', 'webhook attempts purge', 'webhook previous secrets']);
      for (const lag of lags) expect(lag.value).toBeGreaterThanOrEqual(0);
      expect(value(all, 'animal_store_job_runs_total', { name: 'orders expiry', outcome: 'failed' })).toBeUndefined();
      // The pool's size (test apps use a pool of 5).
      expect(value(all, 'animal_store_db_pool_max_connections', { pool: 'primary' })).toBe(5);
    } finally {
      receiver.release();
      await receiver.close();
    }
  });
});
