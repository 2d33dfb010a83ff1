// A pet's times (createdAt, updatedAt: contract 1.5.0) and listPets' `orderBy`: each order
// walked through pages of 3, alone and with the filters, against the order computed here
// from what the API answered (ties in id order, going the same way); rel="next" carries
// orderBy; a cursor is bound to it and to the filters, and a refusal names what differs.
// The race of every order against writers on two instances is test/e2e/pagination-race-sorted.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp, nextOf, walkPets, type ApiPet } from '../helper.js';

let t: TestApp;
type Pet = ApiPet;
const CATEGORY = 230;
/** This file's pets of category 230, by id, as the API last answered them. */
const pets = new Map<number, Pet>();
const NAMES = ['beta', 'Alpha', 'Zoé', 'zeta', 'alpha', 'Beta', 'mango', 'Mango', 'zoz', 'ALPHA'];

const json = { 'content-type': 'application/json' };
const post = (url: string, body: unknown) => t.api({ method: 'POST', url, headers: { ...t.auth, ...json }, payload: JSON.stringify(body) });
const patch = (id: number, body: unknown) => t.api({ method: 'PATCH', url: `/v1/pets/${id}`, headers: { ...t.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify(body) });
const get = (url: string) => t.api({ method: 'GET', url, headers: t.auth });
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '1000000' } });
  // One at a time, then a batch (its pets share a createdAt: ties broken by id), then renames.
  for (const [i, name] of NAMES.slice(0, 6).entries()) {
    const created = await post('/v1/pets', { name, categoryId: CATEGORY, ...(i % 2 === 0 ? { status: 'available', tags: ['calm'] } : {}) });
    expect(created.statusCode, created.body).toBe(201);
    pets.set(created.json().id, created.json());
  }
  const batch = await post('/v1/pets:batchCreate', { requests: NAMES.slice(6).map((name, i) => ({ name, categoryId: CATEGORY, ...(i % 2 === 0 ? { status: 'available' } : {}) })) });
  expect(batch.statusCode, batch.body).toBe(200);
  for (const pet of batch.json().pets as Pet[]) pets.set(pet.id, pet);
  const [first, , , fourth] = [...pets.keys()];
  for (const [id, name] of [[fourth, 'Aardvark'], [first, 'omega']] as const) {
    const renamed = await patch(id as number, { name });
    expect(renamed.statusCode, renamed.body).toBe(200);
    pets.set(id as number, renamed.json());
  }
});
afterAll(async () => t.close());

/** Every pet a walk returns from `url`; each rel="next" carries the walk's orderBy (but the default, id). */
async function walk(url: string): Promise<Pet[]> {
  const { pets: seen, links } = await walkPets(t, url);
  const order = new URL(url, 'http://x').searchParams.get('orderBy') ?? 'id';
  for (const link of links) expect(link.includes('orderBy='), link).toBe(order !== 'id');
  for (const link of links) if (order !== 'id') expect(link).toContain(`orderBy=${encodeURIComponent(order)}`);
  return seen;
}

// The contract's orders, as a comparison of two pets (code points of the lowercase name; times
// as the answers carry them, to the millisecond, with the id breaking ties below that).
const byCodePoints = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const FIELDS: Record<string, (a: Pet, b: Pet) => number> = {
  id: () => 0,
  name: (a, b) => byCodePoints(a.name.toLowerCase(), b.name.toLowerCase()),
  createdAt: (a, b) => byCodePoints(a.createdAt, b.createdAt),
  updatedAt: (a, b) => byCodePoints(a.updatedAt, b.updatedAt),
};
const ORDERS = ['id', 'id desc', 'name', 'name desc', 'createdAt', 'createdAt desc', 'updatedAt', 'updatedAt desc'];
function sorted(order: string, keep: (p: Pet) => boolean = () => true): number[] {
  const [field, direction] = order.split(' ') as [string, string | undefined];
  const sign = direction === 'desc' ? -1 : 1;
  return [...pets.values()].filter(keep).sort((a, b) => sign * ((FIELDS[field] as (a: Pet, b: Pet) => number)(a, b) || a.id - b.id)).map((p) => p.id);
}
/** Whether `ids` is in `order`: equal times to the millisecond may differ below it, so for times only the order of distinct values is checked. */
function expectInOrder(order: string, seen: Pet[], keep: (p: Pet) => boolean = () => true) {
  const want = sorted(order, keep);
  expect(seen.map((p) => p.id).sort((a, b) => a - b)).toEqual([...want].sort((a, b) => a - b));
  if (!order.startsWith('createdAt') && !order.startsWith('updatedAt')) return expect(seen.map((p) => p.id)).toEqual(want);
  const [field, direction] = order.split(' ') as [string, string | undefined];
  for (let i = 1; i < seen.length; i++) {
    const c = (FIELDS[field] as (a: Pet, b: Pet) => number)(seen[i - 1] as Pet, seen[i] as Pet) * (direction === 'desc' ? -1 : 1);
    expect(c, `${seen[i - 1]?.id} before ${seen[i]?.id}`).toBeLessThanOrEqual(0);
  }
}

