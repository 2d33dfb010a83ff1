// The store (contract 1.2.0): placeOrder, getOrder, cancelOrder, completeOrder, listOrders,
// getInventory, and what they do to pets. Every answer goes through `t.api`, which checks
// it against the contract. Races between instances are in test/e2e/orders.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, countPetsByStatus, createApiKey, keysSettled, recordQueries, lapseOrder, type TestApp } from '../helper.js';

let t: TestApp;
let other: Record<string, string>;
beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '1000000' } });
  const { key } = await createApiKey(t.pool, 'another client');
  other = { authorization: `Bearer ${key}` };
  await keysSettled(t.pool, async (k) => (await t.app.inject({ method: 'GET', url: '/v1/store/inventory', headers: { authorization: `Bearer ${k}` } })).statusCode === 200);
});
afterAll(async () => t.close());

const json = { 'content-type': 'application/json' };
type Status = 'available' | 'pending' | 'sold' | null;

const newPet = async (status: Status = 'available'): Promise<number> =>
  Number((await t.pool.query<{ id: string }>('INSERT INTO pets (name, category_id, status) VALUES ($1, 1, $2) RETURNING id', ['Stock', status])).rows[0]?.id);
const petStatus = async (id: number): Promise<Status | undefined> => (await t.pool.query<{ status: Status }>('SELECT status FROM pets WHERE id = $1', [id])).rows[0]?.status;
const place = (petId: unknown, headers = t.auth) => t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...headers, ...json }, payload: JSON.stringify({ petId }) });
const action = (id: number | string, what: 'cancel' | 'complete', headers = t.auth) => t.api({ method: 'POST', url: `/v1/store/orders/${id}/${what}`, headers });
const getOrder = (id: number | string, headers = t.auth) => t.api({ method: 'GET', url: `/v1/store/orders/${id}`, headers });
/** Everything stored of orders and pets, to show that a refused request changed nothing. */
const stored = async () => ({
  orders: (await t.pool.query('SELECT id, status, pet_id, closed_at FROM orders ORDER BY id')).rows,
  pets: (await t.pool.query('SELECT id, status FROM pets ORDER BY id')).rows,
});

