// The events feed (listEvents, getEvent): each change has one event, written by whatever made
// it (an operation, the expiry job, SQL around the service), with `data` as the matching GET
// answers right after; a rolled-back change has none; who sees what; the type filter; the
// feed has no last page; retention (EVENT_RETENTION_DAYS) and the 410 for a cursor before it.
// Every answer is checked against the contract by `t.api`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendOrdered } from '../../src/db/append-order.js';
import { buildTestApp, keysSettled, type TestApp } from '../helper.js';
import { within, WAIT_MS } from '../process.js';

type Json = Record<string, any>;
interface Event {
  id: number;
  type: string;
  createdAt: string;
  data: Json;
}

let t: TestApp;
const json = { 'content-type': 'application/json' };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
/** Keys holding these scopes, made through createApiKey. */
const keys: Record<'other' | 'petsOnly' | 'ordersOnly' | 'neither', string> = { other: '', petsOnly: '', ordersOnly: '', neither: '' };

async function keyWith(scopes: string[], name: string): Promise<string> {
  const created = await t.api({ method: 'POST', url: '/v1/api-keys', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name, scopes }) });
  expect(created.statusCode, created.body).toBe(201);
  return created.json().secret as string;
}

beforeAll(async () => {
  // Orders expire a second after they are placed (the expiry job's events).
  t = await buildTestApp({ env: { ORDER_HOLD_SECONDS: '1', RATE_LIMIT_MAX: '100000' } });
  keys.other = await keyWith(['pets:read', 'pets:write', 'orders:read', 'orders:write'], 'other');
  keys.petsOnly = await keyWith(['pets:read'], 'pets only');
  keys.ordersOnly = await keyWith(['orders:read', 'orders:write', 'pets:write'], 'orders only');
  keys.neither = await keyWith(['pets:write', 'orders:write'], 'neither');
  await keysSettled(t.pool, async (key) => (await t.app.inject({ method: 'GET', url: '/v1/events', headers: bearer(key) })).statusCode !== 401);
});
afterAll(async () => t?.close());

/**
 * Waits until every event committed so far is final (docs/decisions/0001-append-order.md). A
 * page holds an event back while a writer that began before it was numbered is still in
 * flight: here the expiry job, every 500 ms, closing the orders these tests leave placed. A
 * test's own change has committed before it reads, so once this holds its events are in the
 * next pages; an event once final stays final.
 */
async function feedSettled(): Promise<void> {
  const settled = `SELECT coalesce(bool_and(${appendOrdered('events').isFinal()}), true) AS settled FROM events`;
  await within(WAIT_MS, async () => (await t.pool.query<{ settled: boolean }>(settled)).rows[0]?.settled === true, 10);
}

/** A reader of the feed: each call returns the events that came since the last (once those are final), following rel="next". */
function reader(key = t.key, query = '') {
  let next = `/v1/events?limit=100${query}`;
  return async (): Promise<Event[]> => {
    await feedSettled();
    const seen: Event[] = [];
    // An empty page ends the walk once it is empty again after the feed settled: a page can
    // stop short while a transaction of another database of the cluster, running when its
    // snapshot was taken, commits (docs/decisions/0001-append-order.md).
    for (let empty = 0; ; ) {
      const page = await t.api({ method: 'GET', url: next, headers: bearer(key) });
      expect(page.statusCode, page.body).toBe(200);
      const link = /^<([^>]+)>; rel="next"$/.exec(String(page.headers.link));
      expect(link, 'every page links to the next').not.toBeNull();
      const events = page.json() as Event[];
      if (events.length === 0) {
        if (++empty === 3) {
          next = link?.[1] as string;
          return seen;
        }
        await feedSettled();
        continue;
      }
      empty = 0;
      next = link?.[1] as string;
      seen.push(...events);
    }
  };
}

