// Categories (contract 1.3.0): putCategory, getCategory, deleteCategory, listCategories. A
// category is a name given to a `categoryId`: names are unique ignoring case, and pets keep
// any categoryId, named or not. Every answer goes through `t.api`, which checks it against
// the contract. Two instances racing for one name: test/e2e/categories-race.test.ts.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helper.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '1000000' } });
});
afterAll(async () => t.close());

const json = { 'content-type': 'application/json' };
/** PUT with `body` as JSON, or as the exact text when it is a string. */
const put = (id: number | string, body: unknown, headers: Record<string, string> = json) =>
  t.api({ method: 'PUT', url: `/v1/categories/${id}`, headers: { ...t.auth, ...headers }, payload: typeof body === 'string' ? body : JSON.stringify(body) });
const get = (id: number | string) => t.api({ method: 'GET', url: `/v1/categories/${id}`, headers: t.auth });
const remove = (id: number | string) => t.api({ method: 'DELETE', url: `/v1/categories/${id}`, headers: t.auth });
const list = (url: string) => t.api({ method: 'GET', url, headers: t.auth });
const named = async (id: number, name: string) => expect((await put(id, { name })).statusCode).toBeOneOf([200, 201]);
/** Everything stored of categories and pets, to show that a refused request changed nothing. */
const stored = async () => ({
  categories: (await t.pool.query('SELECT id, name FROM categories ORDER BY id')).rows,
  pets: (await t.pool.query('SELECT id, name, category_id, status FROM pets ORDER BY id')).rows,
});
const taken = (holder: number, name: string) => ({
  code: 'category_name_taken',
  message: `Category ${holder} is already named "${name}" (names are unique ignoring case): choose another name, or rename or remove category ${holder} first`,
  status: 409,
});
const notFound = (id: number) => ({ code: 'not_found', message: `Category ${id} has no name`, status: 404 });
const nextOf = (link: unknown): string | undefined => /^<([^>]+)>; rel="next"$/.exec(String(link ?? ''))?.[1];

/** Follows rel="next" from `url` to the end; returns every page. */
async function pages(url: string): Promise<{ id: number; name: string }[][]> {
  const all: { id: number; name: string }[][] = [];
  let next: string | undefined = url;
  while (next) {
    const response = await list(next);
    expect(response.statusCode).toBe(200);
    all.push(response.json());
    next = nextOf(response.headers.link);
  }
  return all;
}

describe('putCategory names an id', () => {
  // Each row on an id of its own: `before`, the names the id is given first; then `name`.
  it.each([
    ['an id without a name: 201, Location, the category', { id: 101, before: [], name: 'Parrots', want: 201 }],
    ['a new name for a named id: 200', { id: 102, before: ['Parrots2'], name: 'Budgies', want: 200 }],
    ['the same name again: 200', { id: 103, before: ['Geckos'], name: 'Geckos', want: 200 }],
    ['a case variant of its own name: 200, stored as sent', { id: 104, before: ['Iguanas'], name: 'IGUANAS', want: 200 }],
    ['a name of 100 characters', { id: 105, before: [], name: 'n'.repeat(100), want: 201 }],
    ['100 characters outside the BMP (200 UTF-16 code units)', { id: 106, before: [], name: '🐦'.repeat(100), want: 201 }],
    ['spaces, accents and other scripts', { id: 107, before: [], name: 'Chats de gouttière 小猫', want: 201 }],
    ['the largest id, 2^53 - 1', { id: Number.MAX_SAFE_INTEGER, before: [], name: 'The last one', want: 201 }],
    ['id 1', { id: 1, before: [], name: 'The first one', want: 201 }],
  ])('%s', async (_title, { id, before, name, want }) => {
    for (const earlier of before) await named(id, earlier);
    const response = await put(id, { name });
    expect(response.statusCode).toBe(want);
    expect(response.json()).toEqual({ id, name });
    expect(response.headers.location).toBe(want === 201 ? `/v1/categories/${id}` : undefined);
    // It reads back exactly, and is stored once.
    expect((await get(id)).json()).toEqual({ id, name });
    expect((await t.pool.query('SELECT id, name FROM categories WHERE id = $1', [id])).rows).toEqual([{ id: String(id), name }]);
  });
});

