// A page with filters or q walks at most FILTERED_WALK pets (src/catalogue/pet-orders.ts; in
// id order, src/catalogue/pets.ts; by relevance, migration 1763700000027): past them it is
// short, even empty, and names the next page, which starts after the last pet walked; the
// walk still returns every match once.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAnimalStoreClient } from '../../client/src/index.js';
import { FILTERED_WALK } from '../../src/catalogue/pet-orders.js';
import { buildTestApp, type TestApp, walkPets } from '../helper.js';

let t: TestApp;
const CATEGORY = 232;
// FILTERED_WALK + 50 pets, in name and id order, two of which carry the words searched: one
// among the first walked, one past them.
const COUNT = FILTERED_WALK + 50;
const MATCHES = [5, FILTERED_WALK + 40].map((i) => `walk-${String(i).padStart(6, '0')} quokka yak`);

beforeAll(async () => {
  t = await buildTestApp();
  await t.pool.query('INSERT INTO categories (id, name) VALUES ($1, $2) ON CONFLICT DO NOTHING', [CATEGORY, 'Walked']);
  await t.pool.query(
    `INSERT INTO pets (name, category_id, status, created_json)
     SELECT CASE WHEN i = ANY ($2::int[]) THEN format('walk-%s quokka yak', lpad(i::text, 6, '0')) ELSE format('walk-%s', lpad(i::text, 6, '0')) END, $1, 'available', json_instant(now())
     FROM generate_series(1, $3) AS i`,
    [CATEGORY, [5, FILTERED_WALK + 40], COUNT],
  );
}, 60_000);
afterAll(async () => t?.close());

// Each walk: its first page holds the first match alone and names the next; the walk returns
// both matches once, in the walk's order.
it.each([
  { what: 'a search in name order', url: '/v1/pets?q=quokka&orderBy=name&limit=10', order: MATCHES },
  { what: 'a search with a filter in descending name order', url: `/v1/pets?q=quokka&categoryId=${CATEGORY}&orderBy=name%20desc&limit=10`, order: [...MATCHES].reverse() },
  { what: 'a search in id order', url: '/v1/pets?q=quokka&orderBy=id&limit=10', order: MATCHES },
  // By relevance `walk`, the longest word, is walked: every pet holds it, two hold `yak` too.
  { what: 'a search by relevance for words few pets hold together', url: '/v1/pets?q=yak%20walk&limit=10', order: MATCHES },
])('$what comes in short pages, each naming the next, and finds every match once', async ({ url, order }) => {
  const first = await t.api({ method: 'GET', url, headers: t.auth });
  expect(first.statusCode).toBe(200);
  expect(first.json().map((p: { name: string }) => p.name)).toEqual(order.slice(0, 1));
  expect(first.headers.link).toContain('rel="next"');
  const { pets } = await walkPets(t, url);
  expect(pets.map((p) => p.name)).toEqual(order);
});

it("the typed client's listAllPets follows the short and empty pages of a search to its end", async () => {
  const store = createAnimalStoreClient({
    baseUrl: 'http://127.0.0.1/v1',
    apiKey: t.key,
    fetch: async (input, init) => {
      const request = new Request(input, init);
      const url = new URL(request.url);
      const answer = await t.app.inject({ method: 'GET', url: url.pathname + url.search, headers: Object.fromEntries(request.headers) });
      return new Response(answer.body, { status: answer.statusCode, headers: answer.headers as Record<string, string> });
    },
  });
  const names: string[] = [];
  for await (const pet of store.listAllPets({ q: 'yak walk', limit: 10 })) names.push(pet.name);
  expect(names).toEqual(MATCHES);
});
