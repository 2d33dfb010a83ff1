// A pet's tags (contract 1.5.0): set by createPet, batchCreatePets, imports and updatePet's
// merge patch, answered in the order given and left out when none, carried by the pet's
// events; listPets' `tag` filter, alone and with the other filters, in pages that keep
// listPets' promises (each pet once, in id order, rel="next" carrying the tags, a cursor
// bound to them). Bad tags are a 400 naming the field, and store nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp, PET_TIMES, nextOf, walkPets, type ApiPet } from '../helper.js';
import { within, WAIT_MS } from '../process.js';

let t: TestApp;
type Pet = ApiPet;
/** This file's pets (category 210 and 211), by id, as the API answered them. */
const pets = new Map<number, Pet>();
const TAGS = [['calm'], ['calm', 'trained'], [], ['trained', 'good-with-kids'], ['calm', 'good-with-kids', 'trained']];

beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '1000000' } });
  for (let i = 0; i < 25; i++) {
    const tags = TAGS[i % TAGS.length] as string[];
    const body = { name: `Tagged ${i}`, categoryId: 210 + (i % 2), ...(i % 3 === 0 ? { status: 'sold' } : {}), ...(tags.length > 0 || i % 2 === 0 ? { tags } : {}) };
    const created = await post('/v1/pets', body);
    expect(created.statusCode, created.body).toBe(201);
    pets.set(created.json().id, created.json());
  }
});
afterAll(async () => t.close());

const json = { 'content-type': 'application/json' };
const post = (url: string, body: unknown) => t.api({ method: 'POST', url, headers: { ...t.auth, ...json }, payload: JSON.stringify(body) });
const patch = (id: number, body: unknown, headers: Record<string, string> = {}) =>
  t.api({ method: 'PATCH', url: `/v1/pets/${id}`, headers: { ...t.auth, 'content-type': 'application/merge-patch+json', ...headers }, payload: JSON.stringify(body) });
const get = (url: string) => t.api({ method: 'GET', url, headers: t.auth });
const carrying = (...tags: string[]) => (p: Pet) => tags.every((tag) => p.tags?.includes(tag)) && p.categoryId >= 210 && p.categoryId <= 211;
const expected = (keep: (p: Pet) => boolean) => [...pets.values()].filter(keep).sort((a, b) => a.id - b.id);
/** Every pet of this file a walk returns, following rel="next" from `url`. */
async function walk(url: string): Promise<Pet[]> {
  return (await walkPets(t, url)).pets.filter((p) => pets.has(p.id));
}