describe("a pet's times", () => {
  it('createPet sets createdAt and updatedAt equal, to the millisecond, and every read answers them', async () => {
    const created = await post('/v1/pets', { name: 'Timed', categoryId: 231 });
    const pet = created.json() as Pet;
    expect(pet.createdAt).toMatch(ISO_MS);
    expect(pet.updatedAt).toBe(pet.createdAt);
    expect((await get(`/v1/pets?id=${pet.id}`)).json()).toEqual([pet]);
  });

  it('a change moves updatedAt and keeps createdAt; a change that changes nothing keeps both and the ETag', async () => {
    const pet = (await post('/v1/pets', { name: 'Changing', categoryId: 231, tags: ['calm'] })).json() as Pet;
    const changed = await patch(pet.id, { name: 'Changed' });
    expect(changed.json().createdAt).toBe(pet.createdAt);
    expect(changed.json().updatedAt >= pet.createdAt).toBe(true);
    const again = await patch(pet.id, { name: 'Changed', tags: ['calm'] });
    expect(again.json()).toEqual(changed.json());
    expect(again.headers.etag).toBe(changed.headers.etag);
    const sold = await patch(pet.id, { status: 'sold' });
    expect(sold.json().updatedAt >= changed.json().updatedAt).toBe(true);
    expect(sold.headers.etag).not.toBe(changed.headers.etag);
  });

  it('a pet stored before the times were kept as text (created_json, updated_json null) reads the same', async () => {
    const pet = (await post('/v1/pets', { name: 'Older', categoryId: 231 })).json() as Pet;
    const changed = (await patch(pet.id, { name: 'Older still' })).json() as Pet;
    await t.pool.query('UPDATE pets SET created_json = NULL, updated_json = NULL WHERE id = $1', [pet.id]);
    expect((await get(`/v1/pets?id=${pet.id}`)).json()).toEqual([changed]);
    await t.pool.query('UPDATE pets SET changed_at = NULL WHERE id = $1', [pet.id]);
    expect((await get(`/v1/pets?id=${pet.id}`)).json()).toEqual([{ ...changed, updatedAt: pet.createdAt }]);
  });

  it('placing an order moves the pet\'s updatedAt with its status', async () => {
    const pet = (await post('/v1/pets', { name: 'Ordered', categoryId: 231, status: 'available' })).json() as Pet;
    const placed = await post('/v1/store/orders', { petId: pet.id });
    expect(placed.statusCode, placed.body).toBe(201);
    const [held] = (await get(`/v1/pets?id=${pet.id}`)).json() as Pet[];
    expect(held?.status).toBe('pending');
    expect(held?.createdAt).toBe(pet.createdAt);
    expect((held?.updatedAt ?? '') >= pet.updatedAt).toBe(true);
  });
});

