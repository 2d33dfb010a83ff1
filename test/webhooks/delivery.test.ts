// Deliveries, in process, to receivers on 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE=true), with the
// retry schedule and the timeout scaled down: signatures verified with the standardwebhooks
// library, retries and the attempt log, Retry-After, redirects, 410, rotation, a slow
// endpoint beside a fast one, who may see what, enabling and deleting. And, on an app
// without WEBHOOK_ALLOW_PRIVATE, the check at connection time (DNS rebinding).
import type { LookupAddress } from 'node:dns';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helper.js';
import { within, WAIT_MS } from '../process.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const json = { 'content-type': 'application/json' };
const TIMEOUT_MS = 2000;
let t: TestApp;
const receivers: Receiver[] = [];

beforeAll(async () => {
  t = await buildTestApp({
    env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,2', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_POLL_MS: '50' },
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
  expect(created.statusCode).toBe(201);
  return created.json();
}

async function pet(name: string): Promise<number> {
  const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name, categoryId: 1, status: 'available' }) });
  expect(created.statusCode).toBe(201);
  return created.json().id;
}

async function deliveries(id: number, auth = t.auth): Promise<Array<{ eventId: number; attempt: number; statusCode?: number; error?: string; durationMs: number; attemptedAt: string }>> {
  const answer = await t.api({ method: 'GET', url: `/v1/webhook-endpoints/${id}/deliveries?limit=100`, headers: auth });
  expect(answer.statusCode).toBe(200);
  return answer.json();
}

/** The library's verdict on one request with one secret (throws when no signature matches). */
const verify = (secret: string, got: { headers: Record<string, unknown>; body: string }, signature = String(got.headers['webhook-signature'])) =>
  new Webhook(secret).verify(got.body, { 'webhook-id': String(got.headers['webhook-id']), 'webhook-timestamp': String(got.headers['webhook-timestamp']), 'webhook-signature': signature });

const petNamed = (r: Receiver, name: string) => r.received.filter((got) => JSON.parse(got.body).data?.name === name);