describe('putCategory: names are unique ignoring case (409 category_name_taken, nothing changes)', () => {
  // `holders`: [id, name] named first; then `id` is given `name`.
  it.each([
    ['the name another id holds', { holders: [[201, 'Hamsters']], id: 202, name: 'Hamsters', want: taken(201, 'Hamsters') }],
    ['another case of it: the message names it as stored', { holders: [[203, 'Gerbils']], id: 204, name: 'gERBILS', want: taken(203, 'Gerbils') }],
    ['renaming a named id to the name of another', { holders: [[205, 'Ferrets'], [206, 'Mice']], id: 206, name: 'FERRETS', want: taken(205, 'Ferrets') }],
    [
      'a long name is shown cut to 60 characters',
      { holders: [[207, `${'L'.repeat(80)}ong`]], id: 208, name: `${'l'.repeat(80)}ONG`, want: taken(207, `${'L'.repeat(60)}...`) },
    ],
  ] as const)('%s', async (_title, { holders, id, name, want }) => {
    for (const [holder, held] of holders) await named(holder, held);
    const before = await stored();
    const response = await put(id, { name });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual(want);
    expect(await stored()).toEqual(before);
  });

  it('a name given up (renamed or removed) can be taken by another id', async () => {
    await named(211, 'Tortoises');
    await named(211, 'Turtles');
    expect((await put(212, { name: 'tortoises' })).statusCode).toBe(201);
    expect((await remove(211)).statusCode).toBe(204);
    expect((await put(213, { name: 'TURTLES' })).statusCode).toBe(201);
  });
});

describe('putCategory when the name changes hands between its two statements', () => {
  // What another request does between a put's unique violation and its look-up of the
  // holder (the name given up meanwhile), made to happen on demand: a trigger reports the
  // violation for the first `faults` inserts of a name starting with "Fault", and no
  // category holds that name when the put looks.
  const injectFaults = (faults: number) =>
    t.pool.query(`
      CREATE SEQUENCE categories_faults;
      CREATE FUNCTION categories_fault() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('categories_faults') <= ${faults} THEN
          RAISE unique_violation USING MESSAGE = 'injected', CONSTRAINT = 'categories_name_unique';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER categories_fault BEFORE INSERT ON categories FOR EACH ROW WHEN (NEW.name LIKE 'Fault%') EXECUTE FUNCTION categories_fault();`);
  const removeFaults = () => t.pool.query('DROP TRIGGER IF EXISTS categories_fault ON categories; DROP FUNCTION IF EXISTS categories_fault(); DROP SEQUENCE IF EXISTS categories_faults;');
  afterEach(removeFaults);

  it('the holder is gone when the put looks: the put is tried again, and names the id', async () => {
    await injectFaults(1);
    const response = await put(251, { name: 'Faulty once' });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toEqual({ id: 251, name: 'Faulty once' });
    expect((await get(251)).json()).toEqual({ id: 251, name: 'Faulty once' });
  });

  it('the name changes hands under every attempt: 503 with Retry-After, saying to retry, and nothing is stored', async () => {
    await injectFaults(1000);
    const before = await stored();
    const response = await put(252, { name: 'Faulty always' });
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.json()).toEqual({
      code: 'unavailable',
      message: 'Category 252 was not named: the name "Faulty always" kept changing hands under other requests; retry',
      status: 503,
    });
    expect(await stored()).toEqual(before);
    // Every attempt was made, and no more.
    expect((await t.pool.query<{ n: string }>('SELECT last_value AS n FROM categories_faults')).rows[0]?.n).toBe('5');
  });
});

