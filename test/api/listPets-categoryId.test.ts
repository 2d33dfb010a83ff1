// listPets' categoryId filter (contract 1.3.0): alone and with status and id, in pages that
// keep every promise of listPets (each pet once, in id order, rel="next" carrying the
// filter, a cursor bound to it), removed pets never listed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helper.js';

let t: TestApp;
/** The pets stored, by id, as listPets answers them. */
const pets = new Map<number, { id: number; name: string; categoryId: number; status?: string }>();
const statuses = ['available', 'sold', null, 'available', 'sold'] as const;

beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '1000000' } });
  // 30 pets over categories 1, 2 and 3, their statuses interleaved.
  for (let i = 0; i < 30; i++) {
    const body = { name: `Pet ${i}`, categoryId: 1 + (i % 3), ...(statuses[i % 5] ? { status: statuses[i % 5] } : {}) };
    const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    pets.set(created.json().id, created.json());
  }
});
afterAll(async () => t.close());

const get = (url: string) => t.api({ method: 'GET', url, headers: t.auth });
const nextOf = (link: unknown): string | undefined => /^<([^>]+)>; rel="next"$/.exec(String(link ?? ''))?.[1];
const cursorOf = (link: unknown): string => new URL(`http://x${nextOf(link)}`).searchParams.get('cursor') as string;
const expected = (keep: (p: { categoryId: number; status?: string; id: number }) => boolean) => [...pets.values()].filter(keep).sort((a, b) => a.id - b.id);
/** Every pet a walk returns, following rel="next" from `url`; the links it followed. */
async function walk(url: string, between?: (page: number) => Promise<void>): Promise<{ seen: { id: number }[]; links: string[] }> {
  const seen: { id: number }[] = [];
  const links: string[] = [];
  let page = 0;
  for (let next: string | undefined = url; next; page++) {
    const response = await get(next);
    expect(response.statusCode).toBe(200);
    seen.push(...response.json());
    next = nextOf(response.headers.link);
    if (next) links.push(next);
    if (next && between) await between(page);
  }
  return { seen, links };
}

