// The NATS JetStream relay (EVENTS_NATS_URL): every event is published once to the stream, on
// `<prefix>.<type>` with `Nats-Msg-Id: <event id>`, by one of two instances sharing the
// database; JetStream drops a re-publish of an id; NATS being unreachable delays publishing
// and nothing else. Against the machine's NATS (TEST_NATS_URL, default 127.0.0.1:4222), with
// a stream and subjects of this run's own (EVENTS_NATS_STREAM, EVENTS_NATS_SUBJECT_PREFIX).
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { connect, nanos, type JetStreamManager, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createApiKey, keysSettled, type TestApp } from '../helper.js';
import { within, WAIT_MS } from '../process.js';
import { NATS_URL, requires } from '../support/requires.js';

const haveNats = await requires('nats', 'test/e2e/events-nats.test.ts (the NATS JetStream relay)');

const run = randomBytes(4).toString('hex');
const STREAM = `ANIMAL_STORE_EVENTS_TEST_${run}`;
const PREFIX = `animal-store-test-${run}.events`;
// The stream of the relay turned on for a database that already has events.
const LATE_STREAM = `ANIMAL_STORE_EVENTS_TEST_${run}_LATE`;
const LATE_PREFIX = `animal-store-test-${run}-late.events`;
// The stream of the relay started while NATS is away.
const AWAY_STREAM = `ANIMAL_STORE_EVENTS_TEST_${run}_AWAY`;
const AWAY_PREFIX = `animal-store-test-${run}-away.events`;
const json = { 'content-type': 'application/json' };