const get = async (url: string, key = t.key) => {
  const response = await t.api({ method: 'GET', url, headers: bearer(key) });
  expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
  return response.json() as Json;
};
const send = async (method: string, url: string, body?: unknown, key = t.key) => {
  const response = await t.api({ method, url, headers: { ...bearer(key), ...(body === undefined ? {} : json) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
  expect(response.statusCode, `${method} ${url}: ${response.body}`).toBeLessThan(300);
  return response.body ? (response.json() as Json) : {};
};
const shape = (events: Event[]) => events.map((e) => [e.type, e.data]);

describe('each change has one event, with the resource as the GET right after answers it', () => {
  it.each([
    [
      'createPet: pet.created',
      async () => {
        const pet = await send('POST', '/v1/pets', { name: 'Rex', categoryId: 2, status: 'available' });
        return [['pet.created', await get(`/v1/pets/${pet.id}`)]];
      },
    ],
    [
      'updatePet: pet.updated',
      async () => {
        const pet = await send('POST', '/v1/pets', { name: 'Max', categoryId: 2 });
        await t.api({ method: 'PATCH', url: `/v1/pets/${pet.id}`, headers: { ...t.auth, ...json }, payload: '{"name":"Maximilian","status":"sold"}' });
        return [
          ['pet.created', pet],
          ['pet.updated', await get(`/v1/pets/${pet.id}`)],
        ];
      },
    ],
    [
      'deletePet: pet.deleted, the pet as it was when removed',
      async () => {
        const pet = await send('POST', '/v1/pets', { name: 'Gone', categoryId: 3, status: 'available' });
        const before = await get(`/v1/pets/${pet.id}`);
        await send('DELETE', `/v1/pets/${pet.id}`);
        return [
          ['pet.created', before],
          ['pet.deleted', before],
        ];
      },
    ],
    [
      'placeOrder, completeOrder: order.placed, order.completed, and the pet pending, then sold',
      async () => {
        const pet = await send('POST', '/v1/pets', { name: 'Sold', categoryId: 1, status: 'available' });
        const order = await send('POST', '/v1/store/orders', { petId: pet.id });
        const placed = [await get(`/v1/pets/${pet.id}`), await get(`/v1/store/orders/${order.id}`)];
        await send('POST', `/v1/store/orders/${order.id}/complete`);
        // Each statement's events in the order of its writes: a placement holds the pet, then
        // stores the order; a close closes the order, then frees (or sells) the pet.
        return [
          ['pet.created', pet],
          ['pet.updated', placed[0]],
          ['order.placed', placed[1]],
          ['order.completed', await get(`/v1/store/orders/${order.id}`)],
          ['pet.updated', await get(`/v1/pets/${pet.id}`)],
        ];
      },
    ],
    [
      'cancelOrder: order.cancelled, and the pet available again',
      async () => {
        const pet = await send('POST', '/v1/pets', { name: 'Back', categoryId: 1, status: 'available' });
        const order = await send('POST', '/v1/store/orders', { petId: pet.id });
        const placed = [await get(`/v1/pets/${pet.id}`), await get(`/v1/store/orders/${order.id}`)];
        await send('POST', `/v1/store/orders/${order.id}/cancel`);
        return [
          ['pet.created', pet],
          ['pet.updated', placed[0]],
          ['order.placed', placed[1]],
          ['order.cancelled', await get(`/v1/store/orders/${order.id}`)],
          ['pet.updated', await get(`/v1/pets/${pet.id}`)],
        ];
      },
    ],
    [
      'the expiry job: order.expired, and the pet available again',
      async () => {
        const pet = await send('POST', '/v1/pets', { name: 'Lapsed', categoryId: 1, status: 'available' });
        const order = await send('POST', '/v1/store/orders', { petId: pet.id });
        const placed = [await get(`/v1/pets/${pet.id}`), await get(`/v1/store/orders/${order.id}`)];
        await within(WAIT_MS, async () => (await get(`/v1/store/orders/${order.id}`)).status === 'expired', 100);
        return [
          ['pet.created', pet],
          ['pet.updated', placed[0]],
          ['order.placed', placed[1]],
          ['order.expired', await get(`/v1/store/orders/${order.id}`)],
          ['pet.updated', await get(`/v1/pets/${pet.id}`)],
        ];
      },
    ],
    [
      'putCategory, deleteCategory: category.updated (named, renamed), category.deleted',
      async () => {
        await send('PUT', '/v1/categories/40', { name: 'Parrots' });
        const named = await get('/v1/categories/40');
        await send('PUT', '/v1/categories/40', { name: 'Birds' });
        const renamed = await get('/v1/categories/40');
        await send('DELETE', '/v1/categories/40');
        return [
          ['category.updated', named],
          ['category.updated', renamed],
          ['category.deleted', renamed],
        ];
      },
    ],
    [
      'SQL around the service: a pet inserted and changed, a category renamed',
      async () => {
        await send('PUT', '/v1/categories/41', { name: 'Fish' });
        const id = Number((await t.pool.query<{ id: string }>("INSERT INTO pets (name, category_id, status) VALUES ('Nemo', 41, 'available') RETURNING id")).rows[0]?.id);
        const inserted = await get(`/v1/pets/${id}`);
        await t.pool.query("UPDATE pets SET status = 'sold' WHERE id = $1", [id]);
        const sold = await get(`/v1/pets/${id}`);
        await t.pool.query("UPDATE categories SET name = 'Fishes' WHERE id = 41");
        return [
          ['category.updated', { id: 41, name: 'Fish' }],
          ['pet.created', inserted],
          ['pet.updated', sold],
          ['category.updated', await get('/v1/categories/41')],
        ];
      },
    ],
    [
      'placeOrder replayed with its Idempotency-Key: the one placement has its events, the replay none',
      async () => {
        const pet = await send('POST', '/v1/pets', { name: 'Once', categoryId: 1, status: 'available' });
        const place = () => t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json, 'idempotency-key': `once-${pet.id}` }, payload: JSON.stringify({ petId: pet.id }) });
        const [first, replay] = [await place(), await place()];
        expect(replay.body).toBe(first.body);
        return [
          ['pet.created', pet],
          ['pet.updated', await get(`/v1/pets/${pet.id}`)],
          ['order.placed', await get(`/v1/store/orders/${first.json().id}`)],
        ];
      },
    ],
    [
      'a change rolled back: no event',
      async () => {
        const client = await t.pool.connect();
        try {
          await client.query('BEGIN');
          await client.query("INSERT INTO pets (name, category_id, status) VALUES ('Never', 1, 'available')");
          await client.query("UPDATE categories SET name = 'Never' WHERE id = 41");
          await client.query('ROLLBACK');
        } finally {
          client.release();
        }
        return [];
      },
    ],
  ])('%s', async (_title, change) => {
    const since = reader();
    await since();
    const want = await change();
    const got = await since();
    expect(shape(got)).toEqual(want);
    // In ascending id, each readable alone, the same.
    expect(got.map((e) => e.id)).toEqual([...got.map((e) => e.id)].sort((a, b) => a - b));
    for (const event of got) expect(await get(`/v1/events/${event.id}`)).toEqual(event);
  });

  it('an event is stored as its change commits: createdAt is the time of the change', async () => {
    const since = reader();
    await since();
    const before = Date.now();
    await send('POST', '/v1/pets', { name: 'Clock', categoryId: 1 });
    const [event] = await since();
    expect(Math.abs(Date.parse(String(event?.createdAt)) - before)).toBeLessThan(60_000);
  });
});

