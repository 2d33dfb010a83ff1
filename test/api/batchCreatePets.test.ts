// POST /v1/pets:batchCreate (batchCreatePets): up to 1,000 pets in one request, all stored
// or none; a refused batch names each bad item by its index and field, stores nothing and
// writes no event; more than 1,000 items is refused saying the limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp, PET_TIMES } from '../helper.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '100000' } });
});
afterAll(async () => t.close());

const json = { 'content-type': 'application/json' };
const batch = (payload: unknown, headers: Record<string, string> = {}) =>
  t.api({ method: 'POST', url: '/v1/pets:batchCreate', headers: { ...t.auth, ...json, ...headers }, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });

/** How many pets and pet.created events are stored. */
async function stored(): Promise<{ pets: number; events: number }> {
  const { rows } = await t.pool.query<{ pets: string; events: string }>("SELECT (SELECT count(*) FROM pets) AS pets, (SELECT count(*) FROM events WHERE type = 'pet.created') AS events");
  return { pets: Number(rows[0]?.pets), events: Number(rows[0]?.events) };
}

const many = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ name: `${prefix} ${i}`, categoryId: (i % 3) + 1, status: 'available' }));

describe('batchCreatePets stores every pet', () => {
  it('answers 200 with the stored pets in the order given, ids ascending, each with its pet.created event', async () => {
    const before = await stored();
    const requests = [{ name: 'Rex', categoryId: 2, status: 'available' }, { name: 'Tom', categoryId: 3 }, { name: 'Kit', categoryId: 1, status: 'pending' }];
    const response = await batch({ requests });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers.location).toBeUndefined();
    const { pets } = response.json() as { pets: { id: number }[] };
    expect(pets).toEqual(requests.map((r) => ({ id: expect.any(Number), ...r, ...PET_TIMES })));
    expect(pets.map((p) => p.id)).toEqual([...pets.map((p) => p.id)].sort((a, b) => a - b));
    expect(await stored()).toEqual({ pets: before.pets + 3, events: before.events + 3 });
    const { rows } = await t.pool.query<{ id: string }>("SELECT data::jsonb->>'id' AS id FROM events WHERE type = 'pet.created' AND (data::jsonb->>'id')::bigint = ANY ($1::bigint[]) ORDER BY id", [pets.map((p) => p.id)]);
    expect(rows.map((r) => Number(r.id))).toEqual(pets.map((p) => p.id));
    // Each reads back as answered.
    const read = await t.api({ method: 'GET', url: `/v1/pets?${pets.map((p) => `id=${p.id}`).join('&')}`, headers: t.auth });
    expect(read.json()).toEqual(pets);
  });

  it('takes 1,000 pets in one request', async () => {
    const before = await stored();
    const response = await batch({ requests: many(1000, 'Thousand') });
    expect(response.statusCode, response.body.slice(0, 300)).toBe(200);
    expect((response.json() as { pets: unknown[] }).pets).toHaveLength(1000);
    expect(await stored()).toEqual({ pets: before.pets + 1000, events: before.events + 1000 });
  });

  it('takes a body over 64 KiB, up to 1 MiB', async () => {
    const requests = many(1000, 'Large').map((p, i) => ({ ...p, name: `${'L'.repeat(90)} ${i}` }));
    const payload = JSON.stringify({ requests });
    expect(payload.length).toBeGreaterThan(64 * 1024);
    const response = await batch(payload);
    expect(response.statusCode, response.body.slice(0, 300)).toBe(200);
  });
});

