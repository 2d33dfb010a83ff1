// Every status transition of a pet, one row each: from a status (none: created without one;
// pending: held by a placed order; pending, no order: created as pending, which createPet
// accepts, and which no order holds; removed: deletePet), an operation that could change it, the
// answer, and the status stored afterwards. Each row's answer and outcome are written out,
// not derived. Every answer goes through `t.api`, which checks it against the contract; where
// the answer is an error, the pet's stored row is unchanged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, lapseOrder, type TestApp, PET_TIMES } from '../helper.js';
import type pg from 'pg';
import { within, WAIT_MS } from '../process.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '1000000' } });
});
afterAll(async () => t.close());

type From = 'none' | 'available' | 'pending' | 'pending, no order' | 'sold' | 'removed';
type Action = 'patch available' | 'patch sold' | 'patch null' | 'patch pending' | 'placeOrder' | 'completeOrder' | 'cancelOrder' | 'the order expires' | 'deletePet';
/** The stored status afterwards: a status, none (NULL), or removed (deleted_at set). */
type After = 'none' | 'available' | 'pending' | 'sold' | 'removed';

const json = { 'content-type': 'application/json' };

/** A pet in status `from`, and the order that holds it when it is pending. */
async function petIn(from: From): Promise<{ id: number; orderId?: number }> {
  const status = from === 'none' || from === 'removed' ? undefined : from === 'pending' ? 'available' : from === 'pending, no order' ? 'pending' : from;
  const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: 'Rex', categoryId: 1, ...(status ? { status } : {}) }) });
  expect(created.statusCode).toBe(201);
  const id = created.json().id as number;
  if (from === 'removed') expect((await t.api({ method: 'DELETE', url: `/v1/pets/${id}`, headers: t.auth })).statusCode).toBe(204);
  if (from !== 'pending') return { id };
  const placed = await t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: JSON.stringify({ petId: id }) });
  expect(placed.statusCode).toBe(201);
  return { id, orderId: placed.json().id as number };
}

/** The operation, as a client (or the expiry job) makes it; the answer's status and body. */
async function act(action: Action, pet: { id: number; orderId?: number }): Promise<{ status: number; body: Record<string, unknown> | undefined }> {
  const answer = async (request: Parameters<TestApp['api']>[0]) => {
    const response = await t.api(request);
    return { status: response.statusCode, body: response.body ? (response.json() as Record<string, unknown>) : undefined };
  };
  switch (action) {
    case 'patch available':
    case 'patch sold':
    case 'patch null':
    case 'patch pending': {
      const to = action.slice('patch '.length);
      return answer({ method: 'PATCH', url: `/v1/pets/${pet.id}`, headers: { ...t.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ status: to === 'null' ? null : to }) });
    }
    case 'placeOrder':
      return answer({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: JSON.stringify({ petId: pet.id }) });
    case 'completeOrder':
      return answer({ method: 'POST', url: `/v1/store/orders/${pet.orderId}/complete`, headers: t.auth });
    case 'cancelOrder':
      return answer({ method: 'POST', url: `/v1/store/orders/${pet.orderId}/cancel`, headers: t.auth });
    case 'the order expires': {
      // Its hold made to have ended; the expiry job (every 500 ms) closes it.
      await lapseOrder(t.pool, pet.orderId as number);
      await within(WAIT_MS, async () => (await t.api({ method: 'GET', url: `/v1/store/orders/${pet.orderId}`, headers: t.auth })).json().status === 'expired', 50);
      return answer({ method: 'GET', url: `/v1/store/orders/${pet.orderId}`, headers: t.auth });
    }
    case 'deletePet':
      return answer({ method: 'DELETE', url: `/v1/pets/${pet.id}`, headers: t.auth });
  }
}

/** Everything stored of a pet. */
const stored = async (id: number) =>
  (await t.pool.query<{ status: string | null; deleted_at: Date | null }>('SELECT id, name, category_id, status, pet_json(pets) AS as_json, deleted_at FROM pets WHERE id = $1', [id])).rows[0];
const statusOf = async (id: number): Promise<After> => {
  const row = await stored(id);
  return row?.deleted_at ? 'removed' : ((row?.status ?? 'none') as After);
};

