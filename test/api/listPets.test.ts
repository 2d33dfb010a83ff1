// GET /v1/pets (listPets): docs/interface.md 4.1 and 8.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp, PET_TIMES, queryParameters } from '../helper.js';

let t: TestApp;
const statuses = ['available', 'pending', 'sold', undefined] as const;

beforeAll(async () => {
  t = await buildTestApp();
  // 130 pets, statuses in rotation (pending, sold, none, available, ...), so every limit and filter has more than it may return.
  for (let i = 1; i <= 130; i++) {
    const status = statuses[i % 4];
    await t.pool.query('INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3)', [`pet-${i}`, (i % 5) + 1, status ?? null]);
  }
});
afterAll(async () => t.close());

const list = (query: string, headers = t.auth) => t.api({ method: 'GET', url: `/v1/pets${query}`, headers });

describe('listPets', () => {
  it.each([
    ['no limit gives the default, 20', { given: '', want: 20 }],
    ['limit=1, the minimum', { given: '?limit=1', want: 1 }],
    ['limit=57', { given: '?limit=57', want: 57 }],
    ['limit=100, the maximum', { given: '?limit=100', want: 100 }],
  ])('%s', async (_title, { given, want }) => {
    const response = await list(given);
    expect(response.statusCode).toBe(200);
    const pets = response.json();
    expect(Array.isArray(pets)).toBe(true);
    expect(pets).toHaveLength(want);
    expect(pets[0]).toEqual({ id: 1, name: 'pet-1', categoryId: 2, status: 'pending', ...PET_TIMES });
  });

  it('orders by id ascending, the same on every call', async () => {
    const first = (await list('?limit=100')).json();
    const ids = first.map((p: { id: number }) => p.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect((await list('?limit=100')).json()).toEqual(first);
  });

  it.each(['available', 'pending', 'sold'])('status=%s keeps only that status, in id order', async (status) => {
    const pets = (await list(`?status=${status}&limit=100`)).json();
    expect(pets.length).toBeGreaterThan(30);
    for (const pet of pets) expect(pet.status).toBe(status);
    const ids = pets.map((p: { id: number }) => p.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('a pet created without status is listed without a status property', async () => {
    const pets = (await list('?limit=4')).json();
    expect(pets[2]).toEqual({ id: 3, name: 'pet-3', categoryId: 4, ...PET_TIMES });
  });

  it('limit and status combine', async () => {
    const pets = (await list('?status=sold&limit=3')).json();
    expect(pets.map((p: { id: number }) => p.id)).toEqual([2, 6, 10]);
  });

  it('an empty catalogue is an empty array', async () => {
    const empty = await buildTestApp();
    try {
      const response = await empty.api({ method: 'GET', url: '/v1/pets', headers: empty.auth });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual([]);
    } finally {
      await empty.close();
    }
  });

  it.each([
    ['limit=0', { given: '?limit=0', want: { field: 'limit', rule: 'minimum' } }],
    ['limit=101', { given: '?limit=101', want: { field: 'limit', rule: 'maximum' } }],
    ['limit=-5', { given: '?limit=-5', want: { field: 'limit', rule: 'minimum' } }],
    ['limit=abc', { given: '?limit=abc', want: { field: 'limit', rule: 'type' } }],
    ['limit=1.5', { given: '?limit=1.5', want: { field: 'limit', rule: 'type' } }],
    ['limit= (empty)', { given: '?limit=', want: { field: 'limit', rule: 'type' } }],
    ['limit given twice', { given: '?limit=5&limit=6', want: { field: 'limit', rule: 'once' } }],
    ['status=lost', { given: '?status=lost', want: { field: 'status', rule: 'enum' } }],
    ['status=AVAILABLE (case matters)', { given: '?status=AVAILABLE', want: { field: 'status', rule: 'enum' } }],
  ])('%s is a 400 naming the parameter and the rule', async (_title, { given, want }) => {
    const response = await list(given);
    expect(response.statusCode).toBe(400);
    const body = response.json();
    expect(body).toMatchObject({ code: 'bad_request', status: 400 });
    expect(body.message).toContain(`query parameter ${want.field}`);
    expect(body.details).toEqual([expect.objectContaining({ location: 'query', ...want })]);
  });

  // Ignored up to 1.1.0: a typo (`stauts`) answered unfiltered pets and no error.
  it.each([
    ['page=3', { given: '?limit=2&page=3', field: 'page' }],
    ['a typo of status', { given: '?stauts=sold&limit=2', field: 'stauts' }],
  ])('a query parameter the contract does not define (%s) is a 400 naming it and the parameters listPets takes', async (_title, { given, field }) => {
    const response = await list(given);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      code: 'bad_request',
      message: `query parameter ${field}: is not a parameter of listPets (it takes ${queryParameters('listPets')})`,
      status: 400,
      details: [{ location: 'query', field, rule: 'unknown', message: `is not a parameter of listPets (it takes ${queryParameters('listPets')})` }],
    });
  });
});
