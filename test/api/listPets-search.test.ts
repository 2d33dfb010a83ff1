// listPets' `q` (contract 1.5.0): search quality over a fixed catalogue (a table of searches,
// the animals expected first, in order, and those expected absent), relevance order and its
// pages, q with the other orders and filters, cursors bound to q, the 400s, and a pet found
// by the search that follows its 201. Across two instances: test/e2e/pagination-race-sorted.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp, nextOf, walkPets, type ApiPet } from '../helper.js';

let t: TestApp;
const json = { 'content-type': 'application/json' };
const get = (url: string) => t.api({ method: 'GET', url, headers: t.auth });
const names = async (url: string) => (await walkPets(t, url)).pets.map((p) => p.name);
const search = (q: string, more = '') => `/v1/pets?q=${encodeURIComponent(q)}${more}`;

const CATALOGUE: { name: string; tags?: string[]; status?: string }[] = [
  { name: 'Rex the Labrador', tags: ['hypoallergenic'], status: 'available' },
  { name: 'Zoé' },
  { name: 'Golden Retriever Max', tags: ['good-with-kids'], status: 'available' },
  { name: 'Labradoodle Bo' },
  { name: 'Lab mix', status: 'available' },
  { name: 'Retriever', tags: ['golden'] },
  { name: 'Percy 100% Poodle' },
  { name: 'Tom', tags: ['trained', 'calm'] },
  { name: 'Müller' },
  { name: '𝒜lice' },
  { name: 'Moo℃ Ness©' },
];
const ids = new Map<string, number>();

beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '1000000' } });
  for (const pet of CATALOGUE) {
    const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ ...pet, categoryId: 1 }) });
    expect(created.statusCode, created.body).toBe(201);
    ids.set(pet.name, created.json().id);
  }
});
afterAll(async () => t.close());

describe('search quality', () => {
  // q, the animals expected first (in this order), those expected absent.
  const TABLE: { what: string; q: string; first: string[]; absent: string[] }[] = [
    { what: 'case', q: 'LABRADOR', first: ['Rex the Labrador'], absent: ['Labradoodle Bo', 'Lab mix'] },
    { what: 'accents, folded in q', q: 'ZOÉ', first: ['Zoé'], absent: [] },
    { what: 'accents, folded in names', q: 'zoe', first: ['Zoé'], absent: [] },
    { what: 'accents: ü', q: 'muller', first: ['Müller'], absent: [] },
    { what: 'a partial word: the word itself, then the words it begins by code point', q: 'lab', first: ['Lab mix', 'Labradoodle Bo', 'Rex the Labrador'], absent: ['Tom'] },
    { what: 'a partial word in two names', q: 'retr', first: ['Golden Retriever Max', 'Retriever'], absent: ['Rex the Labrador'] },
    { what: 'a letter left out', q: 'labrdor', first: ['Rex the Labrador'], absent: ['Labradoodle Bo', 'Lab mix'] },
    { what: 'a letter changed', q: 'poodla', first: ['Percy 100% Poodle'], absent: [] },
    { what: 'two neighbouring letters swapped', q: 'poodel', first: ['Percy 100% Poodle'], absent: ['Lab mix'] },
    { what: 'two letters swapped in a long word', q: 'retreiver', first: ['Golden Retriever Max', 'Retriever'], absent: [] },
    { what: 'a tag', q: 'hypoallergenic', first: ['Rex the Labrador'], absent: ['Lab mix'] },
    { what: 'a word of a tag', q: 'kids', first: ['Golden Retriever Max'], absent: ['Retriever'] },
    { what: 'words in another order', q: 'retriever golden', first: ['Golden Retriever Max', 'Retriever'], absent: ['Lab mix'] },
    { what: 'every word must match', q: 'max golden', first: ['Golden Retriever Max'], absent: ['Retriever'] },
    { what: 'exact matches before a typo', q: 'golden retreiver', first: ['Golden Retriever Max', 'Retriever'], absent: [] },
    { what: '% is text, not a wildcard', q: '100%', first: ['Percy 100% Poodle'], absent: ['Lab mix'] },
    { what: '_ is text, not a wildcard', q: 'l_b', first: ['Labradoodle Bo'], absent: ['Lab mix', 'Rex the Labrador'] },
    { what: 'a word of digits matches only itself', q: '10', first: [], absent: ['Percy 100% Poodle'] },
    { what: 'a symbol in a name (℃, ©) separates words and matches nothing itself', q: 'c', first: ['Tom'], absent: ['Moo℃ Ness©'] },
    { what: 'a symbol in q (½) separates words and matches nothing itself', q: 'moo ½', first: ['Moo℃ Ness©'], absent: [] },
    { what: 'two neighbouring letters swapped in a long word', q: 'labardor', first: ['Rex the Labrador'], absent: ['Lab mix'] },
    { what: 'a letter changed in a word of 3', q: 'tim', first: ['Tom'], absent: ['Lab mix'] },
    { what: 'two neighbouring letters swapped in a short word', q: 'tmo', first: ['Tom'], absent: [] },
    { what: 'a letter more than a word of 2', q: 'bxo', first: ['Labradoodle Bo'], absent: ['Lab mix'] },
    { what: 'under 3 characters: a prefix, no typo', q: 'la', first: ['Lab mix', 'Labradoodle Bo', 'Rex the Labrador'], absent: ['Percy 100% Poodle'] },
    { what: 'a letter beyond U+FFFF', q: '𝒜', first: ['𝒜lice'], absent: ['Lab mix'] },
    { what: 'no animal matches', q: 'zebra', first: [], absent: ['Zoé'] },
  ];
  it.each(TABLE)('$what: $q', async ({ q, first, absent }) => {
    const found = await names(search(q));
    expect(found.slice(0, first.length)).toEqual(first);
    if (first.length === 0) expect(found).toEqual([]);
    for (const name of absent) expect(found).not.toContain(name);
  });

  it('a q with no letter or digit is a 400 that says what to give', async () => {
    for (const q of ['%', '%_%', '   ', '--', '«…»', '🐕', '½', '𝍠', 'lab\u0000', 'rex\nmax', 'rex\u0085']) {
      const response = await get(search(q));
      expect(response.statusCode, q).toBe(400);
      expect(response.json().message).toBe('query parameter q: must be text with at least one letter or digit and no control characters (punctuation only separates words)');
    }
  });

  it('more than 8 words is a 400 that says so; 8 are searched', async () => {
    const response = await get(search('a b c d e f g h i'));
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toBe('query parameter q: has more than 8 words: search with fewer');
    expect((await get(search('rex the labrador rex the labrador rex the'))).json().map((p: { name: string }) => p.name)).toEqual(['Rex the Labrador']);
    // A decomposed accent (e + U+0301) is inside its word, as its composed form is: 5 words;
    // a mark the database splits at (U+1DC0) separates words: 10.
    expect((await get(search('re\u0301x '.repeat(5)))).json().map((p: { name: string }) => p.name)).toEqual(['Rex the Labrador']);
    const joined = await get(search(['alpha', 'bravo', 'charlie', 'delta', 'echo', 'fox', 'golf', 'hotel', 'india', 'juliet'].join('\u1dc0')));
    expect(joined.json().message).toBe('query parameter q: has more than 8 words: search with fewer');
  });
});