describe('placeOrder', () => {
  it('places an order for an available pet: 201 with the Order and Location; the pet is pending', async () => {
    const petId = await newPet();
    const placed = await place(petId);
    expect(placed.statusCode).toBe(201);
    const order = placed.json();
    expect(order).toEqual({ id: expect.any(Number), petId, status: 'placed', placedAt: expect.any(String), expiresAt: expect.any(String) });
    expect(placed.headers.location).toBe(`/v1/store/orders/${order.id}`);
    // 15 minutes by default (ORDER_HOLD_SECONDS=900).
    expect(Date.parse(order.expiresAt) - Date.parse(order.placedAt)).toBe(900_000);
    expect(await petStatus(petId)).toBe('pending');
  });

  it('listPets?status=available stops listing the pet as soon as its order is placed', async () => {
    const petId = await newPet();
    const listed = async () => ((await t.api({ method: 'GET', url: `/v1/pets?status=available&id=${petId}`, headers: t.auth })).json() as { id: number }[]).map((p) => p.id);
    expect(await listed()).toEqual([petId]);
    expect((await place(petId)).statusCode).toBe(201);
    expect(await listed()).toEqual([]);
  });

  it.each([
    ['pending', { given: 'pending' as Status, want: (id: number) => `Pet ${id} is pending, not available: only an available animal can be ordered (listPets with status=available lists them; updatePet with {"status":"available"} makes one available that no placed order holds)` }],
    ['sold', { given: 'sold' as Status, want: (id: number) => `Pet ${id} is sold, not available: only an available animal can be ordered (listPets with status=available lists them; updatePet with {"status":"available"} makes one available that no placed order holds)` }],
    ['without a status', { given: null, want: (id: number) => `Pet ${id} has no status, so it is not available: only an available animal can be ordered (listPets with status=available lists them; updatePet with {"status":"available"} makes one available that no placed order holds)` }],
  ])('a pet that is %s is 409 pet_not_available, naming its status', async (_title, { given, want }) => {
    const petId = await newPet(given);
    const before = await stored();
    const refused = await place(petId);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ code: 'pet_not_available', message: want(petId), status: 409 });
    expect(await stored()).toEqual(before);
  });

  it('a pet already held by an order is 409', async () => {
    const petId = await newPet();
    expect((await place(petId)).statusCode).toBe(201);
    expect((await place(petId)).json()).toMatchObject({ code: 'pet_not_available', message: `Pet ${petId} is pending, not available: only an available animal can be ordered (listPets with status=available lists them; updatePet with {"status":"available"} makes one available that no placed order holds)` });
  });

  it('no pet with that id is 422 pet_not_found', async () => {
    const before = await stored();
    const refused = await place(987_654_321);
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toEqual({ code: 'pet_not_found', message: 'Pet 987654321 does not exist', status: 422 });
    expect(await stored()).toEqual(before);
  });

  it.each([
    ['no petId', { given: '{}', field: '/petId', rule: 'required' }],
    ['an unknown field', { given: '{"petId":1,"quantity":2}', field: '/quantity', rule: 'additionalProperties' }],
    ['petId as a string', { given: '{"petId":"1"}', field: '/petId', rule: 'type' }],
    ['petId 0', { given: '{"petId":0}', field: '/petId', rule: 'minimum' }],
    ['petId 2^53', { given: '{"petId":9007199254740992}', field: '/petId', rule: 'maximum' }],
    ['petId 1.5', { given: '{"petId":1.5}', field: '/petId', rule: 'type' }],
    ['an array', { given: '[1]', field: '', rule: 'type' }],
  ])('a body with %s is 400 naming the field, and nothing changes', async (_title, { given, field, rule }) => {
    const before = await stored();
    const refused = await t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: given });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 'bad_request', status: 400, details: [expect.objectContaining({ location: 'body', field, rule })] });
    expect(await stored()).toEqual(before);
  });

  it.each([
    ['no body', { headers: {}, payload: undefined, status: 400 }],
    ['malformed JSON', { headers: json, payload: '{"petId":', status: 400 }],
    ['a text body', { headers: { 'content-type': 'text/plain' }, payload: 'petId=1', status: 415 }],
  ])('%s is a %s, and nothing changes', async (_title, { headers, payload, status }) => {
    const before = await stored();
    const refused = await t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...headers }, ...(payload !== undefined ? { payload } : {}) });
    expect(refused.statusCode).toBe(status);
    expect(await stored()).toEqual(before);
  });
});

