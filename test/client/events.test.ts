// The typed client's surface for events and webhooks (contract 1.4.0): `listAllEvents`, the
// walk over a feed that has no last page, and `verifyWebhook`, which checks a delivery with
// the `standardwebhooks` library.
//
// - Over the real service (on 127.0.0.1, in process): the walk reads the events the
//   triggers wrote for the client's own changes, stops at the first empty page, and resumes
//   from its `cursor` with exactly what came since; the webhook endpoint methods.
// - With a fetch that answers as the contract says (as test/client/requests.test.ts does),
//   for what a real feed cannot be made to show on demand: a walk stopped mid-page, the
//   `type` filter repeated in the query.
// - verifyWebhook against deliveries signed by the library itself (never by our own code):
//   a valid one, a tampered body, a wrong secret, an old timestamp, two signatures after a
//   rotation.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnimalStoreError, createAnimalStoreClient, verifyWebhook, WEBHOOK_EVENT_TYPES, WebhookVerificationError, type AnimalStoreClient, type Event, type WebhookEvent } from '../../client/src/index.js';
import { within, WAIT_MS } from '../process.js';
import { listen, type ListeningApp } from '../support/wire.js';

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** A delivery as the service sends one: the event as JSON, signed by the library with each of `secrets`. */
function delivery(event: object, secrets: string[], at = new Date()) {
  const body = JSON.stringify(event);
  const id = String((event as { id: number }).id);
  const signature = secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' ');
  return { body, headers: { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature } };
}

const petCreated = { id: 41, type: 'pet.created', createdAt: '2026-11-26T10:00:00.000Z', data: { id: 7, name: 'Rex', categoryId: 2, status: 'available' } };

/** The WebhookVerificationError `verify` throws. */
function refusal(verify: () => unknown): WebhookVerificationError {
  try {
    verify();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return error as WebhookVerificationError;
  }
  return expect.fail('verified, but a WebhookVerificationError was expected');
}

describe('verifyWebhook', () => {
  const secret = newSecret();

  it('returns the typed event of a delivery signed by the standardwebhooks library with a whsec_ secret', () => {
    const { body, headers } = delivery(petCreated, [secret]);
    const event: WebhookEvent = verifyWebhook(secret, headers, body);
    expect(event).toEqual(petCreated);
    // The body as bytes, and the headers as fetch's Headers, in any case, verify the same.
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhook(secret, new Headers(upper), new TextEncoder().encode(body))).toEqual(petCreated);
    if (event.type === 'pet.created') expect(event.data.name).toBe('Rex');
  });

  it('refuses a tampered body', () => {
    const { body, headers } = delivery(petCreated, [secret]);
    const error = refusal(() => verifyWebhook(secret, headers, body.replace('"Rex"', '"Max"')));
    expect(error.reason).toBe('signature');
    expect(error.event).toBeUndefined();
  });

  it('refuses a delivery signed with another secret', () => {
    const { body, headers } = delivery(petCreated, [newSecret()]);
    expect(refusal(() => verifyWebhook(secret, headers, body)).reason).toBe('signature');
  });

  it('refuses an old timestamp (more than 5 minutes), and one from the future, although correctly signed', () => {
    const old = delivery(petCreated, [secret], new Date(Date.now() - 6 * 60_000));
    expect(refusal(() => verifyWebhook(secret, old.headers, old.body)).reason).toBe('timestamp');
    const ahead = delivery(petCreated, [secret], new Date(Date.now() + 6 * 60_000));
    expect(refusal(() => verifyWebhook(secret, ahead.headers, ahead.body)).reason).toBe('timestamp');
  });

  it('refuses a delivery whose id was changed (the id is signed)', () => {
    const { body, headers } = delivery(petCreated, [secret]);
    expect(refusal(() => verifyWebhook(secret, { ...headers, 'webhook-id': '42' }, body)).reason).toBe('signature');
  });

  it('refuses missing or repeated headers, and a secret that is not one', () => {
    const { body, headers } = delivery(petCreated, [secret]);
    const { 'webhook-signature': _dropped, ...unsigned } = headers;
    expect(refusal(() => verifyWebhook(secret, unsigned, body)).reason).toBe('headers');
    expect(refusal(() => verifyWebhook(secret, { ...headers, 'webhook-id': ['41', '41'] }, body)).reason).toBe('headers');
    expect(refusal(() => verifyWebhook('whsec_***', headers, body)).reason).toBe('secret');
  });

  it('after a rotation, a delivery carries two signatures and verifies with either secret', () => {
    const previous = newSecret();
    const { body, headers } = delivery(petCreated, [secret, previous]);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyWebhook(secret, headers, body)).toEqual(petCreated);
    expect(verifyWebhook(previous, headers, body)).toEqual(petCreated);
    expect(refusal(() => verifyWebhook(newSecret(), headers, body)).reason).toBe('signature');
  });

  it('a signed body of an unknown event type is refused as unknown_type with the event attached (answer 2xx and skip it)', () => {
    const future = { ...petCreated, type: 'pet.adopted' };
    const { body, headers } = delivery(future, [secret]);
    const error = refusal(() => verifyWebhook(secret, headers, body));
    expect(error.reason).toBe('unknown_type');
    expect(error.event).toEqual(future);
    const notAnEvent = delivery({ id: 3, hello: 'world' }, [secret]);
    expect(refusal(() => verifyWebhook(secret, notAnEvent.headers, notAnEvent.body)).reason).toBe('payload');
  });

  it('knows every event type of the contract', () => {
    expect(WEBHOOK_EVENT_TYPES).toEqual(['pet.created', 'pet.updated', 'pet.deleted', 'order.placed', 'order.completed', 'order.cancelled', 'order.expired', 'category.updated', 'category.deleted', 'import.finished']);
  });
});

