// The retry window, scaled down to 3 seconds (WEBHOOK_RETRY_WINDOW_SECONDS) with 2 seconds
// between attempts (WEBHOOK_RETRY_SCHEDULE_SECONDS), in process, to receivers on 127.0.0.1:
// a last attempt at the end of the window, however long the schedule or a Retry-After asks
// to wait; an endpoint disabled when every attempt failed for the window, and only then;
// the endpoints of revoked and expired keys disabled; attempts in flight per key bounded;
// an expired previous secret cleared.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helper.js';
import { within, WAIT_MS } from '../process.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const json = { 'content-type': 'application/json' };
let t: TestApp;
const receivers: Receiver[] = [];

beforeAll(async () => {
  t = await buildTestApp({
    env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE_SECONDS: '2', WEBHOOK_RETRY_WINDOW_SECONDS: '3', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_POLL_MS: '50' },
  });
});
afterEach(async () => {
  await t.pool.query('DELETE FROM webhook_endpoints');
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => t?.close());

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

async function endpoint(url: string, eventTypes: string[], auth = t.auth): Promise<{ id: number; secret: string }> {
  const created = await t.api({ method: 'POST', url: '/v1/webhook-endpoints', headers: { ...auth, ...json }, payload: JSON.stringify({ url, eventTypes }) });
  expect(created.statusCode, created.body).toBe(201);
  return created.json();
}

async function pet(name: string): Promise<number> {
  const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name, categoryId: 1, status: 'available' }) });
  expect(created.statusCode).toBe(201);
  return created.json().id;
}

const getEndpoint = async (id: number, auth = t.auth) => (await t.api({ method: 'GET', url: `/v1/webhook-endpoints/${id}`, headers: auth })).json();

async function deliveries(id: number): Promise<Array<{ eventId: number; attempt: number; statusCode?: number; attemptedAt: string }>> {
  const answer = await t.api({ method: 'GET', url: `/v1/webhook-endpoints/${id}/deliveries?limit=100`, headers: t.auth });
  expect(answer.statusCode).toBe(200);
  return answer.json();
}

const named = (r: Receiver, name: string) => r.received.filter((got) => JSON.parse(got.body).data?.name === name);
const pending = async (id: number) => (await t.pool.query('SELECT count(*)::int AS n FROM webhook_messages WHERE endpoint_id = $1', [id])).rows[0].n as number;
const makeKey = async (body: Record<string, unknown>) => {
  const made = await t.api({ method: 'POST', url: '/v1/api-keys', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: 'hooks', ...body }) });
  expect(made.statusCode, made.body).toBe(201);
  return { id: made.json().id as number, auth: { authorization: `Bearer ${made.json().secret}` } };
};

describe('the retry window', () => {
  it('makes a last attempt at the end of the window, then disables the endpoint whose every attempt failed, with the reason', async () => {
    const r = await receiver();
    r.answer(() => ({ status: 503 }));
    const { id } = await endpoint(r.url, ['pet.created']);
    await pet('Hopeless');
    // Attempts at 0 and 2 s; the next (4 s) would fall past the window: it is made at 3 s.
    await within(WAIT_MS, async () => (await getEndpoint(id)).enabled === false);
    const got = await getEndpoint(id);
    expect(got.disabledReason).toMatch(/^every delivery failed for 3 seconds \(from \d{4}-\d\d-\d\dT[\d:.]+Z\); the last: 503$/);
    const log = await deliveries(id);
    expect(log.map((d) => [d.attempt, d.statusCode])).toEqual([
      [1, 503],
      [2, 503],
      [3, 503],
    ]);
    const [first, , last] = log.map((d) => Date.parse(d.attemptedAt)) as [number, number, number];
    expect(last - first).toBeGreaterThanOrEqual(2900);
    expect(await pending(id)).toBe(0);
    // Enabled again, it delivers what is written from then on.
    r.answer(() => ({ status: 200 }));
    await t.api({ method: 'PATCH', url: `/v1/webhook-endpoints/${id}`, headers: { ...t.auth, 'content-type': 'application/merge-patch+json' }, payload: '{"enabled":true}' });
    await pet('Hopeful');
    await within(WAIT_MS, async () => named(r, 'Hopeful').length === 1);
    expect(named(r, 'Hopeless')).toHaveLength(3);
  });

  it('gives up one failing event without disabling an endpoint that delivers others, and a later single failure does not disable it either', async () => {
    const r = await receiver();
    let laterCalls = 0;
    r.answer((got) => {
      const name = JSON.parse(got.body).data?.name;
      if (name === 'Refused') return { status: 500 };
      if (name === 'Later') return { status: ++laterCalls === 1 ? 502 : 200 };
      return { status: 200 };
    });
    const { id } = await endpoint(r.url, ['pet.created']);
    await pet('Refused');
    await pet('Accepted');
    await within(WAIT_MS, async () => named(r, 'Refused').length >= 2 && (await pending(id)) === 0);
    expect(named(r, 'Accepted')).toHaveLength(1);
    expect((await getEndpoint(id)).enabled).toBe(true);
    // Well past the window after the given-up event's failures: one failure now is one failure.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    await pet('Later');
    await within(WAIT_MS, async () => named(r, 'Later').length === 2);
    await within(WAIT_MS, async () => (await pending(id)) === 0);
    const got = await getEndpoint(id);
    expect(got.enabled).toBe(true);
    expect(got.disabledReason).toBeUndefined();
    // The given-up event had its last attempt at the end of the window.
    expect(named(r, 'Refused')).toHaveLength(3);
  });

  it('a Retry-After longer than the window gets a last attempt at its end rather than none', async () => {
    const r = await receiver();
    let calls = 0;
    r.answer(() => (++calls === 1 ? { status: 503, headers: { 'retry-after': '86400' } } : { status: 200 }));
    const { id } = await endpoint(r.url, ['pet.created']);
    await pet('Patient');
    await within(WAIT_MS, async () => named(r, 'Patient').length === 2);
    const [first, second] = named(r, 'Patient') as unknown as [{ at: number }, { at: number }];
    expect(second.at - first.at).toBeGreaterThanOrEqual(2900);
    await within(WAIT_MS, async () => (await deliveries(id)).length === 2);
    expect((await deliveries(id)).map((d) => d.statusCode)).toEqual([503, 200]);
    expect((await getEndpoint(id)).enabled).toBe(true);
  });
});