describe('getOrder, cancelOrder and completeOrder', () => {
  it('getOrder answers the order; after completing, it reads completed with closedAt, and the pet is sold', async () => {
    const petId = await newPet();
    const order = (await place(petId)).json();
    expect((await getOrder(order.id)).json()).toEqual(order);
    const completed = await action(order.id, 'complete');
    expect(completed.statusCode).toBe(200);
    expect(completed.json()).toEqual({ ...order, status: 'completed', closedAt: expect.any(String) });
    expect((await getOrder(order.id)).json()).toEqual(completed.json());
    expect(await petStatus(petId)).toBe('sold');
  });

  it('cancelling makes the order cancelled and the pet available again, which can then be ordered', async () => {
    const petId = await newPet();
    const order = (await place(petId)).json();
    const cancelled = await action(order.id, 'cancel');
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ id: order.id, status: 'cancelled', closedAt: expect.any(String) });
    expect(await petStatus(petId)).toBe('available');
    expect((await place(petId)).statusCode).toBe(201);
  });

  it.each([
    ['completed, then cancelled', { first: 'complete' as const, then: 'cancel' as const, status: 'completed', pet: 'sold' }],
    ['completed, then completed again', { first: 'complete' as const, then: 'complete' as const, status: 'completed', pet: 'sold' }],
    ['cancelled, then completed', { first: 'cancel' as const, then: 'complete' as const, status: 'cancelled', pet: 'available' }],
    ['cancelled, then cancelled again', { first: 'cancel' as const, then: 'cancel' as const, status: 'cancelled', pet: 'available' }],
  ])('an order %s: 409 order_closed naming its status, and nothing changes', async (_title, { first, then, status, pet }) => {
    const petId = await newPet();
    const order = (await place(petId)).json();
    expect((await action(order.id, first)).statusCode).toBe(200);
    const before = await stored();
    const refused = await action(order.id, then);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ code: 'order_closed', message: `Order ${order.id} is ${status}, not placed: only a placed order can be completed or cancelled`, status: 409 });
    expect(await stored()).toEqual(before);
    expect(await petStatus(petId)).toBe(pet);
  });

  it.each([['complete' as const], ['cancel' as const]])(
    'to %s a placed order past its expiresAt is 409 expired: it is marked expired and its pet is available',
    async (what) => {
      const petId = await newPet();
      const order = (await place(petId)).json();
      // Past its expiresAt, before the expiry job has run.
      await lapseOrder(t.pool, order.id);
      const refused = await action(order.id, what);
      expect(refused.statusCode).toBe(409);
      expect(refused.json()).toEqual({ code: 'order_closed', message: `Order ${order.id} is expired, not placed: only a placed order can be completed or cancelled`, status: 409 });
      expect((await getOrder(order.id)).json()).toMatchObject({ status: 'expired', closedAt: expect.any(String) });
      expect(await petStatus(petId)).toBe('available');
    },
  );

  it.each([
    ['getOrder', (id: number, h: Record<string, string>) => getOrder(id, h)],
    ['cancelOrder', (id: number, h: Record<string, string>) => action(id, 'cancel', h)],
    ['completeOrder', (id: number, h: Record<string, string>) => action(id, 'complete', h)],
  ])('%s: another key gets the 404 of an order that does not exist, and nothing changes', async (_title, call) => {
    const order = (await place(await newPet())).json();
    const before = await stored();
    const theirs = await call(order.id, other);
    const missing = await call(999_999_999, other);
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json()).toEqual({ code: 'not_found', message: `Order ${order.id} does not exist`, status: 404 });
    expect(missing.json()).toEqual({ code: 'not_found', message: 'Order 999999999 does not exist', status: 404 });
    expect(await stored()).toEqual(before);
  });

  it.each([
    ['abc', 'type'],
    ['0', 'minimum'],
    ['0x10', 'type'],
    ['9007199254740992', 'maximum'],
  ])('orderId %s is 400 on every order operation, and nothing changes', async (given, rule) => {
    const before = await stored();
    for (const response of [await getOrder(given), await action(given, 'cancel'), await action(given, 'complete')]) {
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ code: 'bad_request', details: [expect.objectContaining({ location: 'path', field: 'orderId', rule })] });
    }
    expect(await stored()).toEqual(before);
  });

  it.each([
    ['no body', { headers: {}, payload: undefined, status: 200 }],
    ['an empty object', { headers: json, payload: '{}', status: 200 }],
    ['an empty body with a JSON Content-Type (what Swagger UI and redocly respect send)', { headers: json, payload: '', status: 200 }],
    ['a field', { headers: json, payload: '{"reason":"changed my mind"}', status: 400 }],
    ['a text body', { headers: { 'content-type': 'text/plain' }, payload: 'now', status: 415 }],
  ])('cancelOrder with %s is %s', async (_title, { headers, payload, status }) => {
    const order = (await place(await newPet())).json();
    const response = await t.api({ method: 'POST', url: `/v1/store/orders/${order.id}/cancel`, headers: { ...t.auth, ...headers }, ...(payload !== undefined ? { payload } : {}) });
    expect(response.statusCode).toBe(status);
    expect((await getOrder(order.id)).json().status).toBe(status === 200 ? 'cancelled' : 'placed');
  });
});