// [from, action, answer status, error code (or the order's status, for order operations), status after]
const rows: [From, Action, number, string | undefined, After][] = [
  ['none', 'patch available', 200, undefined, 'available'],
  ['none', 'patch sold', 200, undefined, 'sold'],
  ['none', 'patch null', 200, undefined, 'none'],
  ['none', 'patch pending', 400, 'bad_request', 'none'],
  ['none', 'placeOrder', 409, 'pet_not_available', 'none'],
  ['none', 'deletePet', 204, undefined, 'removed'],

  ['available', 'patch available', 200, undefined, 'available'],
  ['available', 'patch sold', 200, undefined, 'sold'],
  ['available', 'patch null', 200, undefined, 'none'],
  ['available', 'patch pending', 400, 'bad_request', 'available'],
  ['available', 'placeOrder', 201, 'placed', 'pending'],
  ['available', 'deletePet', 204, undefined, 'removed'],

  ['pending', 'patch available', 409, 'pet_reserved', 'pending'],
  ['pending', 'patch sold', 409, 'pet_reserved', 'pending'],
  ['pending', 'patch null', 409, 'pet_reserved', 'pending'],
  ['pending', 'patch pending', 400, 'bad_request', 'pending'],
  ['pending', 'placeOrder', 409, 'pet_not_available', 'pending'],
  ['pending', 'completeOrder', 200, 'completed', 'sold'],
  ['pending', 'cancelOrder', 200, 'cancelled', 'available'],
  ['pending', 'the order expires', 200, 'expired', 'available'],
  ['pending', 'deletePet', 409, 'pet_reserved', 'pending'],

  ['pending, no order', 'patch available', 200, undefined, 'available'],
  ['pending, no order', 'patch sold', 200, undefined, 'sold'],
  ['pending, no order', 'patch null', 200, undefined, 'none'],
  ['pending, no order', 'patch pending', 400, 'bad_request', 'pending'],
  ['pending, no order', 'placeOrder', 409, 'pet_not_available', 'pending'],
  ['pending, no order', 'deletePet', 204, undefined, 'removed'],

  ['sold', 'patch available', 200, undefined, 'available'],
  ['sold', 'patch sold', 200, undefined, 'sold'],
  ['sold', 'patch null', 200, undefined, 'none'],
  ['sold', 'patch pending', 400, 'bad_request', 'sold'],
  ['sold', 'placeOrder', 409, 'pet_not_available', 'sold'],
  ['sold', 'deletePet', 204, undefined, 'removed'],

  ['removed', 'patch available', 404, 'not_found', 'removed'],
  ['removed', 'patch sold', 404, 'not_found', 'removed'],
  ['removed', 'patch null', 404, 'not_found', 'removed'],
  ['removed', 'patch pending', 400, 'bad_request', 'removed'],
  ['removed', 'placeOrder', 422, 'pet_not_found', 'removed'],
  ['removed', 'deletePet', 404, 'not_found', 'removed'],
];

describe('every status transition of a pet', () => {
  it('the table has a row for every operation from every status it applies to', () => {
    const cells = new Set(rows.map(([from, action]) => `${from} ${action}`));
    expect(cells.size).toBe(rows.length);
    const patches: Action[] = ['patch available', 'patch sold', 'patch null', 'patch pending', 'placeOrder', 'deletePet'];
    for (const from of ['none', 'available', 'pending', 'pending, no order', 'sold', 'removed'] as const) for (const action of patches) expect(cells.has(`${from} ${action}`), `${from} ${action}`).toBe(true);
    for (const action of ['completeOrder', 'cancelOrder', 'the order expires'] as const) expect(cells.has(`pending ${action}`), action).toBe(true);
  });

  it.each(rows)('%s, %s: %i %s, then %s', async (from, action, status, code, after) => {
    const pet = await petIn(from);
    const before = await stored(pet.id);
    const answer = await act(action, pet);
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    if (status >= 400) {
      expect(answer.body?.code).toBe(code);
      expect(await stored(pet.id)).toEqual(before);
    } else if (action.startsWith('patch')) {
      expect(answer.body?.status ?? 'none').toBe(after);
    } else if (code !== undefined) {
      expect(answer.body?.status).toBe(code);
    }
    expect(await statusOf(pet.id)).toBe(after);
    // What getPet and listPets say agrees with what is stored: the pet, listed under its
    // status filter (with none, under no filter and with no status property); a removed one
    // neither read nor listed.
    const read = await t.api({ method: 'GET', url: `/v1/pets/${pet.id}`, headers: t.auth });
    expect(read.statusCode).toBe(after === 'removed' ? 404 : 200);
    if (after !== 'removed') expect(read.json().status ?? 'none').toBe(after);
    const filter = after === 'none' || after === 'removed' ? '' : `&status=${after}`;
    const listed = await t.api({ method: 'GET', url: `/v1/pets?id=${pet.id}${filter}`, headers: t.auth });
    expect((listed.json() as { id: number; status?: string }[]).map((p) => [p.id, p.status ?? 'none'])).toEqual(after === 'removed' ? [] : [[pet.id, after]]);
  });
});