describe('who sees what', () => {
  let mine: { pet: number; order: number };
  let theirs: { pet: number; order: number };
  const place = async (key: string) => {
    const pet = await send('POST', '/v1/pets', { name: 'Seen', categoryId: 1, status: 'available' }, key);
    const order = await send('POST', '/v1/store/orders', { petId: pet.id }, key);
    return { pet: pet.id as number, order: order.id as number };
  };
  const all = async (key: string) => reader(key)();
  const orderIds = (events: Event[]) => events.filter((e) => e.type.startsWith('order.')).map((e) => e.data.id as number);

  beforeAll(async () => {
    mine = await place(t.key);
    theirs = await place(keys.other);
  });

  it('a key sees its own order events and never another key’s; catalogue events from anyone', async () => {
    const events = await all(t.key);
    expect(orderIds(events)).toContain(mine.order);
    expect(orderIds(events)).not.toContain(theirs.order);
    expect(events.some((e) => e.type === 'pet.created' && e.data.id === theirs.pet)).toBe(true);
    const other = await all(keys.other);
    expect(orderIds(other)).toEqual([theirs.order]);
  });

  it('a key with orders:read and not pets:read sees only its order events', async () => {
    const placed = await place(keys.ordersOnly);
    const events = await all(keys.ordersOnly);
    expect(events.map((e) => e.type)).toEqual(['order.placed']);
    expect(events[0]?.data.id).toBe(placed.order);
  });

  it('a key with pets:read and not orders:read sees no order events', async () => {
    const events = await all(keys.petsOnly);
    expect(events.length).toBeGreaterThan(0);
    expect(events.filter((e) => !e.type.startsWith('pet.') && !e.type.startsWith('category.'))).toEqual([]);
  });

  it('a key with neither is 403 on both operations', async () => {
    for (const url of ['/v1/events', '/v1/events/1']) {
      const response = await t.api({ method: 'GET', url, headers: bearer(keys.neither) });
      expect(response.statusCode).toBe(403);
      expect(response.json().code).toBe('insufficient_scope');
    }
  });

  it('getEvent is 404, as for no event, for an event the key may not see', async () => {
    const events = await all(t.key);
    const theirOrderEvent = (await all(keys.other)).find((e) => e.data.id === theirs.order && e.type === 'order.placed') as Event;
    const catalogueEvent = events.find((e) => e.type === 'pet.created') as Event;
    const mineOrderEvent = events.find((e) => e.type === 'order.placed' && e.data.id === mine.order) as Event;
    const cases: [string, string, number][] = [
      ["another key's order event", t.key, theirOrderEvent.id],
      ['a catalogue event, to a key without pets:read', keys.ordersOnly, catalogueEvent.id],
      ['an order event, to a key without orders:read', keys.petsOnly, mineOrderEvent.id],
      ['no event', t.key, 9_000_000],
    ];
    for (const [title, key, id] of cases) {
      const response = await t.api({ method: 'GET', url: `/v1/events/${id}`, headers: bearer(key) });
      expect(response.statusCode, title).toBe(404);
      expect(response.json(), title).toEqual({ code: 'not_found', message: `Event ${id} does not exist`, status: 404 });
    }
  });
});

