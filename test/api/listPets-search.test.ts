// listPets' search (`q`), `tag` filter and `orderBy` (contract 1.5.0), over a fixed
// catalogue: a table of searches, each with the names expected first and the names that
// must not be found; the tag filter; walks in every order, page by page, against the same
// order read in one page; cursors bound to q, tag and orderBy; the 400s that say why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSearchIndexer } from '../../src/catalogue/pet-search.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { WAIT_MS, within } from '../process.js';

let t: TestApp;
interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status?: string;
  tags: string[];
  createdAt: string;
  updatedAt: string;
}
const catalogue: [string, string[]][] = [
  ['Labrador Retriever', ['family']],
  ['Golden Retriever', ['family', 'trained']],
  ['Zoé', []],
  ['Poodle', ['hypoallergenic']],
  ['Labradoodle', ['hypoallergenic', 'family']],
  ['Tabby', []],
  ['A%B Cat', []],
  ['AxxB', []],
  ['A_B Bird', []],
  ['AxB', []],
  ['Rex', ['trained']],
  ['rex', []],
];
const byName = new Map<string, Pet>();

const json = { 'content-type': 'application/json' };
const get = (url: string) => t.api({ method: 'GET', url, headers: t.auth });
const nextOf = (link: unknown): string | undefined => /^<([^>]+)>; rel="next"$/.exec(String(link ?? ''))?.[1];
const cursorOf = (link: unknown): string => new URL(`http://x${nextOf(link)}`).searchParams.get('cursor') as string;
const names = (pets: Pet[]) => pets.map((p) => p.name);

/** Every pet a walk returns, following rel="next" from `url`. */
async function walk(url: string): Promise<Pet[]> {
  const seen: Pet[] = [];
  for (let next: string | undefined = url; next; ) {
    const response = await get(next);
    expect(response.statusCode, response.body).toBe(200);
    seen.push(...(response.json() as Pet[]));
    next = nextOf(response.headers.link);
  }
  return seen;
}

beforeAll(async () => {
  // The search table's job runs at start and then not within these tests: each copy here is
  // the test's own (`catchUp`).
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '1000000', SEARCH_INDEX_MS: '60000' } });
  for (const [i, [name, tags]] of catalogue.entries()) {
    const body = { name, categoryId: 1 + (i % 2), status: i % 3 === 0 ? 'sold' : 'available', ...(tags.length > 0 ? { tags } : {}) };
    const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify(body) });
    expect(created.statusCode, created.body).toBe(201);
    byName.set(name, created.json());
  }
});
afterAll(async () => t.close());