describe('batchCreatePets refuses a bad batch whole: 400, nothing stored, no event', () => {
  it.each([
    ['one item without a name', { requests: [{ name: 'Good', categoryId: 1 }, { categoryId: 1 }], fields: [['/requests/1/name', 'required']] }],
    ['one item with a string categoryId', { requests: [{ name: 'Good', categoryId: 1 }, { name: 'Bad', categoryId: '2' }], fields: [['/requests/1/categoryId', 'type']] }],
    ['an unknown field on the last item', { requests: [{ name: 'Good', categoryId: 1 }, { name: 'Bad', categoryId: 1, id: 7 }], fields: [['/requests/1/id', 'additionalProperties']] }],
    [
      'two bad items',
      {
        requests: [{ name: 'Good', categoryId: 1 }, { categoryId: 1 }, { name: 'Bad', categoryId: 'x' }],
        fields: [
          ['/requests/1/name', 'required'],
          ['/requests/2/categoryId', 'type'],
        ],
      },
    ],
    ['a status outside the enum', { requests: [{ name: 'Good', categoryId: 1, status: 'lost' }], fields: [['/requests/0/status', 'enum']] }],
    ['no items', { requests: [], fields: [['/requests', 'minItems']] }],
    ['no requests', { requests: undefined, fields: [['/requests', 'required']] }],
  ])('%s', async (_title, { requests, fields }) => {
    const before = await stored();
    const response = await batch({ requests });
    expect(response.statusCode).toBe(400);
    const body = response.json() as { code: string; message: string; details: { field: string; rule: string }[] };
    expect(body.code).toBe('bad_request');
    expect(body.details.map((d) => [d.field, d.rule])).toEqual(fields);
    expect(body.message.startsWith(`body ${fields[0]?.[0]}: `)).toBe(true);
    expect(await stored()).toEqual(before);
  });

  it('a batch of 1,000 with a bad item at index 999 stores none of the 999 good ones', async () => {
    const before = await stored();
    const requests: unknown[] = many(1000, 'Atomic');
    requests[999] = { name: '', categoryId: 1 };
    const response = await batch({ requests });
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([{ location: 'body', field: '/requests/999/name', rule: 'minLength', message: 'must NOT have fewer than 1 characters' }]);
    expect(await stored()).toEqual(before);
  });

  it('many bad items: details stays at 20 and the message says how many there were', async () => {
    const before = await stored();
    const requests = Array.from({ length: 50 }, () => ({ categoryId: 1 }));
    const response = await batch({ requests });
    expect(response.statusCode).toBe(400);
    const body = response.json() as { message: string; details: { field: string }[] };
    expect(body.details).toHaveLength(20);
    expect(body.details.map((d) => d.field)).toEqual(Array.from({ length: 20 }, (_, i) => `/requests/${i}/name`));
    expect(body.message).toBe("body /requests/0/name: must have required property 'name' (and 49 more problems; details lists the first 20)");
    expect(await stored()).toEqual(before);
  });

  it('1,001 items is 400 naming the limit of 1000', async () => {
    const before = await stored();
    const response = await batch({ requests: many(1001, 'Over') });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'bad_request', message: 'body /requests: must NOT have more than 1000 items', details: [{ field: '/requests', rule: 'maxItems' }] });
    expect(await stored()).toEqual(before);
  });

  it('a body over 1 MiB is 413 saying the limit', async () => {
    const before = await stored();
    const response = await batch({ requests: [{ name: 'x'.repeat(1_100_000), categoryId: 1 }] });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toEqual({ code: 'payload_too_large', message: 'Request body is larger than 1048576 bytes: send at most 1048576', status: 413 });
    expect(await stored()).toEqual(before);
  });

  it('a key without pets:write is 403', async () => {
    const made = await t.api({ method: 'POST', url: '/v1/api-keys', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: 'reader', scopes: ['pets:read'] }) });
    expect(made.statusCode).toBe(201);
    const before = await stored();
    const response = await batch({ requests: [{ name: 'Rex', categoryId: 1 }] }, { authorization: `Bearer ${made.json().secret}` });
    expect(response.statusCode).toBe(403);
    expect(response.json().message).toContain('pets:write');
    expect(await stored()).toEqual(before);
  });
});

describe('batchCreatePets with an Idempotency-Key', () => {
  it('a retry replays the same pets and stores nothing more', async () => {
    const body = { requests: many(3, 'Retry') };
    const first = await batch(body, { 'idempotency-key': 'batch-retry' });
    expect(first.statusCode).toBe(200);
    const before = await stored();
    const again = await batch(body, { 'idempotency-key': 'batch-retry' });
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect(await stored()).toEqual(before);
  });
});

describe('the path with a colon is routed as written', () => {
  it.each([
    ['GET /v1/pets:batchCreate', 'GET', '/v1/pets:batchCreate', 405, 'POST'],
    ['DELETE /v1/pets:export', 'DELETE', '/v1/pets:export', 405, 'GET, HEAD'],
    ['POST /v1/pets:batchcreate (another case)', 'POST', '/v1/pets:batchcreate', 404, undefined],
    ['POST /v1/pets:delete (no such method)', 'POST', '/v1/pets:delete', 404, undefined],
  ])('%s', async (_title, method, url, status, allow) => {
    const response = await t.api({ method, url, headers: t.auth });
    expect(response.statusCode).toBe(status);
    expect(response.headers.allow).toBe(allow);
  });
});
