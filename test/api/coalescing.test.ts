// Creates that arrive together are written together (src/db/coalesce.ts): each still gets
// its own pet back, and one that the database refuses fails alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helper.js';

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
      expect(pet).toEqual({ id: pet.id, ...inputs[i] });
      expect(r.headers.location).toBe(`/v1/pets/${pet.id}`);
      return pet;
    });
    const ids = pets.map((p) => p.id);
    expect(new Set(ids).size).toBe(60);

    const stored = await t.pool.query<{ id: string; name: string; category_id: string; status: string | null; tx: string }>(
      'SELECT id, name, category_id, status, xmin::text AS tx FROM pets WHERE id = ANY($1::bigint[]) ORDER BY id',
      [ids],
    );
    expect(stored.rows.map((r) => ({ id: Number(r.id), name: r.name, categoryId: Number(r.category_id), ...(r.status ? { status: r.status } : {}) }))).toEqual(
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
});