// Placements and closes that arrive in the same turn share one statement (src/store/orders.ts,
// placeMany and closeMany): each request must still get the answer it gets alone.
describe('orders that arrive together', () => {
  /**
   * The statements the app sends while `requests` are answered together (the test's pool is
   * the app's), but for the expiry job's, which runs on its own timer whatever the requests.
   */
  async function together<T>(requests: (() => Promise<T>)[]): Promise<{ answers: T[]; statements: string[] }> {
    const queries = recordQueries(t.pool);
    try {
      const answers = await Promise.all(requests.map((request) => request()));
      return { answers, statements: queries.requests() };
    } finally {
      queries.restore();
    }
  }
  const answer = (r: { statusCode: number; json: () => unknown }) => ({ status: r.statusCode, body: r.json() });

  it('placements of every outcome: each gets its own answer, and they are one statement', async () => {
    const [a, b, c, sold, pending, none] = [await newPet(), await newPet(), await newPet(), await newPet('sold'), await newPet('pending'), await newPet(null)];
    const missing = 999_999_999;
    const petIds = [a, sold, b, missing, pending, c, none];
    const { answers, statements } = await together(petIds.map((id) => () => place(id)));
    expect(statements).toEqual(['orders-place-many']);
    const placed = (petId: number) => ({ status: 201, body: { id: expect.any(Number), petId, status: 'placed', placedAt: expect.any(String), expiresAt: expect.any(String) } });
    const refused = (status: number, code: string, message: string) => ({ status, body: { code, message, status } });
    expect(answers.map(answer)).toEqual([
      placed(a),
      refused(409, 'pet_not_available', `Pet ${sold} is sold, not available: only an available animal can be ordered (listPets with status=available lists them; updatePet with {"status":"available"} makes one available that no placed order holds)`),
      placed(b),
      refused(422, 'pet_not_found', `Pet ${missing} does not exist`),
      refused(409, 'pet_not_available', `Pet ${pending} is pending, not available: only an available animal can be ordered (listPets with status=available lists them; updatePet with {"status":"available"} makes one available that no placed order holds)`),
      placed(c),
      refused(409, 'pet_not_available', `Pet ${none} has no status, so it is not available: only an available animal can be ordered (listPets with status=available lists them; updatePet with {"status":"available"} makes one available that no placed order holds)`),
    ]);
    for (const [i, petId] of petIds.entries()) {
      const r = answers[i];
      if (r?.statusCode !== 201) continue;
      expect(r.headers.location).toBe(`/v1/store/orders/${r.json().id}`);
      expect((await getOrder(r.json().id)).json()).toEqual(r.json());
      expect(await petStatus(petId)).toBe('pending');
    }
    expect([await petStatus(sold), await petStatus(pending), await petStatus(none)]).toEqual(['sold', 'pending', null]);
  });

  it('one pet asked twice among others: one order holds it, the other is 409, the others are placed', async () => {
    const [a, twice, b] = [await newPet(), await newPet(), await newPet()];
    const { answers } = await together([a, twice, b, twice].map((id) => () => place(id)));
    expect(answers.map((r) => r.statusCode)).toEqual([201, expect.any(Number), 201, expect.any(Number)]);
    const forTwice = [answers[1], answers[3]].map((r) => answer(r as NonNullable<typeof r>));
    expect(forTwice.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(forTwice.find((r) => r.status === 409)?.body).toEqual({ code: 'pet_not_available', message: `Pet ${twice} is pending, not available: only an available animal can be ordered (listPets with status=available lists them; updatePet with {"status":"available"} makes one available that no placed order holds)`, status: 409 });
    const held = await t.pool.query("SELECT id FROM orders WHERE pet_id = $1 AND status = 'placed'", [twice]);
    expect(held.rowCount).toBe(1);
  });

  it('closes of every outcome: each gets its own answer, and they are one statement', async () => {
    const order = async () => (await place(await newPet())).json() as { id: number; petId: number };
    const [completing, cancelling, closed, lapsed, theirs] = [await order(), await order(), await order(), await order(), await order()];
    expect((await action(closed.id, 'complete')).statusCode).toBe(200);
    await lapseOrder(t.pool, lapsed.id);
    const { answers, statements } = await together([
      () => action(completing.id, 'complete'),
      () => action(closed.id, 'cancel'),
      () => action(cancelling.id, 'cancel'),
      () => action(lapsed.id, 'complete'),
      () => action(theirs.id, 'cancel', other),
      () => action(999_999_999, 'complete'),
    ]);
    expect(statements).toEqual(['orders-close-many']);
    const closedAs = (o: { id: number; petId: number }, status: string) => ({ status: 200, body: expect.objectContaining({ id: o.id, petId: o.petId, status, closedAt: expect.any(String) }) });
    const refused = (status: number, code: string, message: string) => ({ status, body: { code, message, status } });
    expect(answers.map(answer)).toEqual([
      closedAs(completing, 'completed'),
      refused(409, 'order_closed', `Order ${closed.id} is completed, not placed: only a placed order can be completed or cancelled`),
      closedAs(cancelling, 'cancelled'),
      refused(409, 'order_closed', `Order ${lapsed.id} is expired, not placed: only a placed order can be completed or cancelled`),
      refused(404, 'not_found', `Order ${theirs.id} does not exist`),
      refused(404, 'not_found', 'Order 999999999 does not exist'),
    ]);
    const statuses = async (o: { id: number; petId: number }) => [(await getOrder(o.id)).json().status, await petStatus(o.petId)];
    expect(await Promise.all([completing, cancelling, closed, lapsed, theirs].map(statuses))).toEqual([
      ['completed', 'sold'],
      ['cancelled', 'available'],
      ['completed', 'sold'],
      ['expired', 'available'],
      ['placed', 'pending'],
    ]);
  });

  it('orders each completed and cancelled at once: one action closes each, the other is 409 naming what it became', async () => {
    const orders = await Promise.all(Array.from({ length: 5 }, async () => (await place(await newPet())).json() as { id: number; petId: number }));
    const { answers } = await together(orders.flatMap((o) => [() => action(o.id, 'complete'), () => action(o.id, 'cancel')]));
    for (const [i, o] of orders.entries()) {
      const [complete, cancel] = [answers[2 * i], answers[2 * i + 1]].map((r) => answer(r as NonNullable<typeof r>));
      const won = complete?.status === 200 ? 'completed' : 'cancelled';
      expect([complete?.status, cancel?.status].sort()).toEqual([200, 409]);
      expect((won === 'completed' ? cancel : complete)?.body).toEqual({ code: 'order_closed', message: `Order ${o.id} is ${won}, not placed: only a placed order can be completed or cancelled`, status: 409 });
      expect(await petStatus(o.petId)).toBe(won === 'completed' ? 'sold' : 'available');
    }
  });
});

describe('listOrders', () => {
  let key: Record<string, string>;
  let mine: { id: number; petId: number; status: string }[];
  beforeAll(async () => {
    // A key of its own, with 7 orders: 3 placed, 2 completed, 2 cancelled.
    const { key: k } = await createApiKey(t.pool, 'lister');
    key = { authorization: `Bearer ${k}` };
    await keysSettled(t.pool, async (s) => (await t.app.inject({ method: 'GET', url: '/v1/store/inventory', headers: { authorization: `Bearer ${s}` } })).statusCode === 200);
    mine = [];
    for (let i = 0; i < 7; i++) {
      const order = (await place(await newPet(), key)).json();
      const to = i % 3 === 1 ? 'complete' : i % 3 === 2 ? 'cancel' : undefined;
      mine.push(to ? (await action(order.id, to, key)).json() : order);
    }
  });

  const walk = async (query: string, headers: Record<string, string>) => {
    const seen: number[] = [];
    let url: string | undefined = `/v1/store/orders?${query}`;
    for (let pages = 0; url && pages < 50; pages++) {
      const page = await t.api({ method: 'GET', url, headers });
      expect(page.statusCode).toBe(200);
      seen.push(...(page.json() as { id: number }[]).map((o) => o.id));
      url = /<([^>]+)>; rel="next"/.exec(String(page.headers.link ?? ''))?.[1];
    }
    return seen;
  };

  type Row = [string, { query: string; want: (o: { status: string }) => boolean; pet?: boolean }];
  it.each<Row>([
    ['every order of the key', { query: 'limit=2', want: () => true }],
    ['status=placed', { query: 'limit=2&status=placed', want: (o) => o.status === 'placed' }],
    ['status=completed', { query: 'limit=1&status=completed', want: (o) => o.status === 'completed' }],
    ['one pet', { query: 'limit=3', pet: true, want: () => true }],
  ])('%s, page after page, in ascending id, each once', async (_title, { query, want, pet }) => {
    const first = mine[0] as { petId: number };
    const expected = mine.filter((o) => (pet ? o.petId === first.petId : want(o))).map((o) => o.id);
    expect(await walk(pet ? `${query}&petId=${first.petId}` : query, key)).toEqual(expected);
  });

  it("another key never sees this key's orders, and this key's cursor is refused to it", async () => {
    const theirs = await walk('limit=100', other);
    expect(theirs.filter((id) => mine.some((o) => o.id === id))).toEqual([]);
    const cursor = /cursor=([^&>]+)/.exec(String((await t.api({ method: 'GET', url: '/v1/store/orders?limit=1', headers: key })).headers.link))?.[1];
    expect(cursor).toBeDefined();
    const refused = await t.api({ method: 'GET', url: `/v1/store/orders?limit=1&cursor=${cursor}`, headers: other });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toBe('query parameter cursor: belongs to the list of another API key; start again without cursor');
  });

  it.each([
    ['a cursor of listPets', async () => /cursor=([^&>]+)/.exec(String((await t.api({ method: 'GET', url: '/v1/pets?limit=1', headers: t.auth })).headers.link))?.[1]],
    ['a cursor of another status filter', async () => /cursor=([^&>]+)/.exec(String((await t.api({ method: 'GET', url: '/v1/store/orders?limit=1&status=completed', headers: key })).headers.link))?.[1]],
  ])('%s is 400', async (_title, cursor) => {
    const given = await cursor();
    expect(given).toBeDefined();
    const refused = await t.api({ method: 'GET', url: `/v1/store/orders?limit=1&status=placed&cursor=${given}`, headers: key });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 'bad_request', details: [expect.objectContaining({ field: 'cursor' })] });
  });

  it.each([['limit=0'], ['limit=101'], ['status=lost'], ['petId=0'], ['petId=x'], ['cursor=x']])('%s is 400', async (query) => {
    expect((await t.api({ method: 'GET', url: `/v1/store/orders?${query}`, headers: key })).statusCode).toBe(400);
  });
});