describe('the type filter', () => {
  it('keeps the types named, and its cursor is refused with other types', async () => {
    const since = reader(t.key, '&type=pet.deleted&type=category.deleted');
    await since();
    const pet = await send('POST', '/v1/pets', { name: 'Filtered', categoryId: 1 });
    await send('DELETE', `/v1/pets/${pet.id}`);
    await send('PUT', '/v1/categories/42', { name: 'Filtered' });
    await send('DELETE', '/v1/categories/42');
    expect((await since()).map((e) => e.type)).toEqual(['pet.deleted', 'category.deleted']);

    const first = await t.api({ method: 'GET', url: '/v1/events?limit=1&type=pet.created', headers: t.auth });
    const cursor = /cursor=([^&>]+)/.exec(String(first.headers.link))?.[1];
    const other = await t.api({ method: 'GET', url: `/v1/events?limit=1&type=pet.deleted&cursor=${cursor}`, headers: t.auth });
    expect(other.statusCode).toBe(400);
    expect(other.json().message).toBe('query parameter cursor: belongs to another type filter; start again without cursor');
  });
});

describe('the type filter, with order events', () => {
  it("keeps a key's own order events of the types named, and catalogue events of those types", async () => {
    const mine = reader(t.key, '&type=order.placed&type=pet.created');
    const theirs = reader(keys.ordersOnly, '&type=order.placed&type=pet.created');
    await mine();
    await theirs();
    const pet = await send('POST', '/v1/pets', { name: 'Typed', categoryId: 1, status: 'available' });
    const order = await send('POST', '/v1/store/orders', { petId: pet.id });
    const other = await send('POST', '/v1/pets', { name: 'Typed too', categoryId: 1, status: 'available' });
    const their = await send('POST', '/v1/store/orders', { petId: other.id }, keys.ordersOnly);
    expect((await mine()).map((e) => [e.type, e.data.id])).toEqual([
      ['pet.created', pet.id],
      ['order.placed', order.id],
      ['pet.created', other.id],
    ]);
    expect((await theirs()).map((e) => [e.type, e.data.id])).toEqual([['order.placed', their.id]]);
  });
});

describe('the feed has no last page', () => {
  it('every page links to the next, an empty one to where it started; the link later returns what came since', async () => {
    let next = '/v1/events?limit=5';
    for (;;) {
      const page = await t.api({ method: 'GET', url: next, headers: t.auth });
      expect(page.headers.link).toMatch(/^<\/v1\/events\?limit=5&cursor=[^>]+>; rel="next"$/);
      next = /^<([^>]+)>/.exec(String(page.headers.link))?.[1] as string;
      if ((page.json() as Event[]).length === 0) break;
    }
    const again = await t.api({ method: 'GET', url: next, headers: t.auth });
    expect(again.json()).toEqual([]);
    expect(again.headers.link).toBe(`<${next}>; rel="next"`);
    const pet = await send('POST', '/v1/pets', { name: 'Later', categoryId: 1 });
    await feedSettled();
    const later = await t.api({ method: 'GET', url: next, headers: t.auth });
    expect(shape(later.json())).toEqual([['pet.created', await get(`/v1/pets/${pet.id}`)]]);
    expect(later.headers.link).not.toBe(again.headers.link);
  });

  it('a first page with no event at all links too', async () => {
    const empty = await t.api({ method: 'GET', url: '/v1/events?type=category.deleted&type=order.expired&limit=3', headers: bearer(keys.petsOnly) });
    expect(empty.statusCode).toBe(200);
    expect(empty.headers.link).toMatch(/^<\/v1\/events\?limit=3&type=category.deleted&type=order.expired&cursor=[^>]+>; rel="next"$/);
  });
});