describe('a pet\'s tags', () => {
  it('are answered in the order given, by createPet and getPet; a pet without tags has no tags field', async () => {
    const created = await post('/v1/pets', { name: 'Order kept', categoryId: 212, tags: ['trained', 'calm'] });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({ id: created.json().id, name: 'Order kept', categoryId: 212, tags: ['trained', 'calm'], ...PET_TIMES });
    expect((await get(`/v1/pets?id=${created.json().id}`)).json()).toEqual([created.json()]);
    for (const body of [{ name: 'No tags', categoryId: 212 }, { name: 'Empty tags', categoryId: 212, tags: [] }]) {
      const plain = await post('/v1/pets', body);
      expect(plain.statusCode).toBe(201);
      expect(plain.json()).toEqual({ id: plain.json().id, name: body.name, categoryId: 212, ...PET_TIMES });
    }
  });

  it('are set by batchCreatePets, each pet its own', async () => {
    const made = await post('/v1/pets:batchCreate', { requests: [{ name: 'Batch one', categoryId: 212, tags: ['young'] }, { name: 'Batch two', categoryId: 212 }, { name: 'Batch three', categoryId: 212, tags: ['young', 'senior-friendly'] }] });
    expect(made.statusCode, made.body).toBe(200);
    expect((made.json().pets as Pet[]).map((p) => p.tags)).toEqual([['young'], undefined, ['young', 'senior-friendly']]);
  });

  it.each([
    ['an upper-case letter', ['Calm'], '/tags/0'],
    ['33 characters', ['a'.repeat(33)], '/tags/0'],
    ['an empty tag', [''], '/tags/0'],
    ['a space', ['good with kids'], '/tags/0'],
    ['a leading hyphen', ['-calm'], '/tags/0'],
    ['11 tags', Array.from({ length: 11 }, (_, i) => `t${i}`), '/tags'],
    ['a tag twice', ['calm', 'calm'], '/tags'],
    ['not an array', 'calm', '/tags'],
  ])('%s: createPet and updatePet answer 400 naming the field, and store nothing', async (_title, tags, field) => {
    const before = (await get('/v1/pets?categoryId=213&limit=100')).json();
    const created = await post('/v1/pets', { name: 'Refused', categoryId: 213, tags });
    expect(created.statusCode, created.body).toBe(400);
    expect(created.json().details.map((d: { field: string }) => d.field)).toContain(field);
    expect(created.json().message).toMatch(/tags/);
    expect((await get('/v1/pets?categoryId=213&limit=100')).json()).toEqual(before);

    const pet = [...pets.values()][0] as Pet;
    const changed = await patch(pet.id, { tags });
    expect(changed.statusCode, changed.body).toBe(400);
    expect((await get(`/v1/pets?id=${pet.id}`)).json()).toEqual([pets.get(pet.id)]);
  });

  it('updatePet replaces them, [] and null remove them, the same tags change nothing; each change is a pet.updated carrying them', async () => {
    const created = (await post('/v1/pets', { name: 'Retagged', categoryId: 214, tags: ['calm'] })).json() as Pet;
    const last = async () => Number((await t.pool.query<{ id: string }>('SELECT coalesce(max(id), 0) AS id FROM events')).rows[0]?.id);
    const eventsAfter = async (from: number) => {
      const { rows } = await t.pool.query<{ id: string }>("SELECT id FROM events WHERE id > $1 AND type LIKE 'pet.%' ORDER BY id", [from]);
      return Promise.all(rows.map(async (r) => (await get(`/v1/events/${r.id}`)).json() as { type: string; data: Pet }));
    };

    let from = await last();
    const replaced = await patch(created.id, { tags: ['trained', 'young'] });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json()).toEqual({ ...created, tags: ['trained', 'young'], updatedAt: replaced.json().updatedAt });
    expect(replaced.json().updatedAt >= created.updatedAt).toBe(true);
    await within(WAIT_MS, async () => (await eventsAfter(from)).length === 1);
    expect((await eventsAfter(from)).map((e) => [e.type, e.data.tags])).toEqual([['pet.updated', ['trained', 'young']]]);

    // The same tags: nothing written, the same ETag, no event.
    from = await last();
    const same = await patch(created.id, { tags: ['trained', 'young'] });
    expect(same.statusCode).toBe(200);
    expect(same.headers.etag).toBe(replaced.headers.etag);
    const renamed = await patch(created.id, { name: 'Retagged too' });
    expect(renamed.json().tags).toEqual(['trained', 'young']);
    await within(WAIT_MS, async () => (await eventsAfter(from)).length === 1);
    expect((await eventsAfter(from)).map((e) => e.data.name)).toEqual(['Retagged too']);

    for (const removal of [[], null]) {
      await patch(created.id, { tags: ['calm'] });
      const removed = await patch(created.id, { tags: removal });
      expect(removed.statusCode).toBe(200);
      expect(removed.json()).toEqual({ id: created.id, name: 'Retagged too', categoryId: 214, ...PET_TIMES });
      expect((await get('/v1/pets?tag=calm&categoryId=214')).json()).toEqual([]);
    }
  });

  it('are imported from NDJSON and from a CSV column (separated by spaces), and exported as that column', async () => {
    const imports = [
      ['application/x-ndjson', '{"name":"Nd tagged","categoryId":215,"tags":["rescue","calm"]}\n{"name":"Nd plain","categoryId":215}\n'],
      ['text/csv', 'name,categoryId,tags\r\nCsv tagged,215,rescue  young\r\nCsv plain,215,\r\n'],
    ] as const;
    for (const [type, body] of imports) {
      const queued = await t.api({ method: 'POST', url: '/v1/pet-imports', headers: { ...t.auth, 'content-type': type }, payload: body });
      expect(queued.statusCode, queued.body).toBe(202);
      await within(WAIT_MS, async () => (await get(`/v1/pet-imports/${queued.json().id}`)).json().status === 'succeeded');
    }
    const listed = (await get('/v1/pets?categoryId=215')).json() as Pet[];
    expect(listed.map((p) => [p.name, p.tags])).toEqual([
      ['Nd tagged', ['rescue', 'calm']],
      ['Nd plain', undefined],
      ['Csv tagged', ['rescue', 'young']],
      ['Csv plain', undefined],
    ]);
    expect((await get('/v1/pets?tag=rescue&categoryId=215')).json().map((p: Pet) => p.name)).toEqual(['Nd tagged', 'Csv tagged']);
    const csv = await t.api({ method: 'GET', url: '/v1/pets:export?categoryId=215', headers: { ...t.auth, accept: 'text/csv' } });
    expect(csv.body.split('\r\n').slice(1, 3).map((line) => line.split(',').slice(1).join(','))).toEqual(['Nd tagged,215,,rescue calm', 'Nd plain,215,,']);
  });
});