describe('q: the search finds names and tags', () => {
  // [what it shows, q, names expected first (in any order among themselves), names never found]
  it.each([
    ['case', 'LABRADOR', ['Labrador Retriever', 'Labradoodle'], ['Poodle', 'Tabby']],
    ['accents: without them', 'zoe', ['Zoé'], ['Rex', 'Poodle']],
    ['accents: with them, in capitals', 'ZOÉ', ['Zoé'], ['Rex']],
    ['a part of a word', 'lab', ['Labrador Retriever', 'Labradoodle'], ['Tabby', 'Poodle']],
    ['the middle of a word', 'doodle', ['Labradoodle'], ['Labrador Retriever']],
    ['a letter left out', 'labrdor', ['Labrador Retriever'], ['Poodle', 'Tabby']],
    ['a letter added', 'poodlle', ['Poodle'], ['Tabby', 'Rex']],
    ['a letter changed', 'retrievar', ['Labrador Retriever', 'Golden Retriever'], ['Poodle']],
    ['a tag', 'hypoallergenic', ['Poodle', 'Labradoodle'], ['Golden Retriever', 'Labrador Retriever']],
    ['a part of a tag', 'hypo', ['Poodle', 'Labradoodle'], ['Golden Retriever']],
    ['words in another order', 'retriever golden', ['Golden Retriever'], ['Poodle', 'Tabby']],
    ['% is text, not a wildcard', 'a%b', ['A%B Cat'], ['AxxB', 'AxB']],
    ['_ is text, not a wildcard', 'a_b', ['A_B Bird'], ['AxB', 'AxxB']],
    ['a name that differs in case only', 'REX', ['Rex', 'rex'], ['Poodle']],
  ])('%s: q=%s', async (_title, q, first, absent) => {
    const found = await walk(`/v1/pets?q=${encodeURIComponent(q)}&limit=100`);
    expect(names(found).slice(0, first.length).sort()).toEqual([...first].sort());
    for (const name of absent) expect(names(found)).not.toContain(name);
    // Each pet once.
    expect(new Set(found.map((p) => p.id)).size).toBe(found.length);
  });

  it('only wildcards: nothing matches, not everything', async () => {
    for (const q of ['%%%', '___', '\\\\\\']) expect((await get(`/v1/pets?q=${encodeURIComponent(q)}`)).json()).toEqual([]);
  });

  it('a q shorter than 3 characters is 400 saying so, and nothing is listed', async () => {
    const response = await get('/v1/pets?q=ab');
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toMatch(/^query parameter q: .*3/);
  });

  it('a pet is found by q and tag in the answer that follows its 201, and by its new name after its 200', async () => {
    const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: 'Quokka', categoryId: 9, tags: ['rare'] }) });
    expect(created.statusCode).toBe(201);
    expect(names((await get('/v1/pets?q=quokka')).json())).toEqual(['Quokka']);
    expect(names((await get('/v1/pets?tag=rare')).json())).toEqual(['Quokka']);
    const renamed = await t.api({ method: 'PATCH', url: `/v1/pets/${created.json().id}`, headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: 'Wombat', tags: ['burrowing'] }) });
    expect(renamed.statusCode).toBe(200);
    expect(names((await get('/v1/pets?q=wombat')).json())).toEqual(['Wombat']);
    expect((await get('/v1/pets?q=quokka')).json()).toEqual([]);
    expect((await get('/v1/pets?tag=rare')).json()).toEqual([]);
    expect((await t.api({ method: 'DELETE', url: `/v1/pets/${created.json().id}`, headers: t.auth })).statusCode).toBe(204);
    expect((await get('/v1/pets?q=wombat')).json()).toEqual([]);
  });

  it('a pet the search table holds older than it is is found as it is: before the next copy, and after', async () => {
    const indexer = createSearchIndexer(t.pool, { batch: 10_000 });
    /** The pet as the search table holds it, once the copy has taken it (undefined: not there). */
    const copied = async (id: number): Promise<string | undefined> => {
      let row: { name: string; tags: string[] } | undefined;
      await within(WAIT_MS, async () => {
        await indexer.catchUp();
        const { rows } = await t.pool.query<{ name: string; tags: string[]; behind: boolean }>(
          `SELECT s.name, s.tags, (SELECT indexed_through FROM pet_search_state) < (SELECT max(id) FROM events) AS behind FROM (SELECT 1) AS one LEFT JOIN pet_search s ON s.id = $1`,
          [id],
        );
        row = rows[0]?.name === null ? undefined : rows[0];
        return rows[0]?.behind === false;
      });
      return row ? `${row.name} ${row.tags.join(' ')}` : undefined;
    };
    const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: 'Axolotl', categoryId: 9, tags: ['aquatic'] }) });
    const { id } = created.json() as Pet;
    expect(await copied(id)).toBe('Axolotl aquatic');
    const patch = (body: object) => t.api({ method: 'PATCH', url: `/v1/pets/${id}`, headers: { ...t.auth, ...json }, payload: JSON.stringify(body) });
    expect((await patch({ name: 'Pangolin', tags: ['scaly'] })).statusCode).toBe(200);
    // The search table still holds the old name and tag; the search reads the pet from pets.
    expect((await t.pool.query<{ name: string }>('SELECT name FROM pet_search WHERE id = $1', [id])).rows).toEqual([{ name: 'Axolotl' }]);
    expect(names((await get('/v1/pets?q=pangolin')).json())).toEqual(['Pangolin']);
    expect((await get('/v1/pets?q=axolotl')).json()).toEqual([]);
    expect((await get('/v1/pets?tag=aquatic')).json()).toEqual([]);
    expect(names((await get('/v1/pets?tag=scaly&orderBy=name')).json())).toEqual(['Pangolin']);
    expect(await copied(id)).toBe('Pangolin scaly');
    expect(names((await get('/v1/pets?q=pangolin')).json())).toEqual(['Pangolin']);
    expect((await get('/v1/pets?q=axolotl')).json()).toEqual([]);
    expect((await t.api({ method: 'DELETE', url: `/v1/pets/${id}`, headers: t.auth })).statusCode).toBe(204);
    expect((await get('/v1/pets?q=pangolin')).json()).toEqual([]);
    expect(await copied(id)).toBeUndefined();
    expect((await get('/v1/pets?q=pangolin')).json()).toEqual([]);
  });
});