describe.skipIf(!haveNats)('the NATS JetStream relay', () => {
  let first: TestApp;
  let second: TestApp;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let otherKey: string;

  beforeAll(async () => {
    const env = { EVENTS_NATS_URL: NATS_URL, EVENTS_NATS_STREAM: STREAM, EVENTS_NATS_SUBJECT_PREFIX: PREFIX, ORDER_HOLD_SECONDS: '1', RATE_LIMIT_MAX: '100000' };
    first = await buildTestApp({ env });
    second = await buildTestApp({ url: first.url, env });
    otherKey = (await createApiKey(first.pool, 'other')).key;
    await keysSettled(first.pool, async (key) => (await second.app.inject({ method: 'GET', url: '/v1/events', headers: { authorization: `Bearer ${key}` } })).statusCode === 200);
    nc = await connect({ servers: NATS_URL, ignoreClusterUpdates: true });
    jsm = await nc.jetstreamManager();
  }, 60_000);

  afterAll(async () => {
    await second?.close();
    await first?.close();
    await jsm?.streams.delete(STREAM).catch(() => {});
    await jsm?.streams.delete(LATE_STREAM).catch(() => {});
    await jsm?.streams.delete(AWAY_STREAM).catch(() => {});
    await nc?.close();
  });

  it('publishes every event once, on <prefix>.<type> with Nats-Msg-Id, as getEvent answers it', async () => {
    // Changes through both instances, by two keys: pets, categories, orders placed, completed, cancelled and let expire.
    const apps = [first, second];
    const keys = [first.key, otherKey];
    for (let i = 0; i < 8; i++) {
      const app = apps[i % 2] as TestApp;
      const auth = { authorization: `Bearer ${keys[i % 2]}` };
      const pet = (await app.api({ method: 'POST', url: '/v1/pets', headers: { ...auth, ...json }, payload: JSON.stringify({ name: `N${i}`, categoryId: 1, status: 'available' }) })).json();
      const order = (await app.api({ method: 'POST', url: '/v1/store/orders', headers: { ...auth, ...json }, payload: JSON.stringify({ petId: pet.id }) })).json();
      if (i % 3 === 0) await app.api({ method: 'POST', url: `/v1/store/orders/${order.id}/complete`, headers: auth });
      if (i % 3 === 1) await app.api({ method: 'POST', url: `/v1/store/orders/${order.id}/cancel`, headers: auth });
      await app.api({ method: 'PUT', url: `/v1/categories/${100 + i}`, headers: { ...auth, ...json }, payload: JSON.stringify({ name: `C${i}` }) });
    }
    // The orders left placed expire (a second), then every event is published.
    await within(WAIT_MS, async () => (await first.pool.query("SELECT 1 FROM orders WHERE status = 'placed'")).rowCount === 0, 100);
    const last = async () => Number((await first.pool.query<{ m: string }>('SELECT coalesce(max(id), 0) AS m FROM events')).rows[0]?.m);
    const position = async () => Number((await first.pool.query<{ p: string }>("SELECT position AS p FROM event_relays WHERE name = 'nats'")).rows[0]?.p ?? -1);
    await within(WAIT_MS, async () => (await position()) === (await last()), 100);

    const stored = (await first.pool.query<{ id: string; type: string; api_key_id: string | null }>('SELECT id, type, api_key_id FROM events ORDER BY id')).rows;
    expect(new Set(stored.map((e) => e.type))).toEqual(new Set(['pet.created', 'pet.updated', 'order.placed', 'order.completed', 'order.cancelled', 'order.expired', 'category.updated']));
    const info = await jsm.streams.info(STREAM);
    expect(info.config.subjects).toEqual([`${PREFIX}.>`]);
    // Re-publishes are dropped for an hour (JetStream's default: two minutes).
    expect(info.config.duplicate_window).toBe(nanos(60 * 60 * 1000));
    expect(info.state.messages).toBe(stored.length);
    const published = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) published.push(await jsm.streams.getMessage(STREAM, { seq }));
    expect(published.map((m) => m.header.get('Nats-Msg-Id'))).toEqual(stored.map((e) => e.id));
    for (const [n, message] of published.entries()) {
      const event = stored[n] as { id: string; type: string; api_key_id: string | null };
      expect(message.subject).toBe(`${PREFIX}.${event.type}`);
      // The body is the event as getEvent answers it to the key that may see it.
      const key = event.api_key_id === null || Number(event.api_key_id) === Number((await first.pool.query<{ id: string }>('SELECT min(id) AS id FROM api_keys')).rows[0]?.id) ? first.key : otherKey;
      const answer = await first.api({ method: 'GET', url: `/v1/events/${event.id}`, headers: { authorization: `Bearer ${key}` } });
      expect(message.json()).toEqual(answer.json());
    }
  });

  it('a re-publish of an id already in the stream is dropped by JetStream', async () => {
    const info = await jsm.streams.info(STREAM);
    const message = await jsm.streams.getMessage(STREAM, { seq: info.state.first_seq });
    const ack = await nc.jetstream().publish(message.subject, message.data, { msgID: message.header.get('Nats-Msg-Id') });
    expect(ack.duplicate).toBe(true);
    expect((await jsm.streams.info(STREAM)).state.messages).toBe(info.state.messages);
  });

  it('with NATS unreachable, requests are served and the events wait; the relay says so in the log', async () => {
    // A loopback port where nothing listens (port 1 is never NATS).
    const away = await buildTestApp({ url: first.url, pool: first.pool, env: { EVENTS_NATS_URL: 'nats://127.0.0.1:1', EVENTS_NATS_STREAM: STREAM, EVENTS_NATS_SUBJECT_PREFIX: PREFIX } });
    await second.app.close();
    await first.app.close();
    try {
      const before = Number((await first.pool.query<{ p: string }>("SELECT position AS p FROM event_relays WHERE name = 'nats'")).rows[0]?.p);
      const created = await away.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...first.auth, ...json }, payload: '{"name":"Waiting","categoryId":1}' });
      expect(created.statusCode).toBe(201);
      await within(WAIT_MS, async () => away.logs.some((line) => line.includes('events to NATS failed')), 50);
      expect(Number((await first.pool.query<{ p: string }>("SELECT position AS p FROM event_relays WHERE name = 'nats'")).rows[0]?.p)).toBe(before);
      expect(away.logs.join('')).not.toMatch(/password|postgres:\/\//);
    } finally {
      await away.app.close();
    }
  });

  it('started while NATS is away, publishes the events written before NATS answers', async () => {
    // NATS behind a loopback relay of the test's that closes every connection until it opens.
    const target = new URL(NATS_URL.includes('://') ? NATS_URL : `nats://${NATS_URL}`);
    let open = false;
    const sockets = new Set<net.Socket>();
    const gate = net.createServer((socket) => {
      sockets.add(socket);
      if (!open) return socket.destroy();
      const upstream = net.connect(Number(target.port || 4222), target.hostname);
      sockets.add(upstream);
      for (const side of [socket, upstream]) side.on('error', () => {}).on('close', () => [socket, upstream].forEach((s) => s.destroy()));
      socket.pipe(upstream).pipe(socket);
    });
    await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
    const port = (gate.address() as net.AddressInfo).port;
    const late = await buildTestApp({ env: { EVENTS_NATS_URL: `nats://127.0.0.1:${port}`, EVENTS_NATS_STREAM: AWAY_STREAM, EVENTS_NATS_SUBJECT_PREFIX: AWAY_PREFIX } });
    try {
      // The relay's row is made though NATS has not answered.
      await within(WAIT_MS, async () => (await late.pool.query("SELECT 1 FROM event_relays WHERE name = 'nats'")).rowCount === 1, 50);
      const created = await late.api({ method: 'POST', url: '/v1/pets', headers: { ...late.auth, ...json }, payload: '{"name":"Before NATS","categoryId":1}' });
      expect(created.statusCode).toBe(201);
      await within(WAIT_MS, async () => late.logs.some((line) => line.includes('events to NATS failed')), 50);
      open = true;
      const subject = `${AWAY_PREFIX}.pet.created`;
      const published = async () => (await jsm.streams.getMessage(AWAY_STREAM, { last_by_subj: subject }).catch(() => undefined))?.string();
      await within(WAIT_MS, async () => (await published())?.includes('"name":"Before NATS"') === true, 100);
    } finally {
      await late.close();
      sockets.forEach((s) => s.destroy());
      await new Promise((resolve) => gate.close(resolve));
    }
  });

  describe('turned on for a database that has events already', () => {
    let base: TestApp;
    beforeAll(async () => {
      base = await buildTestApp({ env: { RATE_LIMIT_MAX: '100000' } });
    });
    afterAll(async () => base?.close());
    const pet = async (name: string) => {
      const created = await base.api({ method: 'POST', url: '/v1/pets', headers: { ...base.auth, ...json }, payload: JSON.stringify({ name, categoryId: 1 }) });
      expect(created.statusCode).toBe(201);
      return Number((await base.pool.query<{ id: string }>("SELECT id FROM events WHERE type = 'pet.created' AND data::jsonb->>'id' = $1", [String(created.json().id)])).rows[0]?.id);
    };
    const position = async (name: string) => Number((await base.pool.query<{ p: string }>('SELECT position AS p FROM event_relays WHERE name = $1', [name])).rows[0]?.p ?? -1);
    const purged = async () => Number((await base.pool.query<{ p: string }>('SELECT purged_through AS p FROM events_retention')).rows[0]?.p);
    /** Every event made 40 days old (set-up), then an instance's retention runs (as it starts) until purged_through is `want`. */
    const purgeUntil = async (want: number) => {
      await base.pool.query("UPDATE events SET created_at = now() - interval '40 days'");
      const other = await buildTestApp({ url: base.url, pool: base.pool });
      try {
        await within(WAIT_MS, async () => (await purged()) === want, 50);
      } finally {
        await other.app.close();
      }
    };

    it('starts after the newest event: the history kept is not published', async () => {
      for (const name of ['Before 1', 'Before 2', 'Before 3']) await pet(name);
      const relaying = await buildTestApp({ url: base.url, pool: base.pool, env: { EVENTS_NATS_URL: NATS_URL, EVENTS_NATS_STREAM: LATE_STREAM, EVENTS_NATS_SUBJECT_PREFIX: LATE_PREFIX } });
      try {
        await within(WAIT_MS, async () => (await position('nats')) >= 0, 50);
        const after = await pet('After');
        await within(WAIT_MS, async () => (await position('nats')) === after, 50);
        const info = await jsm.streams.info(LATE_STREAM);
        expect(info.state.messages).toBe(1);
        expect((await jsm.streams.getMessage(LATE_STREAM, { seq: info.state.first_seq })).header.get('Nats-Msg-Id')).toBe(String(after));
      } finally {
        await relaying.app.close();
      }
    });

    it('retention keeps what the relay has not published while it runs, and not once it has not run for the retention period', async () => {
      // The relay ran a moment ago and is stopped now: events after its position are kept.
      const held = await position('nats');
      const later = await pet('Not published yet');
      await purgeUntil(held);
      expect((await base.api({ method: 'GET', url: `/v1/events/${later}`, headers: base.auth })).statusCode).toBe(200);
      // Its last run 31 days ago (set-up): it holds nothing back.
      await base.pool.query("UPDATE event_relays SET ran_at = now() - interval '31 days' WHERE name = 'nats'");
      await purgeUntil(later);
      expect((await base.api({ method: 'GET', url: `/v1/events/${later}`, headers: base.auth })).statusCode).toBe(404);
    });
  });
});