describe('a q of 300 bytes', () => {
  it('over 300 bytes in UTF-8 is a 400 that says so; 100 characters of 3 bytes are searched', async () => {
    const over = await get(search(`a${'😀'.repeat(75)}`));
    expect(over.statusCode).toBe(400);
    expect(over.json().message).toBe('query parameter q: is over 300 bytes in UTF-8 (characters beyond U+FFFF, as emoji, take 4): search with fewer characters');
    expect((await get(search('犬'.repeat(100)))).statusCode).toBe(200);
  });

  it('keeps the next page\'s Link within the contract\'s 4,096 characters with every filter at its longest', async () => {
    const tags = ['a', 'b', 'c', 'd', 'e'].map((c) => c.repeat(32));
    const made: number[] = [];
    for (let i = 0; i < 2; i++) {
      const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: `a${'𝒜'.repeat(99 - i)}`, categoryId: 1, status: 'available', tags }) });
      expect(created.statusCode, created.body).toBe(201);
      made.push(created.json().id);
    }
    const ids = [...made, ...Array.from({ length: 98 }, (_, i) => 9_007_199_254_740_991 - i)].map((id) => `&id=${id}`).join('');
    const filters = `&limit=1&categoryId=1&status=available${tags.map((tag) => `&tag=${tag}`).join('')}${ids}`;
    for (const orderBy of ['name%20desc', 'name', 'relevance']) {
      const response = await get(search(`a${'😀'.repeat(74)}`, `${filters}&orderBy=${orderBy}`));
      expect(response.statusCode, response.body).toBe(200);
      const link = String(response.headers.link);
      expect(link).toMatch(/^<\/v1\/pets\?[^>]*>; rel="next"$/);
      expect(link.length, orderBy).toBeLessThanOrEqual(4096);
    }
  });
});