describe('putCategory refuses bad input with a 4xx saying what to fix, and stores nothing', () => {
  let before: Awaited<ReturnType<typeof stored>>;
  beforeAll(async () => named(301, 'Snakes'));
  beforeEach(async () => {
    before = await stored();
  });

  // Each on a named id (it must keep its name) and on an id without one (it must stay so).
  it.each([
    ['an empty name', { id: 'ID', body: { name: '' }, want: { location: 'body', field: '/name', rule: 'minLength', message: 'must NOT have fewer than 1 characters' } }],
    ['a name of 101 characters', { id: 'ID', body: { name: 'n'.repeat(101) }, want: { location: 'body', field: '/name', rule: 'maxLength' } }],
    ['101 characters outside the BMP', { id: 'ID', body: { name: '🐦'.repeat(101) }, want: { location: 'body', field: '/name', rule: 'maxLength' } }],
    ['a control character (BEL)', { id: 'ID', body: { name: 'Sna\u0007kes' }, want: { location: 'body', field: '/name', rule: 'pattern' } }],
    ['a newline', { id: 'ID', body: { name: 'Two\nlines' }, want: { location: 'body', field: '/name', rule: 'pattern' } }],
    ['DEL', { id: 'ID', body: { name: 'Snakes\u007f' }, want: { location: 'body', field: '/name', rule: 'pattern' } }],
    ['NUL', { id: 'ID', body: { name: 'a\u0000b' }, want: { location: 'body', field: '/name', rule: 'pattern' } }],
    ['an unknown field', { id: 'ID', body: { name: 'Boas', color: 'green' }, want: { location: 'body', field: '/color', rule: 'additionalProperties' } }],
    ['an id in the body', { id: 'ID', body: { id: 7, name: 'Boas' }, want: { location: 'body', field: '/id', rule: 'additionalProperties' } }],
    ['no name', { id: 'ID', body: {}, want: { location: 'body', field: '/name', rule: 'required' } }],
    ['a null name', { id: 'ID', body: { name: null }, want: { location: 'body', field: '/name', rule: 'type' } }],
    ['a number for a name', { id: 'ID', body: { name: 5 }, want: { location: 'body', field: '/name', rule: 'type' } }],
    ['an array for a body', { id: 'ID', body: [{ name: 'Boas' }], want: { location: 'body', rule: 'type' } }],
    ['malformed JSON', { id: 'ID', body: '{"name":', want: undefined }],
    ['an empty body', { id: 'ID', body: '', want: undefined }],
    ['a lone surrogate', { id: 'ID', body: '{"name":"\\ud800"}', want: { location: 'body', field: '/name', rule: 'encoding' } }],
    ['an id that is not an integer', { id: 'abc', body: { name: 'Boas' }, want: { location: 'path', field: 'categoryId', rule: 'type' } }],
    ['a fractional id', { id: '1.5', body: { name: 'Boas' }, want: { location: 'path', field: 'categoryId', rule: 'type' } }],
    ['id 0', { id: '0', body: { name: 'Boas' }, want: { location: 'path', field: 'categoryId', rule: 'minimum' } }],
    ['a negative id', { id: '-3', body: { name: 'Boas' }, want: { location: 'path', field: 'categoryId', rule: 'minimum' } }],
    ['id 2^53, one past the largest', { id: '9007199254740992', body: { name: 'Boas' }, want: { location: 'path', field: 'categoryId', rule: 'maximum' } }],
    ['an id of 30 digits', { id: '1'.repeat(30), body: { name: 'Boas' }, want: { location: 'path', field: 'categoryId', rule: 'maximum' } }],
  ])('%s: 400', async (_title, { id, body, want }) => {
    for (const target of id === 'ID' ? [301, 302] : [id]) {
      const response = await put(target, body);
      expect(response.statusCode, response.body).toBe(400);
      const answer = response.json();
      expect(answer).toMatchObject({ code: 'bad_request', status: 400 });
      if (want) expect(answer.details[0]).toMatchObject(want);
      expect(await stored()).toEqual(before);
    }
  });

  it('a body that is not JSON: 415', async () => {
    const response = await put(301, 'Boas', { 'content-type': 'text/plain' });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toMatchObject({ code: 'unsupported_media_type', status: 415 });
    expect(await stored()).toEqual(before);
  });
});