describe('listAllEvents, over pages the contract describes', () => {
  const page = (events: object[], cursor: string) =>
    new Response(JSON.stringify(events), { status: 200, headers: { 'content-type': 'application/json', link: `</v1/events?limit=2&cursor=${cursor}>; rel="next"` } });
  const ev = (id: number) => ({ ...petCreated, id });

  function feedAnswering(pages: Response[]) {
    const urls: URL[] = [];
    const store = createAnimalStoreClient({
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'ask_test',
      fetch: async (input, init) => {
        urls.push(new URL(new Request(input, init).url));
        return (pages.shift() ?? page([], 'end')).clone();
      },
    });
    return { store, urls };
  }

  it('follows rel="next" until the first empty page, sends the type filter repeated, and keeps the last cursor', async () => {
    const { store, urls } = feedAnswering([page([ev(1), ev(2)], 'c2'), page([ev(3)], 'c3'), page([], 'c3')]);
    const feed = store.listAllEvents({ type: ['pet.created', 'order.placed'], limit: 2 });
    expect(feed.cursor).toBeUndefined();
    const seen: number[] = [];
    for await (const event of feed) seen.push(event.id);
    expect(seen).toEqual([1, 2, 3]);
    expect(urls).toHaveLength(3);
    expect(urls.map((u) => u.searchParams.getAll('type'))).toEqual(Array(3).fill(['pet.created', 'order.placed']));
    expect(urls.map((u) => u.searchParams.get('cursor'))).toEqual([null, 'c2', 'c3']);
    expect(feed.cursor).toBe('c3');
  });

  it('iterated again, goes on from its cursor; a walk stopped mid-page resumes at that page', async () => {
    const { store, urls } = feedAnswering([page([ev(1), ev(2)], 'c2'), page([ev(3), ev(4)], 'c4'), page([ev(3), ev(4)], 'c4'), page([], 'c4')]);
    const feed = store.listAllEvents({ limit: 2 });
    for await (const event of feed) if (event.id === 3) break;
    expect(feed.cursor).toBe('c2');
    const rest: number[] = [];
    for await (const event of feed) rest.push(event.id);
    expect(rest).toEqual([3, 4]);
    expect(urls.map((u) => u.searchParams.get('cursor'))).toEqual([null, 'c2', 'c2', 'c4']);
    // A later process resumes from a stored cursor.
    const later = feedAnswering([page([], 'c4')]);
    const resumed = later.store.listAllEvents({ cursor: 'c4', limit: 2 });
    for await (const _ of resumed) expect.fail('no event');
    expect(later.urls[0]?.searchParams.get('cursor')).toBe('c4');
    expect(resumed.cursor).toBe('c4');
  });
});