describe('retention (EVENT_RETENTION_DAYS)', () => {
  it('deletes events older than the setting, oldest first; a cursor before them is 410; getEvent 404', async () => {
    // Three events: the first two 40 and 10 days old, the third new.
    const ids: number[] = [];
    for (const name of ['Old', 'Older than 7 days', 'New']) {
      const pet = await send('POST', '/v1/pets', { name, categoryId: 1 });
      const { rows } = await t.pool.query<{ id: string }>("SELECT id FROM events WHERE type = 'pet.created' AND data::jsonb->>'id' = $1", [String(pet.id)]);
      ids.push(Number(rows[0]?.id));
    }
    const [a, b, c] = ids as [number, number, number];
    // A walk that had read up to just before `a`.
    const beforeA = await cursorAfter(a - 1);
    const atA = await cursorAfter(a);
    await t.pool.query("UPDATE events SET created_at = now() - interval '40 days' WHERE id <= $1", [a]);
    await t.pool.query("UPDATE events SET created_at = now() - interval '10 days' WHERE id > $1 AND id <= $2", [a, b]);

    // An instance with the default (30 days) purges at its start: every event up to `a`
    // (once the relays have passed them).
    await relaysPast(c);
    const other = await buildTestApp({ url: t.url, pool: t.pool });
    try {
      await within(WAIT_MS, async () => Number((await t.pool.query<{ p: string }>('SELECT purged_through AS p FROM events_retention')).rows[0]?.p) === a, 50);
    } finally {
      await other.app.close();
    }
    expect((await t.pool.query('SELECT 1 FROM events WHERE id <= $1', [a])).rowCount).toBe(0);
    expect((await t.pool.query('SELECT 1 FROM events WHERE id > $1 AND id <= $2', [a, b])).rowCount).toBeGreaterThan(0);

    const expired = await t.api({ method: 'GET', url: `/v1/events?limit=100&cursor=${beforeA}`, headers: t.auth });
    expect(expired.statusCode).toBe(410);
    expect(expired.json()).toEqual({ code: 'cursor_expired', message: 'This cursor points before the oldest event kept (events are kept 30 days): start again without cursor', status: 410 });
    const gone = await t.api({ method: 'GET', url: `/v1/events/${a}`, headers: t.auth });
    expect(gone.statusCode).toBe(404);
    // A new walk starts at the oldest event kept.
    const fresh = await t.api({ method: 'GET', url: '/v1/events?limit=1', headers: t.auth });
    expect((fresh.json() as Event[])[0]?.id).toBe(a + 1);
    // A cursor at the boundary is not expired: nothing it would return is gone.
    const atBoundary = await t.api({ method: 'GET', url: `/v1/events?limit=100&cursor=${atA}`, headers: t.auth });
    expect(atBoundary.statusCode).toBe(200);

    // With EVENT_RETENTION_DAYS=7, the 10-day-old ones go too, and the new one stays.
    const weekly = await buildTestApp({ url: t.url, pool: t.pool, env: { EVENT_RETENTION_DAYS: '7' } });
    try {
      await within(WAIT_MS, async () => Number((await t.pool.query<{ p: string }>('SELECT purged_through AS p FROM events_retention')).rows[0]?.p) === b, 50);
      const message = (await weekly.app.inject({ method: 'GET', url: `/v1/events?cursor=${atA}`, headers: t.auth })).json().message;
      expect(message).toBe('This cursor points before the oldest event kept (events are kept 7 days): start again without cursor');
    } finally {
      await weekly.app.close();
    }
    expect((await t.api({ method: 'GET', url: `/v1/events/${c}`, headers: t.auth })).statusCode).toBe(200);
  });
});