describe('getCategory', () => {
  it('a named id: 200 with the category', async () => {
    await named(401, 'Goldfish');
    const response = await get(401);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ id: 401, name: 'Goldfish' });
  });

  it.each([
    ['an id never named', 402],
    ['the largest id, never named', Number.MAX_SAFE_INTEGER - 1],
  ])('%s: 404 saying it has no name', async (_title, id) => {
    const response = await get(id);
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual(notFound(id));
  });

  it.each([
    ['not an integer', 'abc', 'type'],
    ['0', '0', 'minimum'],
    ['past 2^53 - 1', '9007199254740992', 'maximum'],
  ])('an id %s: 400', async (_title, id, rule) => {
    const response = await get(id);
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([expect.objectContaining({ location: 'path', field: 'categoryId', rule })]);
  });
});

describe('deleteCategory', () => {
  it('removes the name: 204, then 404 on get and delete, and the list is without it', async () => {
    await named(501, 'Crickets');
    await named(502, 'Locusts');
    const response = await remove(501);
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    expect((await get(501)).json()).toEqual(notFound(501));
    const again = await remove(501);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual(notFound(501));
    const listed = (await pages('/v1/categories?limit=100')).flat().map((c) => c.id);
    expect(listed).not.toContain(501);
    expect(listed).toContain(502);
    // The other category is untouched.
    expect((await get(502)).json()).toEqual({ id: 502, name: 'Locusts' });
  });

  it('an id never named: 404, nothing changes', async () => {
    const before = await stored();
    const response = await remove(503);
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual(notFound(503));
    expect(await stored()).toEqual(before);
  });

  it.each([
    ['not an integer', 'abc', 'type'],
    ['0', '0', 'minimum'],
    ['past 2^53 - 1', '9007199254740992', 'maximum'],
  ])('an id %s: 400, nothing changes', async (_title, id, rule) => {
    const before = await stored();
    const response = await remove(id);
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([expect.objectContaining({ location: 'path', field: 'categoryId', rule })]);
    expect(await stored()).toEqual(before);
  });
});

describe('pets and categories are independent', () => {
  const createPet = (categoryId: number) => t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: 'Thumper', categoryId }) });
  const pet = async (id: number) => ((await list(`/v1/pets?id=${id}`)).json() as unknown[])[0];

  it('a pet keeps its categoryId when the category is renamed, then removed', async () => {
    await named(601, 'Rabbits');
    const created = await createPet(601);
    expect(created.statusCode).toBe(201);
    const { id } = created.json() as { id: number };
    await named(601, 'Hares');
    expect(await pet(id)).toMatchObject({ id, categoryId: 601 });
    expect((await remove(601)).statusCode).toBe(204);
    expect(await pet(id)).toMatchObject({ id, name: 'Thumper', categoryId: 601 });
  });

  it('a pet may carry a categoryId that has no name (as in 1.2), and naming it changes no pet', async () => {
    const created = await createPet(602);
    expect(created.statusCode).toBe(201);
    const { id } = created.json() as { id: number };
    const before = (await stored()).pets;
    expect((await put(602, { name: 'Chinchillas' })).statusCode).toBe(201);
    expect((await stored()).pets).toEqual(before);
    expect(await pet(id)).toMatchObject({ id, categoryId: 602 });
  });
});

