// Keyset pagination of listPets: Link rel="next", opaque signed cursors.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../src/pagination/cursor.js';
import { buildTestApp, type TestApp } from '../helper.js';

let t: TestApp;
const statuses = ['available', 'pending', 'sold'] as const;
beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '100000' } });
  await t.pool.query(
    `INSERT INTO pets (name, category_id, status)
     SELECT 'pet-' || i, 1, (ARRAY['available', 'pending', 'sold'])[1 + i % 3] FROM generate_series(1, 45) AS i`,
  );
});
afterAll(async () => t.close());

const get = (url: string) => t.api({ method: 'GET', url, headers: t.auth });
const nextOf = (link: unknown): string | undefined => /^<([^>]+)>; rel="next"$/.exec(String(link ?? ''))?.[1];

/** Follows rel="next" from `url` to the end; returns every page's ids. */
async function pages(url: string, between?: () => Promise<void>): Promise<number[][]> {
  const all: number[][] = [];
  let next: string | undefined = url;
  while (next) {
    const response = await get(next);
    expect(response.statusCode).toBe(200);
    all.push(response.json().map((p: { id: number }) => p.id));
    next = nextOf(response.headers.link);
    await between?.();
  }
  return all;
}

describe('pagination', () => {
  it('Link rel="next" until the last page, which has none; every pet once, in order', async () => {
    const first = await get('/v1/pets?limit=20');
    expect(first.headers.link).toMatch(/^<\/v1\/pets\?limit=20&cursor=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+>; rel="next"$/);
    const all = await pages('/v1/pets?limit=20');
    expect(all.map((p) => p.length)).toEqual([20, 20, 5]);
    expect(all.flat()).toEqual(Array.from({ length: 45 }, (_, i) => i + 1));
  });

  it('a page that ends exactly at the last pet has no next link', async () => {
    const response = await get('/v1/pets?limit=100');
    expect(response.json()).toHaveLength(45);
    expect(response.headers.link).toBeUndefined();
  });

  it.each(statuses)('status=%s is carried across pages', async (status) => {
    const first = await get(`/v1/pets?status=${status}&limit=4`);
    expect(nextOf(first.headers.link)).toContain(`status=${status}`);
    const ids = (await pages(`/v1/pets?status=${status}&limit=4`)).flat();
    const expected = (await t.pool.query<{ id: string }>('SELECT id FROM pets WHERE status = $1 ORDER BY id', [status])).rows.map((r) => Number(r.id));
    expect(ids).toEqual(expected);
  });

  it('every pet exactly once while pets are being added', async () => {
    const before = (await t.pool.query<{ id: string }>('SELECT id FROM pets ORDER BY id')).rows.map((r) => Number(r.id));
    let added = 0;
    const seen = (
      await pages('/v1/pets?limit=7', async () => {
        // Between pages, and concurrently with the next request.
        added += 3;
        await Promise.all(Array.from({ length: 3 }, (_, i) => t.api({ method: 'POST', url: '/v1/pets', headers: t.auth, payload: { name: `late-${added}-${i}`, categoryId: 2 } })));
      })
    ).flat();
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen).toContain(id);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
  });

  describe('a cursor that is not one we gave out is a 400', () => {
    let cursor: string;
    beforeAll(async () => {
      cursor = new URL(`http://x${nextOf((await get('/v1/pets?limit=5&status=sold')).headers.link)}`).searchParams.get('cursor') as string;
    });
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);

    it.each([
      ['an altered payload', () => flip(cursor, 3)],
      ['an altered signature', () => flip(cursor, cursor.length - 2)],
      ['a cursor signed with another secret (another deployment)', () => createCursorCodec(randomBytes(32)).encode({ after: 3, filter: 'sold' })],
      ['a payload that is not ours', () => `${Buffer.from('{"a":"x"}').toString('base64url')}.${cursor.split('.')[1]}`],
    ])('%s', async (_title, make) => {
      const response = await get(`/v1/pets?limit=5&status=sold&cursor=${make()}`);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ code: 'bad_request', status: 400, details: [{ location: 'query', field: 'cursor' }] });
      expect(response.json().message).toMatch(/^query parameter cursor: (was altered or comes from elsewhere|is not a cursor from this API); start again without cursor$/);
    });

    it('a cursor used with another status filter', async () => {
      const response = await get(`/v1/pets?limit=5&status=pending&cursor=${cursor}`);
      expect(response.statusCode).toBe(400);
      expect(response.json().message).toContain('another status filter');
    });

    it.each([
      ['not of the cursor form', 'abc'],
      ['too long', `${'a'.repeat(150)}.${'b'.repeat(60)}`],
    ])('a cursor %s fails validation', async (_title, given) => {
      const response = await get(`/v1/pets?cursor=${given}`);
      expect(response.statusCode).toBe(400);
      expect(response.json().details[0]).toMatchObject({ location: 'query', field: 'cursor' });
    });
  });
});

describe('a cursor is bound to the operation that made it', () => {
  const cursorOf = (link: unknown): string => new URL(`http://x${nextOf(link)}`).searchParams.get('cursor') as string;
  let ordersCursor: string;
  beforeAll(async () => {
    const available = (await get('/v1/pets?status=available&limit=2')).json() as { id: number }[];
    for (const pet of available) {
      const placed = await t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, 'content-type': 'application/json' }, payload: { petId: pet.id } });
      expect(placed.statusCode).toBe(201);
    }
    ordersCursor = cursorOf((await get('/v1/store/orders?limit=1')).headers.link);
  });

  it.each(['', '&status=sold', '&id=1&id=2', '&status=available&id=3'])('a listOrders cursor given to listPets%s is 400, naming both', async (filters) => {
    const response = await get(`/v1/pets?limit=5${filters}&cursor=${ordersCursor}`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'bad_request', details: [{ location: 'query', field: 'cursor' }] });
    expect(response.json().message).toBe('query parameter cursor: belongs to listOrders, not listPets; start again without cursor');
  });

  it('a listPets cursor given to listOrders is 400, naming both', async () => {
    const petsCursor = cursorOf((await get('/v1/pets?limit=1')).headers.link);
    const response = await get(`/v1/store/orders?limit=1&cursor=${petsCursor}`);
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toBe('query parameter cursor: belongs to listPets, not listOrders; start again without cursor');
  });

  it('a cursor made before cursors named their operation (contract 1.2.0) still pages', async () => {
    const secret = (await t.pool.query<{ value: Buffer }>("SELECT value FROM service_secrets WHERE name = 'cursor'")).rows[0]?.value as Buffer;
    // The 1.2.0 payload: {"a": after, "s": the status}, no operation.
    const legacy = createCursorCodec(secret).encode({ after: 20, filter: 'sold' });
    expect(JSON.parse(Buffer.from(legacy.split('.')[0] as string, 'base64url').toString())).toEqual({ a: 20, s: 'sold' });
    const response = await get(`/v1/pets?limit=100&status=sold&cursor=${legacy}`);
    expect(response.statusCode).toBe(200);
    const expected = (await t.pool.query<{ id: string }>("SELECT id FROM pets WHERE status = 'sold' AND id > 20 ORDER BY id")).rows.map((r) => Number(r.id));
    expect(response.json().map((p: { id: number }) => p.id)).toEqual(expected);
    expect((await get(`/v1/pets?limit=100&status=pending&cursor=${legacy}`)).statusCode).toBe(400);
  });
});