describe('getInventory', () => {
  const counted = () => countPetsByStatus(t.pool);

  it('counts the pets of each status exactly, at once after orders are placed, completed and cancelled', async () => {
    const inventory = async () => (await t.api({ method: 'GET', url: '/v1/store/inventory', headers: t.auth })).json();
    expect(await inventory()).toEqual(await counted());
    const before = await inventory();
    const a = (await place(await newPet())).json();
    const b = (await place(await newPet())).json();
    await newPet(null);
    expect(await inventory()).toEqual({ ...before, pending: before.pending + 2, noStatus: before.noStatus + 1 });
    await action(a.id, 'complete');
    await action(b.id, 'cancel');
    expect(await inventory()).toEqual({ ...before, available: before.available + 1, sold: before.sold + 1, noStatus: before.noStatus + 1 });
    expect(await inventory()).toEqual(await counted());
  });

  // The contract declares this 400 (BadParameter): getInventory takes no parameter.
  it('a query parameter is 400 naming it: getInventory takes none', async () => {
    const response = await t.api({ method: 'GET', url: '/v1/store/inventory?status=sold', headers: t.auth });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      code: 'bad_request',
      message: 'query parameter status: is not a parameter of getInventory (it takes none)',
      status: 400,
      details: [{ location: 'query', field: 'status', rule: 'unknown', message: 'is not a parameter of getInventory (it takes none)' }],
    });
  });
});
