// Creates that arrive together are written together, and lookups and lists that arrive
// together are one query, whatever their kinds (src/db/coalesce.ts, src/catalogue/pets.ts): each
// request still gets its own answer, and a create that the database refuses fails alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, recordQueries, type TestApp, PET_TIMES } from '../helper.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t.close());

const create = (pet: Record<string, unknown>) =>
  t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, 'content-type': 'application/json' }, payload: pet });
const statuses = ['available', 'pending', 'sold', undefined] as const;

describe('concurrent creates', () => {
  it('60 at once: each answer is its own pet, ids are distinct, and they shared commits', async () => {
    const inputs = Array.from({ length: 60 }, (_, i) => ({ name: `Pet ${i}`, categoryId: 1 + i, ...(statuses[i % 4] ? { status: statuses[i % 4] } : {}) }));
    const responses = await Promise.all(inputs.map(create));
    const pets = responses.map((r, i) => {
      expect(r.statusCode).toBe(201);
      const pet = r.json() as { id: number };
      expect(pet).toEqual({ id: pet.id, ...inputs[i], ...PET_TIMES });
      expect(r.headers.location).toBe(`/v1/pets/${pet.id}`);
      return pet;
    });
    const ids = pets.map((p) => p.id);
    expect(new Set(ids).size).toBe(60);

    const stored = await t.pool.query<{ id: string; name: string; category_id: string; status: string | null; tx: string }>(
      'SELECT id, name, category_id, status, xmin::text AS tx FROM pets WHERE id = ANY($1::bigint[]) ORDER BY id',
      [ids],
    );
    expect(stored.rows.map((r) => ({ id: Number(r.id), name: r.name, categoryId: Number(r.category_id), ...(r.status ? { status: r.status } : {}), ...PET_TIMES }))).toEqual(
      [...pets].sort((a, b) => a.id - b.id),
    );
    // Rows written by one transaction share its xmin: fewer transactions than creates.
    expect(new Set(stored.rows.map((r) => r.tx)).size).toBeLessThan(60);
  });

  it('a create the database refuses fails alone; the others arriving with it are stored', async () => {
    await t.pool.query("ALTER TABLE pets ADD CONSTRAINT test_refuse CHECK (name <> 'Refused')");
    try {
      const names = ['A', 'B', 'Refused', 'C', 'D'];
      const responses = await Promise.all(names.map((name) => create({ name, categoryId: 1 })));
      expect(responses.map((r) => r.statusCode)).toEqual([201, 201, 500, 201, 201]);
      expect(responses[2]?.json()).toMatchObject({ code: 'internal', status: 500 });
      const ids = responses.filter((r) => r.statusCode === 201).map((r) => (r.json() as { id: number }).id);
      // Retried one by one, in parallel: stored, in whatever order they committed.
      const stored = await t.pool.query<{ name: string }>('SELECT name FROM pets WHERE id = ANY($1::bigint[]) ORDER BY name', [ids]);
      expect(stored.rows.map((r) => r.name)).toEqual(['A', 'B', 'C', 'D']);
    } finally {
      await t.pool.query('ALTER TABLE pets DROP CONSTRAINT test_refuse');
    }
  });

  it('getPet, 80 at once over existing and missing ids: each gets its own pet or its own 404', async () => {
    const created = await Promise.all(Array.from({ length: 20 }, (_, i) => create({ name: `Lookup ${i}`, categoryId: 7 })));
    const pets = created.map((r) => r.json() as { id: number; name: string });
    const missing = Math.max(...pets.map((p) => p.id)) + 1000;
    const wanted = Array.from({ length: 80 }, (_, i) => (i % 4 === 3 ? missing + i : (pets[i % 20] as { id: number }).id));
    const responses = await Promise.all(wanted.map((id) => t.api({ method: 'GET', url: `/v1/pets/${id}`, headers: t.auth })));
    responses.forEach((r, i) => {
      const id = wanted[i] as number;
      if (id >= missing) {
        expect(r.statusCode).toBe(404);
        expect(r.json()).toEqual({ code: 'not_found', message: `Pet ${id} does not exist`, status: 404 });
      } else {
        expect(r.statusCode).toBe(200);
        expect(r.json()).toEqual(pets.find((p) => p.id === id));
      }
    });
  });

  it('listPets, 90 at once over different pages, statuses, limits and repeats: each gets the page it gets alone', async () => {
    await Promise.all(Array.from({ length: 30 }, (_, i) => create({ name: `List ${i}`, categoryId: 2, ...(statuses[i % 4] ? { status: statuses[i % 4] } : {}) })));
    const list = (url: string) => t.api({ method: 'GET', url, headers: t.auth });
    // Second pages through the cursor each first page hands out.
    const firsts = ['/v1/pets?limit=3', '/v1/pets?limit=2&status=available', '/v1/pets?limit=4&status=sold', '/v1/pets?limit=1&status=pending'];
    const seconds = await Promise.all(firsts.map(async (url) => /<([^>]+)>/.exec(String((await list(url)).headers.link))?.[1] as string));
    expect(seconds.every((url) => url?.includes('cursor='))).toBe(true);
    const urls = [...firsts, ...seconds, '/v1/pets?limit=100', '/v1/pets?limit=100&status=available', '/v1/pets?limit=7&status=pending'];
    const alone: { status: number; body: unknown; link: unknown }[] = [];
    for (const url of urls) {
      const r = await list(url);
      alone.push({ status: r.statusCode, body: r.json() as unknown, link: r.headers.link });
    }
    const wanted = Array.from({ length: 90 }, (_, i) => i % urls.length);
    const together = await Promise.all(wanted.map((n) => list(urls[n] as string)));
    together.forEach((r, i) => expect({ status: r.statusCode, body: r.json() as unknown, link: r.headers.link }).toEqual(alone[wanted[i] as number]));
  });

  it('lookups and pages of every kind at once: each gets what it gets alone, and together they are one statement', async () => {
    await Promise.all(Array.from({ length: 12 }, (_, i) => create({ name: `Mixed ${i}`, categoryId: 3, ...(statuses[i % 4] ? { status: statuses[i % 4] } : {}) })));
    const newest = ((await t.api({ method: 'GET', url: '/v1/pets?limit=100', headers: t.auth })).json() as { id: number }[]).map((p) => p.id);
    const urls = [
      `/v1/pets/${newest[0]}`,
      '/v1/pets?limit=5',
      '/v1/pets?limit=3&status=sold',
      `/v1/pets/${newest[1]}`,
      '/v1/pets/999999999',
      '/v1/pets?limit=2&status=available',
      '/v1/pets?limit=5',
      `/v1/pets/${newest[0]}`,
    ];
    const get = (url: string) => t.api({ method: 'GET', url, headers: t.auth });
    const alone: { status: number; body: unknown; link: unknown }[] = [];
    for (const url of urls) {
      const r = await get(url);
      alone.push({ status: r.statusCode, body: r.json() as unknown, link: r.headers.link });
    }
    // Statements the app sends while the batch is answered (its pool is the test's).
    const queries = recordQueries(t.pool);
    try {
      const together = await Promise.all(urls.map(get));
      together.forEach((r, i) => expect({ status: r.statusCode, body: r.json() as unknown, link: r.headers.link }, urls[i]).toEqual(alone[i]));
    } finally {
      queries.restore();
    }
    expect(queries.requests()).toEqual(['pets-read-many']);
  });

  it('a list sent after a create was answered includes it, also among lists sent with it', async () => {
    const created = (await create({ name: 'Seen', categoryId: 4, status: 'pending' })).json() as { id: number };
    const pages = await Promise.all(Array.from({ length: 20 }, () => t.api({ method: 'GET', url: '/v1/pets?limit=100&status=pending', headers: t.auth })));
    // Every pending pet fits in one page of 100 here; the new one is the last of them.
    for (const page of pages) expect((page.json() as { id: number }[]).at(-1)).toEqual({ id: created.id, name: 'Seen', categoryId: 4, status: 'pending', ...PET_TIMES });
  });
});