describe('tag: a pet must carry every tag given', () => {
  it.each([
    [['hypoallergenic'], ['Labradoodle', 'Poodle']],
    [['family'], ['Golden Retriever', 'Labradoodle', 'Labrador Retriever']],
    [['hypoallergenic', 'family'], ['Labradoodle']],
    [['trained', 'hypoallergenic'], []],
  ])('tag=%j', async (tags, want) => {
    const query = tags.map((tag) => `tag=${tag}`).join('&');
    expect(names(await walk(`/v1/pets?${query}&limit=1`)).sort()).toEqual(want);
    // With the other filters and q.
    expect(names(await walk(`/v1/pets?${query}&status=available&limit=1`)).sort()).toEqual(want.filter((name) => byName.get(name)?.status === 'available'));
    expect(names(await walk(`/v1/pets?${query}&q=labra&limit=1`)).sort()).toEqual(want.filter((name) => name.startsWith('Labra')));
  });

  it('a tag that breaks the contract is 400: an upper-case letter, a space, more than 5', async () => {
    for (const query of ['tag=Family', 'tag=two%20words', 'tag=a&tag=b&tag=c&tag=d&tag=e&tag=f']) expect((await get(`/v1/pets?${query}`)).statusCode, query).toBe(400);
  });
});

describe('orderBy: pages in any order, every pet once', () => {
  const all = () => [...byName.values()];
  it.each([
    ['id', (a: Pet, b: Pet) => a.id - b.id],
    ['id desc', (a: Pet, b: Pet) => b.id - a.id],
    ['createdAt', (a: Pet, b: Pet) => a.createdAt.localeCompare(b.createdAt) || a.id - b.id],
    ['createdAt desc', (a: Pet, b: Pet) => b.createdAt.localeCompare(a.createdAt) || b.id - a.id],
    ['updatedAt,id', (a: Pet, b: Pet) => a.updatedAt.localeCompare(b.updatedAt) || a.id - b.id],
    ['categoryId-free: name', undefined],
    ['name desc', undefined],
    ['name,createdAt desc', undefined],
  ] as [string, ((a: Pet, b: Pet) => number) | undefined][])('orderBy=%s, one pet a page and two, as in one page', async (title, compare) => {
    const orderBy = title.replace('categoryId-free: ', '');
    const whole = (await get(`/v1/pets?orderBy=${encodeURIComponent(orderBy)}&limit=100`)).json() as Pet[];
    expect(whole.length).toBeGreaterThanOrEqual(all().length);
    const mine = whole.filter((p) => byName.get(p.name)?.id === p.id);
    if (compare) expect(mine.map((p) => p.id)).toEqual([...mine].sort(compare).map((p) => p.id));
    for (const limit of [1, 2]) expect((await walk(`/v1/pets?orderBy=${encodeURIComponent(orderBy)}&limit=${limit}`)).map((p) => p.id)).toEqual(whole.map((p) => p.id));
  });

  it.each(['lab', 'retriever', 'labrdor', 'a%b'])('q=%s by relevance: one pet a page and two, as in one page (pages the substring matches fill, and pages past them)', async (q) => {
    const whole = (await get(`/v1/pets?q=${encodeURIComponent(q)}&limit=100`)).json() as Pet[];
    expect(whole.length).toBeGreaterThan(0);
    for (const limit of [1, 2]) expect((await walk(`/v1/pets?q=${encodeURIComponent(q)}&limit=${limit}`)).map((p) => p.id)).toEqual(whole.map((p) => p.id));
  });

  it('every filter and a long order at once, and another order as long: each answers its own page', async () => {
    const ids = [...byName.values()].map((p) => p.id);
    const filters = `q=retriever&status=available&categoryId=2&tag=family&${ids.map((id) => `id=${id}`).join('&')}`;
    const orders = ['updatedAt desc,name,createdAt desc,relevance,id', 'updatedAt desc,name,createdAt desc,relevance,id desc'];
    for (const orderBy of orders) {
      const whole = (await get(`/v1/pets?${filters}&orderBy=${encodeURIComponent(orderBy)}&limit=100`)).json() as Pet[];
      const want = [...byName.values()].filter((p) => p.status === 'available' && p.categoryId === 2 && p.tags.includes('family') && /retriever/i.test(p.name));
      expect(want.length).toBeGreaterThan(0);
      expect(names(whole).sort()).toEqual(names(want).sort());
      expect((await walk(`/v1/pets?${filters}&orderBy=${encodeURIComponent(orderBy)}&limit=1`)).map((p) => p.id)).toEqual(whole.map((p) => p.id));
    }
  });

  it('name: names in order, ties in id order; desc reverses both', async () => {
    const up = (await get('/v1/pets?orderBy=name&limit=100')).json() as Pet[];
    const down = (await get('/v1/pets?orderBy=name%20desc&limit=100')).json() as Pet[];
    expect(down.map((p) => p.id)).toEqual([...up].reverse().map((p) => p.id));
    const labs = up.filter((p) => p.name.startsWith('Labra')).map((p) => p.name);
    expect(labs).toEqual(['Labradoodle', 'Labrador Retriever']);
  });

  it('with q, relevance comes first by default; orderBy=name sorts the matches', async () => {
    const relevant = names(await walk('/v1/pets?q=retriever&limit=1'));
    expect(relevant.slice(0, 2).sort()).toEqual(['Golden Retriever', 'Labrador Retriever']);
    expect(names(await walk('/v1/pets?q=retriever&orderBy=name&limit=1')).slice(0, 2)).toEqual(['Golden Retriever', 'Labrador Retriever']);
    expect(names(await walk('/v1/pets?q=retriever&orderBy=relevance%20desc,name&limit=1'))).toEqual(relevant.slice().sort((a, b) => relevant.indexOf(a) - relevant.indexOf(b)));
  });

  it.each([
    ['relevance without q', 'orderBy=relevance', /^query parameter orderBy: relevance ranks the matches of a search: give q/],
    ['a field twice', 'orderBy=name,name%20desc', /^query parameter orderBy: names name twice/],
    ['an unknown field', 'orderBy=price', /^query parameter orderBy: /],
    ['a direction it does not know', 'orderBy=name%20down', /^query parameter orderBy: /],
  ])('%s is 400 saying why', async (_title, query, message) => {
    const response = await get(`/v1/pets?${query}`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'bad_request', status: 400, message: expect.stringMatching(message) });
  });
});

