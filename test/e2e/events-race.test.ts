// The listEvents promise, tried as clients meet it: "every event the key may see, exactly
// once, while events are being written on several instances". Two service processes share
// one database; writers create pets and place, complete, cancel and let expire orders (held
// one second) through both, with two keys; readers walk the feed through both instances,
// two per key, from the first page, following rel="next" until the writing has ended and a
// page comes back empty.
//
// Judged by what was committed, read back after the run: every pet, order and order
// transition in the tables (and every 2xx a writer got) has exactly one event, with the
// resource as the tables hold it; and each reader saw each event its key may see exactly
// once, in ascending id, and none other.
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { closePool, createApiKey, createTestDatabase, testPool } from '../helper.js';
import { startServer, within, WAIT_MS, type ServerProcess } from '../process.js';

const WRITERS = 8; // half per key
const READERS_PER_KEY = 2;
const WRITE_FOR_MS = 8_000;

interface Event {
  id: number;
  type: string;
  createdAt: string;
  data: Record<string, unknown> & { id: number };
}

let database: { url: string; drop: () => Promise<void> };
let db: pg.Pool;
let servers: ServerProcess[] = [];
const keys: { key: string; id: number }[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  db = testPool(database.url, 2);
  keys.push(await createApiKey(db, 'writer A'), await createApiKey(db, 'writer B'));
  const env = {
    DATABASE_URL: database.url,
    ORDER_HOLD_SECONDS: '1',
    RATE_LIMIT_MAX: '10000000',
    RATE_LIMIT_ANONYMOUS_MAX: '10000000',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    DB_CONNECT_TIMEOUT_MS: '10000',
  };
  servers = await Promise.all([startServer(env, 90_000), startServer(env, 90_000)]);
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGKILL')));
  if (db) await closePool(db);
  await database?.drop();
});

/** What writers were answered 2xx: pets created, orders placed, orders closed (id → status). */
const answered = { pets: new Set<number>(), orders: new Set<number>(), closed: new Map<number, string>() };

async function call(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any; link: string | null }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined, link: response.headers.get('link') };
}

async function writer(n: number, until: number): Promise<void> {
  const key = keys[n % 2]?.key as string;
  for (let i = 0; performance.now() < until; i++) {
    const base = (k: number) => servers[(n + i + k) % servers.length]?.url as string;
    const pet = await call(base(0), key, 'POST', '/v1/pets', { name: `W${n}-${i}`, categoryId: 1 + (i % 3), status: 'available' });
    expect(pet.status).toBe(201);
    answered.pets.add(pet.json.id);
    const order = await call(base(1), key, 'POST', '/v1/store/orders', { petId: pet.json.id });
    expect(order.status).toBe(201);
    answered.orders.add(order.json.id);
    // One in three completed, one cancelled, one left to expire.
    const action = ['complete', 'cancel', undefined][(n + i) % 3];
    if (!action) continue;
    const closed = await call(base(0), key, 'POST', `/v1/store/orders/${order.json.id}/${action}`);
    if (closed.status === 200) answered.closed.set(order.json.id, closed.json.status);
    else expect(closed.json.code, JSON.stringify(closed.json)).toBe('order_closed'); // expired first
  }
}

