// DELETE /v1/pets/{petId} (deletePet): the pet leaves the catalogue (every list, filter and
// lookup, the inventory, new orders) while the orders that name it stay readable; a pending
// pet stays; If-Match. Every answer goes through `t.api`, which checks it against the
// contract. Races on two instances: test/e2e/catalogue-races.test.ts.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, countPetsByStatus, type TestApp } from '../helper.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '1000000' } });
});
afterAll(async () => t.close());

const json = { 'content-type': 'application/json' };
type Status = 'available' | 'sold' | null;

async function newPet(status: Status = 'available', categoryId = 1): Promise<{ id: number; etag: string }> {
  const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: 'Rex', categoryId, ...(status ? { status } : {}) }) });
  expect(created.statusCode).toBe(201);
  return { id: created.json().id as number, etag: String(created.headers.etag) };
}
const remove = (id: number | string, headers: Record<string, string> = {}) => t.api({ method: 'DELETE', url: `/v1/pets/${id}`, headers: { ...t.auth, ...headers } });
const place = (petId: number) => t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: JSON.stringify({ petId }) });
const action = (orderId: number, what: 'cancel' | 'complete') => t.api({ method: 'POST', url: `/v1/store/orders/${orderId}/${what}`, headers: t.auth });
const stored = async (id: number) => (await t.pool.query('SELECT id, name, category_id, status, pet_json(pets) AS as_json, deleted_at FROM pets WHERE id = $1', [id])).rows[0];
const get = (url: string) => t.api({ method: 'GET', url, headers: t.auth });
const ids = async (url: string): Promise<number[]> => {
  const response = await get(url);
  expect(response.statusCode).toBe(200);
  return (response.json() as { id: number }[]).map((p) => p.id);
};
/** Every pet a walk of listPets (following rel="next") returns. */
async function walk(url: string): Promise<number[]> {
  const seen: number[] = [];
  for (let next: string | undefined = url; next; ) {
    const response = await get(next);
    expect(response.statusCode).toBe(200);
    seen.push(...(response.json() as { id: number }[]).map((p) => p.id));
    next = /<([^>]+)>; rel="next"/.exec(String(response.headers.link ?? ''))?.[1];
  }
  return seen;
}
const notFound = (id: number) => ({ code: 'not_found', message: `Pet ${id} does not exist`, status: 404 });