describe('a cursor belongs to its q, tag and orderBy', () => {
  it.each([
    ['another orderBy', '/v1/pets?orderBy=name&limit=1', '&orderBy=createdAt', 'orderBy'],
    ['no orderBy', '/v1/pets?orderBy=name&limit=1', '', 'orderBy'],
    ['another q', '/v1/pets?q=retriever&limit=1', '&q=labrador', 'q filter'],
    ['another tag', '/v1/pets?tag=family&limit=1', '&tag=trained', 'tag filter'],
    ['another q and orderBy', '/v1/pets?q=retriever&orderBy=name&limit=1', '&q=labrador', 'q filter and orderBy'],
  ])('given with %s: 400 naming it', async (_title, first, other, named) => {
    const cursor = cursorOf((await get(first)).headers.link);
    const response = await get(`/v1/pets?limit=1${other}&cursor=${cursor}`);
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toBe(`query parameter cursor: belongs to another ${named}; start again without cursor`);
  });

  it('the longest next link fits the contract: 100 ids, 50 four-byte characters of q, 5 tags, the longest orderBy, a name of 100 four-byte characters', async () => {
    const name = '🐕'.repeat(100);
    const tags = ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa3', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa4', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa5'];
    const ids: number[] = [];
    for (let i = 0; i < 2; i++) ids.push((await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name, categoryId: 1, tags }) })).json().id);
    for (let i = 0; ids.length < 100; i++) ids.push(9_007_199_254_740_000 - i);
    const orderBy = 'updatedAt desc,createdAt desc, relevance desc,name desc,id desc';
    expect(orderBy.length).toBeLessThanOrEqual(64);
    const url = `/v1/pets?limit=1&q=${encodeURIComponent('🐕'.repeat(50))}&${tags.map((tag) => `tag=${tag}`).join('&')}&${ids.map((id) => `id=${id}`).join('&')}&orderBy=${encodeURIComponent(orderBy)}`;
    // t.api checks every answer, its Link among them, against the contract.
    const first = await get(url);
    expect(first.statusCode, first.body).toBe(200);
    const link = String(first.headers.link);
    expect(link.length).toBeGreaterThan(3000);
    expect(link.length).toBeLessThanOrEqual(4096);
    const second = await get(nextOf(link) as string);
    expect(second.statusCode, second.body).toBe(200);
    expect([...first.json(), ...second.json()].map((p: Pet) => p.id).sort()).toEqual(ids.slice(0, 2).sort());
  });

  it('the next link carries q, tag and orderBy', async () => {
    const link = nextOf((await get('/v1/pets?q=retriever&tag=family&orderBy=name%20desc&limit=1')).headers.link) as string;
    const params = new URL(`http://x${link}`).searchParams;
    expect([params.get('q'), params.getAll('tag'), params.get('orderBy')]).toEqual(['retriever', ['family'], 'name desc']);
  });
});
