// `npm run seed` (src/cli/seed.ts): the sample catalogue the README's first requests name,
// read back through the API; a second run adds nothing; `apikey --help` is the usage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp, PET_TIMES } from '../helper.js';
import { apikey, runTs } from '../process.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t.close());

const seed = () => runTs('src/cli/seed.ts', [], { DATABASE_URL: t.url });
const counts = async () => (await t.pool.query('SELECT (SELECT count(*) FROM pets) AS pets, (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM categories) AS categories, (SELECT count(*) FROM events) AS events')).rows[0];

describe('npm run seed', () => {
  it('adds categories, a pet in every status and its orders, owned by the oldest key that may order; once', async () => {
    const first = await seed();
    expect(first.code, first.stderr).toBe(0);
    // The test's key (every scope) owns the orders: no new key is printed.
    expect(first.stdout).toBe('');
    const categories = await t.api({ method: 'GET', url: '/v1/categories', headers: t.auth });
    expect(categories.json()).toEqual([
      { id: 1, name: 'Dogs' },
      { id: 2, name: 'Cats' },
      { id: 3, name: 'Birds' },
    ]);
    const inventory = await t.api({ method: 'GET', url: '/v1/store/inventory', headers: t.auth });
    expect(inventory.json()).toEqual({ available: 3, pending: 1, sold: 1, noStatus: 1 });
    const orders = (await t.api({ method: 'GET', url: '/v1/store/orders', headers: t.auth })).json() as { status: string }[];
    expect(orders.map((o) => o.status)).toEqual(['placed', 'completed']);
    // The README's first requests: pets of category 1, and one of them by id.
    const dogs = (await t.api({ method: 'GET', url: '/v1/pets?categoryId=1', headers: t.auth })).json() as { name: string }[];
    expect(dogs.map((p) => p.name)).toEqual(['Rex', 'Max']);
    expect((await t.api({ method: 'GET', url: '/v1/pets?id=1', headers: t.auth })).json()).toEqual([{ id: 1, name: 'Rex', categoryId: 1, status: 'available', ...PET_TIMES }]);

    const before = await counts();
    const again = await seed();
    expect(again.code, again.stderr).toBe(0);
    expect(await counts()).toEqual(before);
  });

  it('apikey --help prints the usage and exits 0', async () => {
    const help = await apikey(['--help'], t.url);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: apikey create <name>/);
  });
});