describe('retention and a cursor held by a key that sees few events', () => {
  // A database of its own: its feed starts empty.
  let u: TestApp;
  const purgedOf = async () => Number((await u.pool.query<{ p: string }>('SELECT purged_through AS p FROM events_retention')).rows[0]?.p);
  const newestEvent = async () => Number((await u.pool.query<{ m: string }>('SELECT coalesce(max(id), 0) AS m FROM events')).rows[0]?.m);
  /** Every event so far made 40 days old (set-up), then an instance's retention (it runs as the instance starts) deletes them all. */
  const ageAndPurge = async () => {
    const last = await newestEvent();
    await relaysPast(last, u.pool);
    await u.pool.query("UPDATE events SET created_at = now() - interval '40 days' WHERE id <= $1", [last]);
    const other = await buildTestApp({ url: u.url, pool: u.pool });
    try {
      await within(WAIT_MS, async () => (await purgedOf()) === last, 50);
    } finally {
      await other.app.close();
    }
  };
  const link = (response: { headers: Record<string, unknown> }) => /^<([^>]+)>; rel="next"$/.exec(String(response.headers.link))?.[1] as string;
  const makeKey = async (scopes: string[], name: string) => {
    const created = await u.api({ method: 'POST', url: '/v1/api-keys', headers: { ...u.auth, ...json }, payload: JSON.stringify({ name, scopes }) });
    expect(created.statusCode, created.body).toBe(201);
    return created.json().secret as string;
  };
  const placeOrder = async (key: string) => {
    const pet = await u.api({ method: 'POST', url: '/v1/pets', headers: { ...u.auth, ...json }, payload: JSON.stringify({ name: 'Ordered', categoryId: 1, status: 'available' }) });
    const order = await u.api({ method: 'POST', url: '/v1/store/orders', headers: { ...bearer(key), ...json }, payload: JSON.stringify({ petId: pet.json().id }) });
    expect(order.statusCode, order.body).toBe(201);
  };

  beforeAll(async () => {
    u = await buildTestApp({ env: { RATE_LIMIT_MAX: '100000' } });
  });
  afterAll(async () => u?.close());

  it('a link saved from an empty page is 410 once events the key would have read are deleted', async () => {
    const buyer = await makeKey(['orders:read', 'orders:write'], 'buyer');
    await keysSettled(u.pool, async (key) => (await u.app.inject({ method: 'GET', url: '/v1/events', headers: bearer(key) })).statusCode !== 401);
    const empty = await u.api({ method: 'GET', url: '/v1/events?limit=10', headers: bearer(buyer) });
    expect(empty.json()).toEqual([]);
    const saved = link(empty);
    // The key places an order; its events are deleted before the client comes back.
    await placeOrder(buyer);
    await ageAndPurge();
    const back = await u.api({ method: 'GET', url: saved, headers: bearer(buyer) });
    expect(back.statusCode, back.body).toBe(410);
    expect(back.json().code).toBe('cursor_expired');
    // A walk started again is served.
    expect((await u.api({ method: 'GET', url: '/v1/events?limit=10', headers: bearer(buyer) })).statusCode).toBe(200);
  });

  it('a client that keeps reading is never 410 for events it could not see', async () => {
    const reader = await makeKey(['pets:read'], 'catalogue reader');
    const other = await makeKey(['orders:read', 'orders:write'], 'other buyer');
    await keysSettled(u.pool, async (key) => (await u.app.inject({ method: 'GET', url: '/v1/events', headers: bearer(key) })).statusCode !== 401);
    // The reader reads a catalogue event; then only another key's orders happen (each order
    // also changes a pet: those it reads too), and then only those of a key it cannot see.
    const created = await u.api({ method: 'POST', url: '/v1/pets', headers: { ...u.auth, ...json }, payload: '{"name":"Seen","categoryId":1}' });
    expect(created.statusCode).toBe(201);
    let next = '/v1/events?limit=100&type=pet.created';
    const poll = async () => {
      const page = await u.api({ method: 'GET', url: next, headers: bearer(reader) });
      expect(page.statusCode, page.body).toBe(200);
      next = link(page);
      return page.json() as Event[];
    };
    expect((await poll()).map((e) => e.data.id)).toContain(created.json().id);
    for (let i = 0; i < 3; i++) await placeOrder(other);
    await poll();
    // Every event is deleted now, the ones the reader read and the ones it had no reason to.
    await ageAndPurge();
    expect(await poll()).toEqual([]);
    const pet = await u.api({ method: 'POST', url: '/v1/pets', headers: { ...u.auth, ...json }, payload: '{"name":"Later","categoryId":1}' });
    expect((await poll()).map((e) => e.data.id)).toEqual([pet.json().id]);
  });
});