// Needs the events feed and webhook endpoints of the service (contract 1.4.0).
describe('the events feed and webhook endpoints, over the real service', () => {
  let t: ListeningApp;
  let store: AnimalStoreClient;

  beforeAll(async () => {
    t = await listen({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    store = createAnimalStoreClient({ baseUrl: `${t.origin}/v1`, apiKey: t.key });
  }, 60_000);
  afterAll(async () => t?.close());

  it('listAllEvents walks every event of the changes made, in order, stops at the first empty page, and resumes from its cursor with only what came since', async () => {
    const rex = (await store.createPet({ name: 'Rex', categoryId: 2, status: 'available' })).data;
    await store.putCategory(2, 'Dogs');
    const order = (await store.placeOrder({ petId: rex.id })).data;
    await store.cancelOrder(order.id);

    // A walk can stop short while a transaction of another database of the cluster, running
    // when a page's snapshot was taken, commits (docs/decisions/0001-append-order.md): it is
    // resumed from its cursor, as a client does, until it holds the six events.
    let feed = store.listAllEvents({ limit: 2 });
    const first: Event[] = [];
    await within(WAIT_MS, async () => {
      for await (const event of feed) first.push(event);
      if (first.length >= 6) return true;
      feed = store.listAllEvents({ limit: 2, cursor: feed.cursor });
      return false;
    });
    const types = first.map((e) => e.type);
    // Each operation's events in its order; within one transaction, in the order of its statements.
    expect(types.slice(0, 2)).toEqual(['pet.created', 'category.updated']);
    expect(types.slice(2, 4).sort()).toEqual(['order.placed', 'pet.updated']);
    expect(types.slice(4).sort()).toEqual(['order.cancelled', 'pet.updated']);
    expect(first.map((e) => e.id)).toEqual([...first.map((e) => e.id)].sort((a, b) => a - b));
    expect(first[0]?.data).toEqual(rex);
    expect(feed.cursor).toMatch(/./);

    await store.deletePet(rex.id);
    const since: Event[] = [];
    await within(WAIT_MS, async () => {
      const resumed = store.listAllEvents({ limit: 2, cursor: feed.cursor });
      for await (const event of resumed) since.push(event);
      return since.length > 0;
    });
    expect(since.map((e) => e.type)).toEqual(['pet.deleted']);
    expect(since[0]?.id).toBeGreaterThan(first.at(-1)?.id ?? Infinity);

    const onlyOrders: string[] = [];
    for await (const event of store.listAllEvents({ type: ['order.placed', 'order.cancelled'] })) onlyOrders.push(event.type);
    expect(onlyOrders).toEqual(['order.placed', 'order.cancelled']);
    expect((await store.getEvent(first[0]?.id ?? 0)).data).toEqual(first[0]);
  });

  it('webhook endpoints: created with a secret shown once, listed, changed, rotated, their deliveries listed, removed', async () => {
    const created = await store.createWebhookEndpoint({ url: 'http://127.0.0.1:9/hook', eventTypes: ['pet.created'], description: 'client test' });
    expect(created.response.status).toBe(201);
    expect(created.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const id = created.data.id;
    expect(created.response.headers.get('location')).toBe(`/v1/webhook-endpoints/${id}`);
    const listed = [];
    for await (const endpoint of store.listAllWebhookEndpoints()) listed.push(endpoint);
    expect(listed.map((e) => e.id)).toContain(id);
    expect(listed.find((e) => e.id === id)).not.toHaveProperty('secret');
    const changed = await store.updateWebhookEndpoint(id, { eventTypes: ['pet.created', 'pet.deleted'], enabled: false });
    expect(changed.data).toMatchObject({ id, eventTypes: ['pet.created', 'pet.deleted'], enabled: false });
    expect((await store.getWebhookEndpoint(id)).data).toEqual(changed.data);
    const rotated = await store.rotateWebhookEndpointSecret(id);
    expect(rotated.data.secret).not.toBe(created.data.secret);
    expect(rotated.data.previousSecretExpiresAt).toMatch(/Z$/);
    const deliveries = [];
    for await (const attempt of store.listAllWebhookDeliveries(id)) deliveries.push(attempt);
    expect(deliveries).toEqual([]);
    expect((await store.deleteWebhookEndpoint(id)).response.status).toBe(204);
    const gone = await store.getWebhookEndpoint(id).then(() => undefined, (error: unknown) => error);
    expect(gone).toBeInstanceOf(AnimalStoreError);
    expect((gone as AnimalStoreError).status).toBe(404);
  });
});