describe('listPets with categoryId', () => {
  it.each([
    ['categoryId=2', { query: 'categoryId=2', keep: (p: { categoryId: number }) => p.categoryId === 2 }],
    ['categoryId=3&status=sold', { query: 'categoryId=3&status=sold', keep: (p: { categoryId: number; status?: string }) => p.categoryId === 3 && p.status === 'sold' }],
    ['status=available&categoryId=1', { query: 'status=available&categoryId=1', keep: (p: { categoryId: number; status?: string }) => p.categoryId === 1 && p.status === 'available' }],
  ])('%s: exactly those pets, in ascending id', async (_title, { query, keep }) => {
    const response = await get(`/v1/pets?${query}&limit=100`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(expected(keep));
    expect(response.json().length).toBeGreaterThan(0);
    expect(response.headers.link).toBeUndefined();
  });

  it('with id: those of the ids that have the category (and the status, when given)', async () => {
    const ids = [...pets.keys()].slice(0, 9);
    const query = ids.map((id) => `id=${id}`).join('&');
    expect((await get(`/v1/pets?${query}&categoryId=2`)).json()).toEqual(expected((p) => ids.includes(p.id) && p.categoryId === 2));
    expect((await get(`/v1/pets?${query}&categoryId=2&status=sold`)).json()).toEqual(expected((p) => ids.includes(p.id) && p.categoryId === 2 && p.status === 'sold'));
    expect((await get(`/v1/pets?id=${ids[0]}&categoryId=3`)).json()).toEqual(expected((p) => p.id === ids[0] && p.categoryId === 3));
  });

  it('a category no pet has: an empty page, no Link', async () => {
    const response = await get('/v1/pets?categoryId=9007199254740991');
    expect(response.json()).toEqual([]);
    expect(response.headers.link).toBeUndefined();
  });

  it.each([
    ['limit=3', { query: 'categoryId=2&limit=3', keep: (p: { categoryId: number }) => p.categoryId === 2 }],
    ['limit=1, with status', { query: 'categoryId=1&status=available&limit=1', keep: (p: { categoryId: number; status?: string }) => p.categoryId === 1 && p.status === 'available' }],
  ])('pages (%s) give every pet once, in id order, each rel="next" carrying the filters', async (_title, { query, keep }) => {
    const { seen, links } = await walk(`/v1/pets?${query}`);
    expect(seen).toEqual(expected(keep));
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) {
      const params = new URL(`http://x${link}`).searchParams;
      for (const [name, value] of new URLSearchParams(query)) expect(params.get(name)).toBe(value);
    }
  });

  it.each([
    ['another categoryId', '&categoryId=3', 'categoryId filter'],
    ['no categoryId', '', 'categoryId filter'],
    ['the same categoryId and another status', '&categoryId=2&status=sold', 'status filter'],
  ])('a cursor of categoryId=2 given with %s is 400 naming the filter that differs', async (_title, filters, differs) => {
    const cursor = cursorOf((await get('/v1/pets?categoryId=2&limit=2')).headers.link);
    const response = await get(`/v1/pets?limit=2${filters}&cursor=${cursor}`);
    expect(response.statusCode).toBe(400);
    const message = `belongs to another ${differs}; start again without cursor`;
    expect(response.json()).toEqual({ code: 'bad_request', message: `query parameter cursor: ${message}`, status: 400, details: [{ location: 'query', field: 'cursor', rule: 'cursor', message }] });
  });

  it.each([
    ['categoryId=0', { given: '0', rule: 'minimum' }],
    ['categoryId=abc', { given: 'abc', rule: 'type' }],
    ['categoryId=2^53', { given: '9007199254740992', rule: 'maximum' }],
  ])('%s is 400', async (_title, { given, rule }) => {
    const response = await get(`/v1/pets?categoryId=${given}`);
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([expect.objectContaining({ location: 'query', field: 'categoryId', rule })]);
  });

  it('a walk while pets change category and are added and removed: each pet that stays in it comes once; none twice', async () => {
    // Categories of its own, so that the other cases' pets do not move.
    const create = async (name: string, categoryId = 50) =>
      (await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ name, categoryId }) })).json().id as number;
    const early = await create('Joins behind the walk', 51);
    const stay: number[] = [];
    for (let i = 0; i < 8; i++) stay.push(await create(`Stays ${i}`));
    const leaving = await create('Leaves');
    const removed = await create('Removed');
    stay.push(await create('Stays last'));
    const late = await create('Joins ahead of the walk', 51);
    const patch = (id: number, body: object) => t.api({ method: 'PATCH', url: `/v1/pets/${id}`, headers: { ...t.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify(body) });
    let added = 0;
    const { seen } = await walk('/v1/pets?categoryId=50&limit=3', async (page) => {
      if (page !== 0) return;
      // After the first page: one leaves the category, one is removed, one already listed is
      // renamed, two join it (one below where the walk is, one above), one is added.
      expect((await patch(leaving, { categoryId: 52 })).statusCode).toBe(200);
      expect((await t.api({ method: 'DELETE', url: `/v1/pets/${removed}`, headers: t.auth })).statusCode).toBe(204);
      expect((await patch(stay[0] as number, { name: 'Renamed' })).statusCode).toBe(200);
      expect((await patch(early, { categoryId: 50 })).statusCode).toBe(200);
      expect((await patch(late, { categoryId: 50 })).statusCode).toBe(200);
      added = await create('Added');
    });
    const ids = seen.map((p) => p.id);
    expect(ids).toEqual([...stay, late, added]);
    expect(ids).not.toContain(leaving);
    expect(ids).not.toContain(removed);
    expect(ids).not.toContain(early);
  });

  it('removed pets are never listed, whatever the filters', async () => {
    const victim = [...pets.values()].find((p) => p.categoryId === 2 && p.status === 'sold') as { id: number };
    expect((await t.api({ method: 'DELETE', url: `/v1/pets/${victim.id}`, headers: t.auth })).statusCode).toBe(204);
    pets.delete(victim.id);
    for (const query of ['categoryId=2', 'categoryId=2&status=sold', `categoryId=2&id=${victim.id}`, `categoryId=2&status=sold&id=${victim.id}`]) {
      const { seen } = await walk(`/v1/pets?${query}&limit=2`);
      expect(seen.map((p) => p.id), query).not.toContain(victim.id);
    }
    expect((await walk('/v1/pets?categoryId=2&limit=2')).seen).toEqual(expected((p) => p.categoryId === 2));
  });
});