describe('retention never moves past an event that is not final', () => {
  const purged = async () => Number((await t.pool.query<{ p: string }>('SELECT purged_through AS p FROM events_retention')).rows[0]?.p);
  /** Starts an instance on the database (its retention job runs once as it starts) and waits until purged_through is `want`. */
  const purgeUntil = async (want: number) => {
    await relaysPast(want);
    const other = await buildTestApp({ url: t.url, pool: t.pool });
    try {
      await within(WAIT_MS, async () => (await purged()) === want, 50);
    } finally {
      await other.app.close();
    }
  };
  const newEvent = async (name: string) => {
    const pet = await send('POST', '/v1/pets', { name, categoryId: 1 });
    return Number((await t.pool.query<{ id: string }>("SELECT id FROM events WHERE type = 'pet.created' AND data::jsonb->>'id' = $1", [String(pet.id)])).rows[0]?.id);
  };

  it('an open transaction holding an event stops the purge before the events after it; committed, they follow', async () => {
    const before = await newEvent('Before');
    const open = await t.pool.connect();
    try {
      await open.query('BEGIN');
      await open.query("INSERT INTO pets (name, category_id) VALUES ('Open', 1)");
      const held = Number((await open.query<{ id: string }>("SELECT id FROM events WHERE data::jsonb->>'name' = 'Open'")).rows[0]?.id);
      const after = await newEvent('After');
      expect(held).toBeGreaterThan(before);
      expect(after).toBeGreaterThan(held);
      await t.pool.query("UPDATE events SET created_at = now() - interval '40 days' WHERE id <= $1", [after]);
      await purgeUntil(before);
      expect((await t.pool.query('SELECT 1 FROM events WHERE id = $1', [after])).rowCount).toBe(1);
      await open.query("UPDATE events SET created_at = now() - interval '40 days' WHERE id = $1", [held]);
      await open.query('COMMIT');
      await purgeUntil(after);
    } finally {
      open.release();
    }
    expect((await t.pool.query('SELECT 1 FROM events WHERE id <= $1', [await purged()])).rowCount).toBe(0);
  });

  it('thousands of old events go in one run, a batch at a time', async () => {
    await t.pool.query("INSERT INTO pets (name, category_id) SELECT 'Bulk ' || i, 1 FROM generate_series(1, 2500) AS i");
    const last = Number((await t.pool.query<{ m: string }>('SELECT max(id) AS m FROM events')).rows[0]?.m);
    await t.pool.query("UPDATE events SET created_at = now() - interval '40 days' WHERE id <= $1", [last]);
    await purgeUntil(last);
    expect((await t.pool.query('SELECT 1 FROM events')).rowCount).toBe(0);
  });
});

/** Waits until every relay that retention waits for (NATS's; none: at once) has handled the events up to `id`. */
async function relaysPast(id: number, pool = t.pool): Promise<void> {
  await within(WAIT_MS, async () => Number((await pool.query<{ p: string }>('SELECT coalesce(min(position), 9007199254740991) AS p FROM event_relays WHERE holds_retention')).rows[0]?.p) >= id, 50);
}

/** The cursor a walk of listEvents (no filter) holds after reading up to event `id`, taken by following pages. */
async function cursorAfter(id: number): Promise<string> {
  const visible = "(api_key_id IS NULL OR api_key_id = (SELECT min(id) FROM api_keys))";
  let cursor = '';
  let after = 0;
  for (;;) {
    const { rows } = await t.pool.query<{ n: string }>(`SELECT count(*) AS n FROM events WHERE id > $1 AND id <= $2 AND ${visible}`, [after, id]);
    const n = Math.min(100, Number(rows[0]?.n));
    if (n === 0) return cursor;
    const page = await t.api({ method: 'GET', url: `/v1/events?limit=${n}${cursor ? `&cursor=${cursor}` : ''}`, headers: t.auth });
    expect(page.statusCode, page.body).toBe(200);
    after = (page.json() as Event[]).at(-1)?.id as number;
    cursor = /cursor=([^&>]+)/.exec(String(page.headers.link))?.[1] as string;
  }
}