describe('concurrent changes and removals', () => {
  const patch = (id: number, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.api({ method: 'PATCH', url: `/v1/pets/${id}`, headers: { ...t.auth, 'content-type': 'application/merge-patch+json', ...headers }, payload: JSON.stringify(body) });
  const remove = (id: number, headers: Record<string, string> = {}) => t.api({ method: 'DELETE', url: `/v1/pets/${id}`, headers: { ...t.auth, ...headers } });

  it('sent at once, each is decided as alone on the newest version, and together they share statements and commits', async () => {
    const made = await Promise.all(Array.from({ length: 8 }, (_, i) => create({ name: `Changed ${i}`, categoryId: 9, status: 'available' })));
    const pets = made.map((r) => ({ id: (r.json() as { id: number }).id, etag: r.headers.etag as string }));
    const [a, b, c, d, e, f, g, h] = pets as [typeof pets[0], typeof pets[0], typeof pets[0], typeof pets[0], typeof pets[0], typeof pets[0], typeof pets[0], typeof pets[0]];
    // g is pending: an order holds it.
    expect((await t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ petId: g.id }) })).statusCode).toBe(201);
    const queries = recordQueries(t.pool);
    let answers: Awaited<ReturnType<typeof patch>>[];
    try {
      answers = await Promise.all([
        patch(a.id, { name: 'Renamed' }),
        // Two changes of one pet, both against its first ETag: the first wins, the second finds it changed.
        patch(b.id, { name: 'First' }, { 'if-match': b.etag }),
        patch(b.id, { name: 'Second' }, { 'if-match': b.etag }),
        patch(c.id, { status: 'sold', categoryId: 10 }),
        patch(999_999_999, { name: 'Nobody' }),
        patch(g.id, { status: 'available' }),
        remove(d.id),
        remove(e.id, { 'if-match': '"nope"' }),
        remove(g.id),
        patch(f.id, {}),
        remove(h.id, { 'if-match': h.etag }),
      ]);
    } finally {
      queries.restore();
    }
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 412, 200, 404, 409, 204, 412, 409, 200, 204]);
    expect(answers[0]?.json()).toEqual({ id: a.id, name: 'Renamed', categoryId: 9, status: 'available', ...PET_TIMES });
    expect(answers[1]?.json()).toEqual({ id: b.id, name: 'First', categoryId: 9, status: 'available', ...PET_TIMES });
    expect(answers[3]?.json()).toEqual({ id: c.id, name: 'Changed 2', categoryId: 10, status: 'sold', ...PET_TIMES });
    expect(answers[9]?.json()).toEqual({ id: f.id, name: 'Changed 5', categoryId: 9, status: 'available', ...PET_TIMES });
    const stored = async (id: number) => (await t.pool.query('SELECT name, category_id::int AS category, status, deleted_at IS NOT NULL AS removed FROM pets WHERE id = $1', [id])).rows[0];
    expect(await stored(b.id)).toEqual({ name: 'First', category: 9, status: 'available', removed: false });
    expect(await stored(d.id)).toMatchObject({ removed: true });
    expect(await stored(e.id)).toMatchObject({ removed: false });
    expect(await stored(g.id)).toEqual({ name: 'Changed 6', category: 9, status: 'pending', removed: false });
    expect(await stored(h.id)).toMatchObject({ removed: true });
    // Eleven requests, far fewer statements: the changes of one turn are one statement a
    // round (b's second change is a round of its own), the removals another.
    const writes = queries.requests().filter((name) => /^pets-(update|remove)/.test(name));
    expect(writes.length).toBeLessThan(6);
    expect(writes).toContain('pets-update-many');
  });
});