// A change decides on the pet's newest version, which it reads once it holds the row's lock,
// but it reads the orders in the snapshot its statement started with. An order placed while
// it waited for the row is not in that snapshot: the pet it holds must still be refused.
describe('an order placed while a change waits for the pet', () => {
  /** In an open transaction: each pet made pending by an order of the test's key, as placeOrder does; the orders' ids. */
  async function placeUncommitted(sql: pg.PoolClient, ids: number[]): Promise<number[]> {
    await sql.query('BEGIN');
    const orders: number[] = [];
    for (const id of ids) {
      expect((await sql.query("UPDATE pets SET status = 'pending' WHERE id = $1 AND status = 'available'", [id])).rowCount).toBe(1);
      const placed = await sql.query<{ id: string }>(
        "INSERT INTO orders (api_key_id, pet_id, status, placed_at, expires_at) VALUES ((SELECT min(id) FROM api_keys), $1, 'placed', now(), now() + interval '15 minutes') RETURNING id",
        [id],
      );
      orders.push(Number(placed.rows[0]?.id));
    }
    return orders;
  }

  /** Resolves once `n` statements of this database wait for a lock. */
  const waitingForLocks = (n: number) =>
    within(WAIT_MS, async () => (await t.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0]?.n === n, 20);

  const created = async () => (await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: 'Rex', categoryId: 1, status: 'available' }) })).json().id as number;

  it.each([
    ['deletePet, alone', 1, (id: number) => t.api({ method: 'DELETE', url: `/v1/pets/${id}`, headers: t.auth })],
    ['deletePet, two in one statement', 2, (id: number) => t.api({ method: 'DELETE', url: `/v1/pets/${id}`, headers: t.auth })],
    ['updatePet setting status, alone', 1, (id: number) => t.api({ method: 'PATCH', url: `/v1/pets/${id}`, headers: { ...t.auth, 'content-type': 'application/merge-patch+json' }, payload: '{"status":"sold"}' })],
    ['updatePet setting status, two in one statement', 2, (id: number) => t.api({ method: 'PATCH', url: `/v1/pets/${id}`, headers: { ...t.auth, 'content-type': 'application/merge-patch+json' }, payload: '{"status":"sold"}' })],
  ] as const)('%s: 409 naming the order, and the pet stays held', async (_, count, change) => {
    const ids: number[] = [];
    for (let i = 0; i < count; i++) ids.push(await created());
    const sql = await t.pool.connect();
    try {
      const orders = await placeUncommitted(sql, ids);
      const answers = Promise.all(ids.map((id) => change(id)));
      await waitingForLocks(1);
      await sql.query('COMMIT');
      const done = await answers;
      done.forEach((answer, i) => {
        expect(answer.statusCode, answer.body).toBe(409);
        expect(answer.json()).toMatchObject({ code: 'pet_reserved', message: expect.stringContaining(`order ${orders[i]}`) });
      });
    } finally {
      await sql.query('ROLLBACK').catch(() => undefined);
      sql.release();
    }
    for (const id of ids) expect(await statusOf(id)).toBe('pending');
  });

  it('a pending pet that no order holds, renamed while a status change waits for it: the change is made, on the renamed pet', async () => {
    const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: 'Rex', categoryId: 1, status: 'pending' }) });
    const id = created.json().id as number;
    const sql = await t.pool.connect();
    try {
      await sql.query('BEGIN');
      await sql.query("UPDATE pets SET name = 'Renamed' WHERE id = $1", [id]);
      const answer = t.api({ method: 'PATCH', url: `/v1/pets/${id}`, headers: { ...t.auth, 'content-type': 'application/merge-patch+json' }, payload: '{"status":"sold"}' });
      await waitingForLocks(1);
      await sql.query('COMMIT');
      const done = await answer;
      expect(done.statusCode, done.body).toBe(200);
      expect(done.json()).toEqual({ id, name: 'Renamed', categoryId: 1, status: 'sold', ...PET_TIMES });
    } finally {
      await sql.query('ROLLBACK').catch(() => undefined);
      sql.release();
    }
  });
});