describe('listCategories', () => {
  // Ids the clients chose, named out of order.
  const ids = Array.from({ length: 25 }, (_, i) => 1000 + ((i * 7) % 25) * 13);
  beforeAll(async () => {
    await t.pool.query('DELETE FROM categories');
    for (const id of ids) await named(id, `Category ${id}`);
  });

  it('every category once, in id order, over pages of 10 that follow Link rel="next"', async () => {
    const first = await list('/v1/categories?limit=10');
    expect(first.headers.link).toMatch(/^<\/v1\/categories\?limit=10&cursor=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+>; rel="next"$/);
    const all = await pages('/v1/categories?limit=10');
    expect(all.map((page) => page.length)).toEqual([10, 10, 5]);
    const sorted = [...ids].sort((a, b) => a - b);
    expect(all.flat()).toEqual(sorted.map((id) => ({ id, name: `Category ${id}` })));
  });

  it.each([
    ['the default limit (20)', '/v1/categories', [20, 5]],
    ['a page that ends at the last category has no next link', '/v1/categories?limit=25', [25]],
    ['limit=100', '/v1/categories?limit=100', [25]],
  ])('%s', async (_title, url, sizes) => {
    expect((await pages(url)).map((page) => page.length)).toEqual(sizes);
  });

  it('a category named or removed between pages: those after the page show, those before do not', async () => {
    const sorted = [...ids].sort((a, b) => a - b);
    const first = await list('/v1/categories?limit=10');
    await named(1, 'Before the first page');
    await named(5000, 'After every page');
    expect((await remove(sorted[20] as number)).statusCode).toBe(204);
    const rest = (await pages(nextOf(first.headers.link) as string)).flat().map((c) => c.id);
    expect(rest).toEqual([...sorted.slice(10, 20), ...sorted.slice(21), 5000]);
    await remove(1);
    await remove(5000);
    await named(sorted[20] as number, `Category ${sorted[20]}`);
  });

  it('no category: an empty array and no Link', async () => {
    const saved = (await t.pool.query<{ id: string; name: string }>('DELETE FROM categories RETURNING id, name')).rows;
    try {
      const response = await list('/v1/categories');
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual([]);
      expect(response.headers.link).toBeUndefined();
    } finally {
      for (const { id, name } of saved) await t.pool.query('INSERT INTO categories (id, name) VALUES ($1, $2)', [id, name]);
    }
  });

  it('a cursor of listPets is 400, naming both operations', async () => {
    await t.pool.query("INSERT INTO pets (name, category_id) SELECT 'Paged', 1 FROM generate_series(1, 3)");
    const petsCursor = new URL(`http://x${nextOf((await list('/v1/pets?limit=1')).headers.link)}`).searchParams.get('cursor') as string;
    const response = await list(`/v1/categories?limit=10&cursor=${petsCursor}`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      code: 'bad_request',
      message: 'query parameter cursor: belongs to listPets, not listCategories; start again without cursor',
      status: 400,
      details: [{ location: 'query', field: 'cursor', rule: 'cursor', message: 'belongs to listPets, not listCategories; start again without cursor' }],
    });
  });

  it('a cursor of listCategories given to listPets is 400 too', async () => {
    const cursor = new URL(`http://x${nextOf((await list('/v1/categories?limit=10')).headers.link)}`).searchParams.get('cursor') as string;
    const response = await list(`/v1/pets?limit=10&cursor=${cursor}`);
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toBe('query parameter cursor: belongs to listCategories, not listPets; start again without cursor');
  });

  it.each([
    ['limit=0', '/v1/categories?limit=0', 'limit'],
    ['limit=101', '/v1/categories?limit=101', 'limit'],
    ['a cursor that is not ours', '/v1/categories?cursor=abc', 'cursor'],
    ['a parameter listCategories does not take', '/v1/categories?status=sold', 'status'],
  ])('%s: 400', async (_title, url, field) => {
    const response = await list(url);
    expect(response.statusCode).toBe(400);
    expect(response.json().details[0]).toMatchObject({ location: 'query', field });
  });
});