describe('deliveries', () => {
  it('POSTs each matching event once, signed, with the event id as webhook-id', async () => {
    const r = await receiver();
    const { id, secret } = await endpoint(`${r.url}/hooks`, ['pet.created']);
    const petId = await pet('Signed');
    await within(WAIT_MS, async () => petNamed(r, 'Signed').length === 1);
    const [got] = petNamed(r, 'Signed') as [(typeof r.received)[0]];
    const event = verify(secret, got) as { id: number; type: string; createdAt: string; data: unknown };
    expect(event).toMatchObject({ type: 'pet.created', data: { id: petId, name: 'Signed', categoryId: 1, status: 'available' } });
    expect(got.headers['webhook-id']).toBe(String(event.id));
    expect(got.headers['content-type']).toBe('application/json');
    const fromFeed = await t.pool.query('SELECT type FROM events WHERE id = $1', [event.id]);
    expect(fromFeed.rows[0].type).toBe('pet.created');
    expect(() => verify('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', got)).toThrow();
    // Not delivered again.
    await within(WAIT_MS, async () => (await deliveries(id)).length === 1);
    expect(await deliveries(id)).toEqual([expect.objectContaining({ eventId: event.id, attempt: 1, statusCode: 200 })]);
    expect(petNamed(r, 'Signed')).toHaveLength(1);
  });

  it('retries a failure, and the log lists every attempt with status, error and duration', async () => {
    const r = await receiver();
    let calls = 0;
    r.answer(() => (++calls <= 2 ? { status: 500 } : { status: 204 }));
    const { id, secret } = await endpoint(r.url, ['pet.created']);
    await pet('Retried');
    await within(WAIT_MS, async () => (await deliveries(id)).some((d) => d.statusCode === 204));
    const log = await deliveries(id);
    expect(log.map((d) => [d.attempt, d.statusCode])).toEqual([
      [1, 500],
      [2, 500],
      [3, 204],
    ]);
    expect(new Set(log.map((d) => d.eventId)).size).toBe(1);
    for (const d of log) expect(d.durationMs).toBeGreaterThanOrEqual(0);
    for (const got of petNamed(r, 'Retried')) verify(secret, got);
    // The log pages like every list; the next link names this endpoint.
    const page = await t.api({ method: 'GET', url: `/v1/webhook-endpoints/${id}/deliveries?limit=2`, headers: t.auth });
    const next = /<([^>]+)>; rel="next"/.exec(String(page.headers.link))?.[1] as string;
    expect(next).toMatch(new RegExp(`^/v1/webhook-endpoints/${id}/deliveries\\?limit=2&cursor=`));
    expect((await t.api({ method: 'GET', url: next, headers: t.auth })).json()).toEqual([log[2]]);
    // A closed port: connection_failed.
    const closed = await receiver();
    const deadUrl = closed.url;
    await closed.close();
    const dead = await endpoint(deadUrl, ['pet.created']);
    await pet('Nobody');
    await within(WAIT_MS, async () => (await deliveries(dead.id)).length >= 1);
    expect((await deliveries(dead.id))[0]).toMatchObject({ attempt: 1, error: 'connection_failed' });
    expect((await deliveries(dead.id))[0]?.statusCode).toBeUndefined();
    // The first endpoint's cursor is not another endpoint's.
    const elsewhere = await t.api({ method: 'GET', url: next.replace(`/webhook-endpoints/${id}/`, `/webhook-endpoints/${dead.id}/`), headers: t.auth });
    expect(elsewhere.statusCode).toBe(400);
    expect(elsewhere.json().message).toBe('query parameter cursor: belongs to the list of another webhook endpoint; start again without cursor');
  });

  it('waits as long as Retry-After asks when that is longer than the schedule', async () => {
    const r = await receiver();
    let calls = 0;
    r.answer(() => (++calls === 1 ? { status: 503, headers: { 'retry-after': '4' } } : { status: 200 }));
    const { id } = await endpoint(r.url, ['pet.created']);
    await pet('Patient');
    await within(WAIT_MS, async () => petNamed(r, 'Patient').length === 2);
    const [first, second] = petNamed(r, 'Patient') as unknown as [{ at: number }, { at: number }];
    // The schedule says 1 s; Retry-After says 4 s.
    expect(second.at - first.at).toBeGreaterThanOrEqual(3900);
    await within(WAIT_MS, async () => (await deliveries(id)).length === 2);
    expect((await deliveries(id)).map((d) => d.statusCode)).toEqual([503, 200]);
  });

  it('does not follow a redirect: a 302 is a failure, and the other receiver gets nothing', async () => {
    const target = await receiver();
    const r = await receiver();
    r.answer(() => ({ status: 302, headers: { location: `${target.url}/elsewhere` } }));
    const { id } = await endpoint(r.url, ['pet.created']);
    await pet('Redirected');
    await within(WAIT_MS, async () => (await deliveries(id)).length >= 2);
    expect((await deliveries(id)).slice(0, 2).map((d) => [d.attempt, d.statusCode])).toEqual([
      [1, 302],
      [2, 302],
    ]);
    expect(target.connections()).toBe(0);
  });

  it('410 disables the endpoint at once, with the reason, and nothing more is delivered', async () => {
    const r = await receiver();
    r.answer(() => ({ status: 410 }));
    const { id } = await endpoint(r.url, ['pet.created']);
    await pet('Gone');
    await within(WAIT_MS, async () => (await t.api({ method: 'GET', url: `/v1/webhook-endpoints/${id}`, headers: t.auth })).json().enabled === false);
    const got = (await t.api({ method: 'GET', url: `/v1/webhook-endpoints/${id}`, headers: t.auth })).json();
    expect(got).toMatchObject({ enabled: false, disabledReason: 'the receiver answered 410 Gone' });
    expect(got.disabledAt).toBeDefined();
    await pet('After gone');
    // A control endpoint receives the later event: by then the disabled one would have too.
    const control = await receiver();
    await endpoint(control.url, ['pet.created']);
    await pet('Control');
    await within(WAIT_MS, async () => petNamed(control, 'Control').length === 1);
    expect(r.received).toHaveLength(1);
    expect((await deliveries(id)).map((d) => d.statusCode)).toEqual([410]);
  });

  it('after a rotation both secrets verify, each with its own signature; once the previous one expires, only the new', async () => {
    const r = await receiver();
    const { id, secret: old } = await endpoint(r.url, ['pet.created']);
    const rotated = (await t.api({ method: 'POST', url: `/v1/webhook-endpoints/${id}/rotate-secret`, headers: t.auth })).json();
    await pet('Rotated');
    await within(WAIT_MS, async () => petNamed(r, 'Rotated').length === 1);
    const [got] = petNamed(r, 'Rotated') as [(typeof r.received)[0]];
    const signatures = String(got.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    const [first, second] = signatures as [string, string];
    expect(() => verify(rotated.secret, got, first)).not.toThrow();
    expect(() => verify(old, got, second)).not.toThrow();
    expect(() => verify(old, got, first)).toThrow();
    expect(() => verify(rotated.secret, got, second)).toThrow();
    // The 24 hours are over.
    await t.pool.query("UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1", [id]);
    await pet('Rotated later');
    await within(WAIT_MS, async () => petNamed(r, 'Rotated later').length === 1);
    const [later] = petNamed(r, 'Rotated later') as [(typeof r.received)[0]];
    expect(String(later.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() => verify(rotated.secret, later)).not.toThrow();
    expect(() => verify(old, later)).toThrow();
    expect((await t.api({ method: 'GET', url: `/v1/webhook-endpoints/${id}`, headers: t.auth })).json().previousSecretExpiresAt).toBeUndefined();
  });

  it('an endpoint that never answers does not delay another endpoint', async () => {
    const slow = await receiver();
    slow.answer(() => ({ hold: true }));
    const fast = await receiver();
    const s = await endpoint(slow.url, ['pet.created']);
    await endpoint(fast.url, ['pet.created']);
    const names = ['Fast 1', 'Fast 2', 'Fast 3'];
    for (const name of names) await pet(name);
    await within(WAIT_MS, async () => names.every((name) => petNamed(fast, name).length === 1));
    // All three reached the fast endpoint while the slow one was still on its first event,
    // one at a time: its attempt had not ended (nothing in its log yet).
    const slowLog = await deliveries(s.id);
    expect(slow.received.length).toBe(1);
    expect(slowLog).toEqual([]);
    await within(WAIT_MS, async () => (await deliveries(s.id)).length >= 1);
    expect((await deliveries(s.id))[0]).toMatchObject({ attempt: 1, error: 'timeout' });
    expect((await deliveries(s.id))[0]?.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    slow.release();
  });

  it('a receiver that keeps failing has at most 1,000 messages waiting however many events are written; once it answers, it gets each event once', async () => {
    const r = await receiver();
    r.answer(() => ({ status: 503 }));
    const { id } = await endpoint(r.url, ['pet.created']);
    const waiting = async () => (await t.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_messages WHERE endpoint_id = $1', [id])).rows[0]?.n;
    const relayed = async () => Number((await t.pool.query<{ p: string }>("SELECT position AS p FROM event_relays WHERE name = 'webhook-' || $1", [id])).rows[0]?.p);
    // 1,500 events in one statement written around the service (each pet's trigger writes its event).
    await t.pool.query("INSERT INTO pets (name, category_id) SELECT 'Backlog ' || i, 1 FROM generate_series(1, 1500) AS i");
    const newest = Number((await t.pool.query<{ id: string }>('SELECT max(id) AS id FROM events')).rows[0]?.id);
    // Filled to more than half (1,000, or less when a step stopped before an event still
    // being committed), past which no refill follows; never more than 1,000.
    await within(WAIT_MS, async () => ((await waiting()) ?? 0) > 500);
    // It stays so: the rest wait in the feed, behind the endpoint's relay, over many polls (50 ms).
    for (let poll = 0; poll < 10; poll++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await waiting()).toBeLessThanOrEqual(1000);
      expect(await relayed()).toBeLessThan(newest);
    }
    expect(r.received.length).toBeGreaterThan(0);
    const answeredAt = r.received.length;
    r.answer(() => ({ status: 200 }));
    const backlog = (from: number) => r.received.slice(from).map((got) => JSON.parse(got.body).data?.name as string).filter((name) => name?.startsWith('Backlog '));
    await within(120_000, async () => new Set(backlog(answeredAt)).size === 1500, 100);
    await within(WAIT_MS, async () => (await waiting()) === 0);
    // Every request from the switch on was answered 200: none came twice.
    expect(backlog(answeredAt)).toHaveLength(1500);
    expect(await relayed()).toBe(newest);
  }, 240_000);

  it('an endpoint that lags behind does not hold events back from retention: what it has not taken is deleted at its age, and skipped', async () => {
    const r = await receiver();
    r.answer(() => ({ status: 503 }));
    const { id } = await endpoint(r.url, ['pet.created']);
    const waiting = async () => (await t.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_messages WHERE endpoint_id = $1', [id])).rows[0]?.n ?? 0;
    const relayed = async () => Number((await t.pool.query<{ p: string }>("SELECT position AS p FROM event_relays WHERE name = 'webhook-' || $1", [id])).rows[0]?.p);
    await t.pool.query("INSERT INTO pets (name, category_id) SELECT 'Aged ' || i, 1 FROM generate_series(1, 1500) AS i");
    const newest = Number((await t.pool.query<{ id: string }>('SELECT max(id) AS id FROM events')).rows[0]?.id);
    await within(WAIT_MS, async () => (await waiting()) > 500);
    expect(await relayed()).toBeLessThan(newest);
    // Every event so far made 40 days old (set-up); an instance's retention runs as it starts.
    await t.pool.query("UPDATE events SET created_at = now() - interval '40 days' WHERE id <= $1", [newest]);
    const other = await buildTestApp({ url: t.url, pool: t.pool });
    try {
      await within(WAIT_MS, async () => Number((await t.pool.query<{ p: string }>('SELECT purged_through AS p FROM events_retention')).rows[0]?.p) >= newest, 50);
    } finally {
      await other.app.close();
    }
    // The messages of deleted events are dropped without an attempt; none reaches the receiver.
    const answeredAt = r.received.length;
    r.answer(() => ({ status: 200 }));
    await within(WAIT_MS, async () => (await waiting()) === 0, 100);
    await pet('After the purge');
    await within(WAIT_MS, async () => petNamed(r, 'After the purge').length === 1);
    expect(r.received.slice(answeredAt).map((got) => JSON.parse(got.body).data?.name)).toEqual(['After the purge']);
  });

  it('an endpoint written around the service gets its relay, and one deleted so leaves none behind', async () => {
    const r = await receiver();
    const key = Number((await t.pool.query<{ id: string }>('SELECT min(id) AS id FROM api_keys')).rows[0]?.id);
    const secret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
    const id = Number(
      (await t.pool.query<{ id: string }>("INSERT INTO webhook_endpoints (api_key_id, url, event_types, secret) VALUES ($1, $2, '{pet.created}', $3) RETURNING id", [key, r.url, secret])).rows[0]?.id,
    );
    const relay = async () => (await t.pool.query("SELECT 1 FROM event_relays WHERE name = 'webhook-' || $1", [id])).rowCount;
    await within(WAIT_MS, async () => (await relay()) === 1);
    await pet('Around');
    await within(WAIT_MS, async () => petNamed(r, 'Around').length === 1);
    verify(secret, petNamed(r, 'Around')[0] as { headers: Record<string, unknown>; body: string });
    await t.pool.query('DELETE FROM webhook_endpoints WHERE id = $1', [id]);
    await within(WAIT_MS, async () => (await relay()) === 0);
  });

  it('delivers order events only to the key that placed the order (another key with orders:read gets none); catalogue events to keys with pets:read', async () => {
    const made = (await t.api({ method: 'POST', url: '/v1/api-keys', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: 'another key', scopes: ['pets:read', 'orders:read', 'webhooks:manage'] }) })).json();
    const theirs = { authorization: `Bearer ${made.secret}` };
    const mine = await receiver();
    const others = await receiver();
    await endpoint(mine.url, ['order.placed', 'pet.updated']);
    await endpoint(others.url, ['order.placed', 'pet.updated'], theirs);
    const petId = await pet('Ordered');
    const order = await t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: JSON.stringify({ petId }) });
    expect(order.statusCode).toBe(201);
    const types = (r: Receiver) => r.received.map((got) => JSON.parse(got.body).type as string).sort();
    await within(WAIT_MS, async () => types(mine).length === 2 && types(others).length === 1);
    expect(types(mine)).toEqual(['order.placed', 'pet.updated']);
    expect(types(others)).toEqual(['pet.updated']);
    // A revoked key's endpoint receives nothing more.
    await t.api({ method: 'POST', url: `/v1/api-keys/${made.id}/revoke`, headers: t.auth });
    await t.api({ method: 'PATCH', url: `/v1/pets/${petId}`, headers: { ...t.auth, 'content-type': 'application/merge-patch+json' }, payload: '{"name":"Renamed"}' });
    await within(WAIT_MS, async () => types(mine).length === 3);
    await pet('Flush');
    const control = await receiver();
    await endpoint(control.url, ['pet.created']);
    await pet('Control 2');
    await within(WAIT_MS, async () => control.received.length === 1);
    expect(types(others)).toEqual(['pet.updated']);
  });

  it('enabled: false delivers nothing written meanwhile, also after enabling again; a deleted endpoint receives nothing', async () => {
    const r = await receiver();
    const { id } = await endpoint(r.url, ['pet.created']);
    const patch = (body: unknown) => t.api({ method: 'PATCH', url: `/v1/webhook-endpoints/${id}`, headers: { ...t.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify(body) });
    await patch({ enabled: false });
    await pet('While disabled');
    // Dispatched (a control endpoint got it) before enabling again.
    const control = await receiver();
    await endpoint(control.url, ['pet.created']);
    await pet('Control 3');
    await within(WAIT_MS, async () => petNamed(control, 'Control 3').length === 1);
    await patch({ enabled: true });
    // Its relay moved past what was written meanwhile (it does not walk it again).
    const whileDisabled = Number((await t.pool.query<{ id: string }>("SELECT max(id) AS id FROM events WHERE type = 'pet.created' AND data::jsonb->>'name' = 'While disabled'")).rows[0]?.id);
    expect(Number((await t.pool.query<{ p: string }>("SELECT position AS p FROM event_relays WHERE name = 'webhook-' || $1", [id])).rows[0]?.p)).toBeGreaterThanOrEqual(whileDisabled);
    await pet('After enabling');
    await within(WAIT_MS, async () => petNamed(r, 'After enabling').length === 1);
    expect(petNamed(r, 'While disabled')).toHaveLength(0);
    expect(await t.api({ method: 'DELETE', url: `/v1/webhook-endpoints/${id}`, headers: t.auth })).toMatchObject({ statusCode: 204 });
    await pet('After delete');
    await within(WAIT_MS, async () => petNamed(control, 'After delete').length === 1);
    expect(petNamed(r, 'After delete')).toHaveLength(0);
  });

  it('enabling and deleting the same endpoint at once: each answered 200, 204 or 404, never 500', async () => {
    const r = await receiver();
    for (let round = 0; round < 25; round++) {
      const { id } = await endpoint(r.url, ['pet.created']);
      const url = `/v1/webhook-endpoints/${id}`;
      const patch = (body: unknown) => t.api({ method: 'PATCH', url, headers: { ...t.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify(body) });
      expect((await patch({ enabled: false })).statusCode).toBe(200);
      // Both lock the relay's row, then the endpoint's; in the other order they could
      // deadlock (PostgreSQL aborts one: a 500). A race: each round may or may not overlap.
      const [enabled, deleted] = await Promise.all([patch({ enabled: true }), t.api({ method: 'DELETE', url, headers: t.auth })]);
      expect([200, 404]).toContain(enabled.statusCode);
      expect(deleted.statusCode).toBe(204);
      expect((await t.api({ method: 'GET', url, headers: t.auth })).statusCode).toBe(404);
      expect((await t.pool.query("SELECT 1 FROM event_relays WHERE name = 'webhook-' || $1", [id])).rowCount).toBe(0);
    }
  });
});

describe('the address check at connection time', () => {
  let strict: TestApp;
  let answerAtDelivery = '127.0.0.1';
  const asked: string[] = [];
  // The name answers a public address when the endpoint is saved, then a loopback one to the
  // delivery: DNS rebinding. Nothing may connect.
  const resolver = async (hostname: string, purpose: 'save' | 'connect'): Promise<LookupAddress[]> => {
    asked.push(hostname);
    if (purpose === 'save') return [{ address: '93.184.215.14', family: 4 }];
    return [{ address: answerAtDelivery, family: answerAtDelivery.includes(':') ? 6 : 4 }];
  };
  beforeAll(async () => {
    strict = await buildTestApp({ webhookResolver: resolver, env: { WEBHOOK_RETRY_SCHEDULE_SECONDS: '1', WEBHOOK_POLL_MS: '50', WEBHOOK_TIMEOUT_MS: '2000' } });
  });
  afterAll(async () => strict?.close());

  it('refuses an address that is not public when connecting: refused_address, and the receiver sees no connection', async () => {
    const r = await receiver();
    const port = new URL(r.url).port;
    const created = await strict.api({ method: 'POST', url: '/v1/webhook-endpoints', headers: { ...strict.auth, ...json }, payload: JSON.stringify({ url: `https://rebound.animal-store.dev:${port}/hooks`, eventTypes: ['pet.created'] }) });
    expect(created.statusCode).toBe(201);
    const { id } = created.json();
    await strict.api({ method: 'POST', url: '/v1/pets', headers: { ...strict.auth, ...json }, payload: '{"name":"Rebound","categoryId":1}' });
    const log = async () => (await strict.api({ method: 'GET', url: `/v1/webhook-endpoints/${id}/deliveries`, headers: strict.auth })).json() as Array<{ error?: string }>;
    await within(WAIT_MS, async () => (await log()).length >= 1);
    // An IPv4-mapped loopback address (only loopback: a bug here must not reach any other host).
    answerAtDelivery = '::ffff:127.0.0.1';
    await within(WAIT_MS, async () => (await log()).length >= 2);
    expect((await log()).slice(0, 2).map((d) => d.error)).toEqual(['refused_address', 'refused_address']);
    expect(asked.length).toBeGreaterThanOrEqual(3);
    expect(r.connections()).toBe(0);
    expect(r.received).toHaveLength(0);
  });
});