describe('relevance and the other orders', () => {
  it('relevance is the default with q, and is a 400 without it', async () => {
    expect(await names(search('lab', '&orderBy=relevance'))).toEqual(await names(search('lab')));
    const response = await get('/v1/pets?orderBy=relevance');
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toBe('query parameter orderBy: relevance ranks the matches of q; give q, or another orderBy');
  });

  it('pages of one walk the same animals as one page, across levels, and carry q but not the default order', async () => {
    for (const q of ['lab', 'retreiver', 'golden retreiver', 'la']) {
      const { pets, links } = await walkPets(t, search(q, '&limit=1'));
      expect(pets.map((p) => p.name)).toEqual(await names(search(q)));
      expect(pets.length).toBeGreaterThan(1);
      expect(links.length).toBe(pets.length - 1);
      for (const link of links) {
        expect(link).toContain(`q=${encodeURIComponent(q)}`);
        expect(link).not.toContain('orderBy');
      }
    }
  });

  it('q keeps its matches in another order, and combines with the filters', async () => {
    expect(await names(search('lab', '&orderBy=name&limit=2'))).toEqual(['Lab mix', 'Labradoodle Bo', 'Rex the Labrador']);
    expect(await names(search('lab', '&orderBy=id&limit=1'))).toEqual(['Rex the Labrador', 'Labradoodle Bo', 'Lab mix']);
    expect(await names(search('lab', '&orderBy=id%20desc'))).toEqual(['Lab mix', 'Labradoodle Bo', 'Rex the Labrador']);
    expect(await names(search('lab', '&status=available'))).toEqual(['Lab mix', 'Rex the Labrador']);
    expect(await names(search('lab', '&tag=hypoallergenic'))).toEqual(['Rex the Labrador']);
    expect(await names(search('retriever', `&id=${ids.get('Retriever')}&id=${ids.get('Tom')}`))).toEqual(['Retriever']);
    expect(await names(search('retriever', `&id=${ids.get('Retriever')}&orderBy=id`))).toEqual(['Retriever']);
    expect(await names(search('golden', '&categoryId=2'))).toEqual([]);
  });

  it('a cursor belongs to its q and its order', async () => {
    const first = await get(search('lab', '&limit=1'));
    const cursor = new URL(nextOf(first.headers.link) as string, 'http://x').searchParams.get('cursor') as string;
    for (const [more, differs] of [
      ['&q=lob', 'q filter'],
      ['&q=lab&orderBy=name', 'orderBy'],
      ['', 'q filter'],
    ] as const) {
      const response = await get(`/v1/pets?limit=1${more}&cursor=${cursor}`);
      expect(response.statusCode, more).toBe(400);
      expect(response.json().message).toBe(`query parameter cursor: belongs to another ${differs}; start again without cursor`);
    }
    const same = await get(`/v1/pets?limit=1&q=lab&orderBy=relevance&cursor=${cursor}`);
    expect(same.statusCode).toBe(200);
    // A q that spells another request's parameters is still one q: a cursor of name order with q=lab is not its.
    const named = await get('/v1/pets?limit=1&q=lab&orderBy=name');
    const namedCursor = new URL(nextOf(named.headers.link) as string, 'http://x').searchParams.get('cursor') as string;
    const spelled = await get(`/v1/pets?limit=1&q=${encodeURIComponent('lab&orderBy=name')}&cursor=${namedCursor}`);
    expect(spelled.statusCode).toBe(400);
    expect(spelled.json().message).toBe('query parameter cursor: belongs to another q filter and orderBy; start again without cursor');
  });

  it('a pet nobody changes keeps its place, and every word a prefix begins is found, while other pets add words that match', async () => {
    const add = async (name: string) => {
      const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name, categoryId: 2 }) });
      expect(created.statusCode).toBe(201);
    };
    // 40 words that `lab` begins, of every length from 5 to 12 letters.
    for (let i = 0; i < 40; i++) await add(`Lab${'x'.repeat(2 + (i % 8))}${String.fromCharCode(97 + Math.floor(i / 8))} ${i}`);
    const expected = await names(search('lab'));
    expect(expected).toHaveLength(43);
    const seen: string[] = [];
    let next: string | undefined = search('lab', '&limit=5');
    let added = 0;
    while (next) {
      const page = await get(next);
      seen.push(...(page.json() as { name: string }[]).map((p) => p.name));
      next = nextOf(page.headers.link);
      // New words before, among and after the walked ones, shorter and longer, and one typo away.
      await add(`${['Laba', 'Labxxz', 'Labz', 'Lbrador', 'Labxxxxxxxxxxxxx'][added % 5]} new ${added++}`);
    }
    for (const name of expected) expect(seen.filter((n) => n === name), name).toHaveLength(1);
    // The new pets go again, for the tests that follow.
    for (const pet of (await walkPets(t, '/v1/pets?categoryId=2&limit=100')).pets) {
      expect((await t.api({ method: 'DELETE', url: `/v1/pets/${pet.id}`, headers: t.auth })).statusCode).toBe(204);
    }
  });
});

describe('read your writes', () => {
  it('a pet is found as soon as it is added, renamed, retagged; not once removed; and again once brought back', async () => {
    const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: 'Biscuit', categoryId: 1 }) });
    const id = created.json().id as number;
    expect(await names(search('biscuit'))).toEqual(['Biscuit']);
    const patch = (body: unknown) => t.api({ method: 'PATCH', url: `/v1/pets/${id}`, headers: { ...t.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify(body) });
    expect((await patch({ name: 'Crumble', tags: ['sleepy'] })).statusCode).toBe(200);
    expect(await names(search('biscuit'))).toEqual([]);
    expect(await names(search('crumble sleepy'))).toEqual(['Crumble']);
    expect((await t.api({ method: 'DELETE', url: `/v1/pets/${id}`, headers: t.auth })).statusCode).toBe(204);
    expect(await names(search('crumble'))).toEqual([]);
    // Brought back by hand, as docs/production.md says: found again.
    await t.pool.query('UPDATE pets SET deleted_at = NULL WHERE id = $1', [id]);
    expect(await names(search('crumble'))).toEqual(['Crumble']);
  });
});