describe("a key's endpoints", () => {
  it('are disabled, saying why, when the key is revoked or expires', async () => {
    const r = await receiver();
    const revoked = await makeKey({ scopes: ['pets:read', 'webhooks:manage'] });
    const expiring = await makeKey({ scopes: ['pets:read', 'webhooks:manage'], expiresAt: new Date(Date.now() + 3000).toISOString() });
    const a = await endpoint(r.url, ['pet.created'], revoked.auth);
    const b = await endpoint(r.url, ['pet.created'], expiring.auth);
    const kept = await endpoint(r.url, ['pet.created']);
    expect((await t.api({ method: 'POST', url: `/v1/api-keys/${revoked.id}/revoke`, headers: t.auth })).statusCode).toBe(200);
    // The key that revoked or expired reads nothing any more: the table says.
    const state = async (id: number) => (await t.pool.query('SELECT enabled, disabled_reason, disabled_at FROM webhook_endpoints WHERE id = $1', [id])).rows[0];
    await within(WAIT_MS, async () => (await state(a.id)).enabled === false);
    expect(await state(a.id)).toMatchObject({ enabled: false, disabled_reason: 'its API key was revoked' });
    expect((await state(a.id)).disabled_at).toBeInstanceOf(Date);
    await within(WAIT_MS, async () => (await state(b.id)).enabled === false);
    expect(await state(b.id)).toMatchObject({ enabled: false, disabled_reason: 'its API key expired' });
    expect((await getEndpoint(kept.id)).enabled).toBe(true);
  });

  it('have at most 4 attempts in flight at once, and another key is not held up by them', async () => {
    const holders = await Promise.all(Array.from({ length: 6 }, () => receiver()));
    for (const h of holders) h.answer(() => ({ hold: true }));
    for (const h of holders) await endpoint(h.url, ['pet.created']);
    const otherKey = await makeKey({ scopes: ['pets:read', 'webhooks:manage'] });
    const control = await receiver();
    await endpoint(control.url, ['pet.created'], otherKey.auth);
    await pet('Held');
    await within(WAIT_MS, async () => named(control, 'Held').length === 1);
    await within(WAIT_MS, async () => holders.filter((h) => h.received.length > 0).length >= 4);
    // Every instance-wide slot is free (16), yet the key's other two wait for a slot of its own.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(holders.filter((h) => h.received.length > 0)).toHaveLength(4);
    for (const h of holders) h.release();
    // Once attempts end (the 2 s timeout), the other two get theirs.
    await within(WAIT_MS, async () => holders.every((h) => h.received.length > 0));
  });

  it('forget a previous secret once it has expired', async () => {
    const r = await receiver();
    const { id } = await endpoint(r.url, ['pet.created']);
    await t.api({ method: 'POST', url: `/v1/webhook-endpoints/${id}/rotate-secret`, headers: t.auth });
    await t.pool.query("UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1", [id]);
    await pet('Forgotten');
    await within(WAIT_MS, async () => named(r, 'Forgotten').length === 1);
    expect(String(named(r, 'Forgotten')[0]?.headers['webhook-signature']).split(' ')).toHaveLength(1);
    const { rows } = await t.pool.query('SELECT previous_secret, previous_secret_expires_at FROM webhook_endpoints WHERE id = $1', [id]);
    expect(rows[0]).toEqual({ previous_secret: null, previous_secret_expires_at: null });
  });
});