describe('listPets orderBy', () => {
  it.each(ORDERS)('%s: pages of 3 give every pet once, in the order', async (order) => {
    expectInOrder(order, await walk(`/v1/pets?limit=3&categoryId=${CATEGORY}&orderBy=${encodeURIComponent(order)}`));
  });

  it('names compare in lowercase, by code point, and equal names follow in id order, going the way of the order', async () => {
    const names = (await walk(`/v1/pets?limit=4&categoryId=${CATEGORY}&orderBy=name`)).map((p) => p.name.toLowerCase());
    expect(names).toEqual(['aardvark', 'alpha', 'alpha', 'alpha', 'beta', 'mango', 'mango', 'omega', 'zoz', 'zoé']);
    const alphas = (await walk(`/v1/pets?limit=2&categoryId=${CATEGORY}&orderBy=name%20desc`)).filter((p) => p.name.toLowerCase() === 'alpha').map((p) => p.id);
    expect(alphas).toEqual([...alphas].sort((a, b) => b - a));
  });

  it.each([
    ['status', 'status=available', (p: Pet) => p.status === 'available'],
    ['tag', 'tag=calm', (p: Pet) => p.tags?.includes('calm') === true],
    ['status and tag', 'status=available&tag=calm', (p: Pet) => p.status === 'available' && p.tags?.includes('calm') === true],
  ] as const)('combines with %s', async (_, filter, keep) => {
    for (const order of ['name desc', 'updatedAt']) expectInOrder(order, await walk(`/v1/pets?limit=2&categoryId=${CATEGORY}&${filter}&orderBy=${encodeURIComponent(order)}`), keep);
  });

  it('combines with id: the pets of those ids, sorted, in pages', async () => {
    const ids = [...pets.keys()].filter((_, i) => i % 3 !== 1);
    const idsQuery = [...ids, 999_999_999].map((id) => `id=${id}`).join('&');
    for (const order of ['name', 'id desc', 'createdAt desc']) expectInOrder(order, await walk(`/v1/pets?limit=2&${idsQuery}&orderBy=${encodeURIComponent(order)}`), (p) => ids.includes(p.id));
  });

  it('orderBy=id is the default order: the same pages, links and cursors as no orderBy', async () => {
    const plain = await get(`/v1/pets?limit=100&categoryId=${CATEGORY}`);
    expect((await get(`/v1/pets?limit=100&categoryId=${CATEGORY}&orderBy=id`)).body).toBe(plain.body);
    const explicit = await get(`/v1/pets?limit=2&categoryId=${CATEGORY}&orderBy=id`);
    const link = nextOf(explicit.headers.link) as string;
    expect(link).toBe(nextOf((await get(`/v1/pets?limit=2&categoryId=${CATEGORY}`)).headers.link));
    const cursor = new URL(link, 'http://x').searchParams.get('cursor') as string;
    expect((await get(`/v1/pets?limit=2&categoryId=${CATEGORY}&orderBy=id&cursor=${cursor}`)).statusCode).toBe(200);
  });

  it('times that look equal (the same millisecond) follow in id order, whatever their microseconds', async () => {
    const [low, high] = [(await post('/v1/pets', { name: 'Tie low', categoryId: 232 })).json() as Pet, (await post('/v1/pets', { name: 'Tie high', categoryId: 232 })).json() as Pet];
    // The lower id changed later within the same millisecond (two statements of one batch can).
    await t.pool.query("UPDATE pets SET changed_at = '2030-01-01T00:00:00.000900Z', updated_json = NULL, created_at = '2030-01-01T00:00:00.000900Z', created_json = NULL WHERE id = $1", [low.id]);
    await t.pool.query("UPDATE pets SET changed_at = '2030-01-01T00:00:00.000100Z', updated_json = NULL, created_at = '2030-01-01T00:00:00.000100Z', created_json = NULL WHERE id = $1", [high.id]);
    for (const field of ['createdAt', 'updatedAt']) {
      const ascending = (await walk(`/v1/pets?limit=1&categoryId=232&orderBy=${field}`)).map((p) => [p.id, p[field as 'createdAt']]);
      expect(ascending).toEqual([[low.id, '2030-01-01T00:00:00.000Z'], [high.id, '2030-01-01T00:00:00.000Z']]);
      expect((await walk(`/v1/pets?limit=1&categoryId=232&orderBy=${field}%20desc`)).map((p) => p.id)).toEqual([high.id, low.id]);
    }
  });

  it('a cursor is refused with another orderBy or other filters, naming what differs; nothing else about it changes', async () => {
    const first = await get(`/v1/pets?limit=2&categoryId=${CATEGORY}&orderBy=name`);
    const cursor = new URL(nextOf(first.headers.link) ?? '', 'http://x').searchParams.get('cursor') as string;
    const cases: [string, string][] = [
      [`categoryId=${CATEGORY}&orderBy=createdAt`, 'belongs to another orderBy'],
      [`categoryId=${CATEGORY}`, 'belongs to another orderBy'],
      [`categoryId=${CATEGORY}&orderBy=name&tag=calm`, 'belongs to another tag filter'],
      [`categoryId=1&orderBy=name%20desc&status=sold`, 'belongs to another status filter, categoryId filter and orderBy'],
    ];
    for (const [query, message] of cases) {
      const refused = await get(`/v1/pets?limit=2&${query}&cursor=${cursor}`);
      expect(refused.statusCode).toBe(400);
      expect(refused.json().message).toBe(`query parameter cursor: ${message}; start again without cursor`);
    }
  });

  it.each(['relevance desc', 'name asc', 'Name', 'name,id', 'name  desc'])('orderBy=%s is a 400 that lists the orders', async (orderBy) => {
    const response = await get(`/v1/pets?orderBy=${encodeURIComponent(orderBy)}`);
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toContain('orderBy');
    expect(response.json().message).toContain('createdAt desc');
  });
});