/** Walks the feed from the start through both instances until `finished()` and an empty page; every event, in the order seen. */
async function reader(n: number, key: string, finished: () => boolean): Promise<Event[]> {
  const seen: Event[] = [];
  let next = `/v1/events?limit=${1 + ((n * 7) % 20)}`;
  for (let i = 0; ; i++) {
    const done = finished();
    const base = servers[(n + i) % servers.length]?.url as string;
    const page = await call(base, key, 'GET', next);
    expect(page.status, JSON.stringify(page.json)).toBe(200);
    const events = page.json as Event[];
    seen.push(...events);
    const link = /^<([^>]+)>; rel="next"$/.exec(String(page.link));
    expect(link, 'every page links to the next').not.toBeNull();
    next = link?.[1] as string;
    if (events.length === 0) {
      if (done) return seen;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

it('every committed change has exactly one event, and every reader sees each event it may see exactly once', async () => {
  const until = performance.now() + WRITE_FOR_MS;
  let finished = false;
  const readers = keys.flatMap(({ key }, k) => Array.from({ length: READERS_PER_KEY }, (_, r) => reader(k * READERS_PER_KEY + r, key, () => finished)));
  await Promise.all(Array.from({ length: WRITERS }, (_, n) => writer(n, until)));
  // The orders left placed expire (the expiry job, on both instances); then nothing writes.
  await within(WAIT_MS, async () => (await db.query("SELECT 1 FROM orders WHERE status = 'placed'")).rowCount === 0, 100);
  finished = true;
  const walks = await Promise.all(readers);

  // What was committed.
  const pets = (await db.query<{ id: string; as_json: string }>('SELECT id, pet_json(pets) AS as_json FROM pets ORDER BY id')).rows;
  const orders = (await db.query<{ id: string; api_key_id: string; pet_id: string; status: string; json: string }>(
    'SELECT id, api_key_id, pet_id, status, order_json(id, pet_id, status, placed_at, expires_at, closed_at) AS json FROM orders ORDER BY id',
  )).rows;
  const events = (await db.query<{ id: string; type: string; api_key_id: string | null; data: string }>('SELECT id, type, api_key_id, data FROM events ORDER BY id')).rows;
  expect(answered.pets.size).toBeGreaterThan(10);
  expect(new Set(orders.map((o) => o.status))).toEqual(new Set(['completed', 'cancelled', 'expired']));

  // The writers' 2xx answers are in the tables.
  const petIds = new Set(pets.map((p) => Number(p.id)));
  const orderStatus = new Map(orders.map((o) => [Number(o.id), o.status]));
  for (const id of answered.pets) expect(petIds.has(id), `pet ${id}`).toBe(true);
  for (const id of answered.orders) expect(orderStatus.has(id), `order ${id}`).toBe(true);
  for (const [id, status] of answered.closed) expect(orderStatus.get(id), `order ${id}`).toBe(status);

  // Exactly one event per change: one pet.created per pet, one order.placed and one closing
  // event per order (its key's, with the order as stored), and the pet's status changes.
  const count = (type: string, id: number) => events.filter((e) => e.type === type && JSON.parse(e.data).id === id).length;
  for (const pet of pets) {
    expect(count('pet.created', Number(pet.id)), `pet ${pet.id}`).toBe(1);
    const held = orders.filter((o) => o.pet_id === pet.id).length;
    expect(count('pet.updated', Number(pet.id)), `pet ${pet.id}: held, then freed or sold`).toBe(2 * held);
  }
  for (const order of orders) {
    const own = events.filter((e) => e.type.startsWith('order.') && JSON.parse(e.data).id === Number(order.id));
    expect(own.map((e) => e.type), `order ${order.id}`).toEqual(['order.placed', `order.${order.status}`]);
    for (const e of own) expect(e.api_key_id).toBe(order.api_key_id);
    expect(JSON.parse(own[1]?.data as string)).toEqual(JSON.parse(order.json));
  }
  expect(events.length).toBe(pets.length + 2 * orders.length + 2 * orders.length);

  // Each reader: every event its key may see, once, in ascending id; nothing else.
  for (const [n, walk] of walks.entries()) {
    const key = keys[Math.floor(n / READERS_PER_KEY)] as { id: number };
    const visible = events.filter((e) => e.api_key_id === null || Number(e.api_key_id) === key.id).map((e) => Number(e.id));
    const ids = walk.map((e) => e.id);
    expect(ids, `reader ${n}: ascending, no repeats`).toEqual([...new Set(ids)].sort((a, b) => a - b));
    expect(ids, `reader ${n}: every event its key may see, and no other`).toEqual(visible);
  }
}, 180_000);