describe('listPets with tag', () => {
  it.each([
    ['tag=calm', 'tag=calm', carrying('calm')],
    ['two tags: every one', 'tag=calm&tag=trained', carrying('calm', 'trained')],
    ['two tags, the other order', 'tag=trained&tag=calm', carrying('calm', 'trained')],
    ['with status', 'tag=trained&status=sold', (p: Pet) => carrying('trained')(p) && p.status === 'sold'],
    ['with categoryId', 'tag=good-with-kids&categoryId=211', (p: Pet) => carrying('good-with-kids')(p) && p.categoryId === 211],
  ])('%s: exactly those pets, in ascending id, every one once through pages of 2', async (_title, query, keep) => {
    const want = expected(keep);
    expect(want.length).toBeGreaterThan(1);
    expect(await walk(`/v1/pets?${query}&limit=2`)).toEqual(want);
    expect((await get(`/v1/pets?${query}&limit=100`)).json().filter((p: Pet) => pets.has(p.id))).toEqual(want);
  });

  it('with id: those of the ids that carry the tag', async () => {
    const ids = [...pets.keys()].slice(0, 10);
    expect((await get(`/v1/pets?${ids.map((id) => `id=${id}`).join('&')}&tag=trained`)).json()).toEqual(expected((p) => ids.includes(p.id) && carrying('trained')(p)));
  });

  it('a tag no pet carries: an empty page; a removed pet is not listed; a retagged pet is listed by its new tags', async () => {
    expect((await get('/v1/pets?tag=no-such-tag')).json()).toEqual([]);
    const pet = (await post('/v1/pets', { name: 'Gone', categoryId: 216, tags: ['fleeting'] })).json() as Pet;
    expect((await get('/v1/pets?tag=fleeting')).json()).toEqual([pet]);
    await patch(pet.id, { tags: ['kept'] });
    expect((await get('/v1/pets?tag=fleeting')).json()).toEqual([]);
    expect((await get('/v1/pets?tag=kept')).json()).toEqual([{ ...pet, tags: ['kept'], updatedAt: expect.any(String) }]);
    expect((await t.api({ method: 'DELETE', url: `/v1/pets/${pet.id}`, headers: t.auth })).statusCode).toBe(204);
    expect((await get('/v1/pets?tag=kept')).json()).toEqual([]);
  });

  it('the next link carries the tags; its cursor given with other tags is a 400 naming the tag filter', async () => {
    const first = await get('/v1/pets?tag=calm&tag=trained&limit=1');
    const next = nextOf(first.headers.link) as string;
    expect(next).toMatch(/[?&]tag=calm&tag=trained&/);
    const cursor = new URL(`http://x${next}`).searchParams.get('cursor') as string;
    const other = await get(`/v1/pets?tag=calm&limit=1&cursor=${encodeURIComponent(cursor)}`);
    expect(other.statusCode).toBe(400);
    expect(other.json().message).toMatch(/cursor: belongs to another .*tag filter/);
  });

  it.each([
    ['an upper-case tag', 'tag=Calm'],
    ['6 tags', Array.from({ length: 6 }, (_, i) => `tag=t${i}`).join('&')],
    ['an empty tag', 'tag='],
  ])('%s: 400 naming the parameter', async (_title, query) => {
    const response = await get(`/v1/pets?${query}`);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().message).toMatch(/^query parameter tag/);
  });
});