describe('deletePet', () => {
  it('takes an empty body sent with Content-Type: application/json as no body (clients that set it on every request)', async () => {
    const pet = await newPet('available', 77);
    const response = await remove(pet.id, { 'content-type': 'application/json' });
    expect(response.statusCode, response.body).toBe(204);
    expect((await get(`/v1/pets/${pet.id}`)).statusCode).toBe(404);
  });

  it('answers 204 with no body; the pet then is gone from every read, and its row is kept', async () => {
    const pet = await newPet('available', 77);
    const keep = await newPet('available', 77);
    expect(await walk('/v1/pets?categoryId=77&limit=1')).toEqual([pet.id, keep.id]);
    const response = await remove(pet.id);
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    // getPet, updatePet, deletePet: 404.
    expect((await get(`/v1/pets/${pet.id}`)).json()).toEqual(notFound(pet.id));
    const patched = await t.api({ method: 'PATCH', url: `/v1/pets/${pet.id}`, headers: { ...t.auth, 'content-type': 'application/merge-patch+json' }, payload: '{}' });
    expect(patched.statusCode).toBe(404);
    expect(patched.json()).toEqual(notFound(pet.id));
    const again = await remove(pet.id);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual(notFound(pet.id));
    // Every listPets answer: unfiltered, by status, by id, by category, and combined.
    expect(await walk('/v1/pets?limit=100')).not.toContain(pet.id);
    expect(await walk('/v1/pets?status=available&limit=100')).not.toContain(pet.id);
    expect(await ids(`/v1/pets?id=${pet.id}`)).toEqual([]);
    expect(await ids(`/v1/pets?id=${pet.id}&id=${keep.id}`)).toEqual([keep.id]);
    expect(await walk('/v1/pets?categoryId=77&limit=1')).toEqual([keep.id]);
    expect(await ids(`/v1/pets?categoryId=77&status=available&id=${pet.id}`)).toEqual([]);
    // Nothing is erased.
    expect((await stored(pet.id))?.deleted_at).toBeInstanceOf(Date);
  });

  it('a removed pet cannot be ordered: placeOrder is 422 pet_not_found and nothing is stored', async () => {
    const pet = await newPet('available');
    await remove(pet.id);
    const orders = async () => (await t.pool.query('SELECT count(*)::int AS n FROM orders WHERE pet_id = $1', [pet.id])).rows[0].n;
    const response = await place(pet.id);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ code: 'pet_not_found', message: `Pet ${pet.id} does not exist`, status: 422 });
    expect(await orders()).toBe(0);
  });

  it('orders that name a removed pet stay readable, with its petId (getOrder, listOrders)', async () => {
    const pet = await newPet('available');
    const order = (await place(pet.id)).json();
    expect((await action(order.id, 'complete')).statusCode).toBe(200);
    expect((await remove(pet.id)).statusCode).toBe(204);
    const read = await get(`/v1/store/orders/${order.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ id: order.id, petId: pet.id, status: 'completed' });
    const listed = await get(`/v1/store/orders?petId=${pet.id}`);
    expect(listed.json()).toEqual([expect.objectContaining({ id: order.id, petId: pet.id, status: 'completed' })]);
  });

  it.each([
    ['available', { status: 'available' as Status, field: 'available' as const }],
    ['sold', { status: 'sold' as Status, field: 'sold' as const }],
    ['without a status', { status: null, field: 'noStatus' as const }],
  ])('a removed pet (%s) leaves the inventory', async (_title, { status, field }) => {
    const pet = await newPet(status);
    const inventory = async () => (await get('/v1/store/inventory')).json();
    const before = await inventory();
    expect((await remove(pet.id)).statusCode).toBe(204);
    expect(await inventory()).toEqual({ ...before, [field]: before[field] - 1 });
    expect(await inventory()).toEqual(await countPetsByStatus(t.pool));
  });

  it('a pending pet is 409 pet_reserved naming its order and stays; once the order is cancelled it can be removed', async () => {
    const pet = await newPet('available');
    const order = (await place(pet.id)).json();
    const before = await stored(pet.id);
    const response = await remove(pet.id);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({
      code: 'pet_reserved',
      message: `Pet ${pet.id} is held by order ${order.id}, which is placed: complete or cancel the order first, then remove the animal`,
      status: 409,
    });
    expect(await stored(pet.id)).toEqual(before);
    expect((await get(`/v1/pets/${pet.id}`)).json().status).toBe('pending');
    // Whatever If-Match says: without it, the removal would fail the same way (RFC 9110 §13.2.1).
    expect((await remove(pet.id, { 'if-match': '"stale"' })).statusCode).toBe(409);
    expect((await action(order.id, 'cancel')).statusCode).toBe(200);
    expect((await remove(pet.id)).statusCode).toBe(204);
  });

  it.each([
    ['an id never assigned', 999_999],
    ['the largest id, 2^53 - 1', Number.MAX_SAFE_INTEGER],
  ])('%s is 404', async (_title, id) => {
    const response = await remove(id);
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual(notFound(id));
  });

  it.each([
    ['petId=abc', { given: 'abc', rule: 'type' }],
    ['petId=0', { given: '0', rule: 'minimum' }],
    ['petId=1.5', { given: '1.5', rule: 'type' }],
    ['petId=2^53', { given: '9007199254740992', rule: 'maximum' }],
  ])('%s is 400', async (_title, { given, rule }) => {
    const response = await remove(given);
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([expect.objectContaining({ location: 'path', field: 'petId', rule })]);
  });

  it.each([
    ['a JSON body is read and ignored: 204', { type: 'application/json', payload: '{"reason":"sold elsewhere"}', want: 204 }],
    ['a body that is not JSON is 415, and the pet stays', { type: 'text/plain', payload: 'please', want: 415 }],
    ['malformed JSON is 400, and the pet stays', { type: 'application/json', payload: '{"reason":', want: 400 }],
  ])('deletePet takes no body; %s', async (_title, { type, payload, want }) => {
    const pet = await newPet('available');
    const response = await t.api({ method: 'DELETE', url: `/v1/pets/${pet.id}`, headers: { ...t.auth, 'content-type': type }, payload });
    expect(response.statusCode).toBe(want);
    expect((await stored(pet.id))?.deleted_at === null).toBe(want !== 204);
  });

  it('without an API key it is 401 and the pet stays', async () => {
    const pet = await newPet('available');
    const response = await t.api({ method: 'DELETE', url: `/v1/pets/${pet.id}` });
    expect(response.statusCode).toBe(401);
    expect((await stored(pet.id))?.deleted_at).toBeNull();
  });
});

describe('If-Match on deletePet', () => {
  it.each([
    ['the current ETag', { ifMatch: (etag: string) => etag, want: 204 }],
    ['*', { ifMatch: () => '*', want: 204 }],
    ['a list that holds the current ETag', { ifMatch: (etag: string) => `"a", ${etag}`, want: 204 }],
    ['another ETag', { ifMatch: () => '"kY3zBq9TQ0mFv1cXo2aR8w"', want: 412 }],
    ['the current ETag, weak: never matches', { ifMatch: (etag: string) => `W/${etag}`, want: 412, weakOnly: true }],
  ])('%s: %#', async (_title, { ifMatch, want, weakOnly }: { ifMatch: (etag: string) => string; want: number; weakOnly?: boolean }) => {
    const pet = await newPet('available');
    const before = await stored(pet.id);
    const response = await remove(pet.id, { 'if-match': ifMatch(pet.etag) });
    expect(response.statusCode).toBe(want);
    if (want === 412) {
      const message = weakOnly
        ? `If-Match names only weak ETags (W/"..."), which never match a change of pet ${pet.id}: send its ETag as getPet gives it, without W/`
        : `Pet ${pet.id} has changed since the ETag that If-Match names: read it again, then retry with its new ETag`;
      expect(response.json()).toEqual({ code: 'precondition_failed', message, status: 412 });
      expect(await stored(pet.id)).toEqual(before);
    } else expect((await get(`/v1/pets/${pet.id}`)).statusCode).toBe(404);
  });

  it('an ETag from before a change is 412, and the pet stays', async () => {
    const pet = await newPet('available');
    await t.api({ method: 'PATCH', url: `/v1/pets/${pet.id}`, headers: { ...t.auth, 'content-type': 'application/merge-patch+json' }, payload: '{"status":"sold"}' });
    expect((await remove(pet.id, { 'if-match': pet.etag })).statusCode).toBe(412);
    expect((await get(`/v1/pets/${pet.id}`)).statusCode).toBe(200);
  });

  it.each([
    ['an unknown pet with *', { id: 999_998, ifMatch: '*', want: 404 }],
    ['an unknown pet with a tag', { id: 999_998, ifMatch: '"x"', want: 404 }],
    ['a malformed If-Match', { id: 1, ifMatch: 'abc', want: 400 }],
  ])('%s is %#', async (_title, { id, ifMatch, want }) => {
    const response = await remove(id, { 'if-match': ifMatch });
    expect(response.statusCode).toBe(want);
  });
});

describe('erasing removed pets, as docs/production.md says', () => {
  it('its SQL deletes the removed pets no order names, keeps the others, and leaves the inventory as it was', async () => {
    const docs = readFileSync(new URL('../../docs/production.md', import.meta.url), 'utf8');
    const sql = /\*\*Erasing removed pets\.\*\*[\s\S]*?```sql\n([\s\S]*?)```/.exec(docs)?.[1];
    expect(sql).toBeDefined();
    const [lone, ordered, kept] = [await newPet('available'), await newPet('available'), await newPet('sold')];
    const order = (await place(ordered.id)).json();
    await action(order.id, 'cancel');
    for (const pet of [lone, ordered]) expect((await remove(pet.id)).statusCode).toBe(204);
    await t.pool.query("UPDATE pets SET deleted_at = now() - interval '31 days' WHERE id = ANY($1)", [[lone.id, ordered.id]]);
    const inventory = async () => (await get('/v1/store/inventory')).json();
    const before = await inventory();
    await t.pool.query(sql as string);
    expect(await stored(lone.id)).toBeUndefined();
    expect((await stored(ordered.id))?.deleted_at).toBeInstanceOf(Date);
    expect((await stored(kept.id))?.deleted_at).toBeNull();
    expect(await inventory()).toEqual(before);
    expect((await get(`/v1/store/orders/${order.id}`)).json()).toMatchObject({ petId: ordered.id, status: 'cancelled' });
  });
});
