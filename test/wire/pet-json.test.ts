// getPet and listPets answer with each pet's JSON as PostgreSQL builds it from the row
// (pet_json, generated/pet-json.sql), joined by PostgreSQL and sent as it is
// (src/db/serialized.ts); createPet's answer is serialized by Fastify from the
// contract's schema. Over a real socket, these hold the two against each other byte for
// byte, and against JSON.stringify, for names that need escaping, pets written around the
// service, and pets whose status an order changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { specDocument } from '../contract.js';
import { call, listen, type ListeningApp, type RawAnswer } from '../support/wire.js';

let t: ListeningApp;
beforeAll(async () => {
  t = await listen();
});
afterAll(async () => t.close());

const get = (target: string) => call(t.port, { method: 'GET', target, headers: t.auth });
const post = (target: string, body?: unknown) =>
  call(t.port, { method: 'POST', target, headers: { ...t.auth, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

/** What every JSON answer of the contract carries, whoever wrote its body. */
function expectJsonAnswer(answer: RawAnswer, status: number, body: string): void {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(answer.headers['content-length']).toBe(String(Buffer.byteLength(answer.body)));
  expect(answer.body).toBe(body);
}

interface NewPet {
  name: string;
  categoryId: number;
  status?: 'available' | 'pending' | 'sold';
}

/** The Pet schema's properties, in its order: the order of a pet's keys (docs/decisions/0003). */
const PET_KEYS = Object.keys(specDocument.components.schemas.Pet.properties as Record<string, unknown>);
/** A pet as JSON.stringify writes it, its keys in the Pet schema's order, those it lacks left out. */
function petJson(pet: Record<string, unknown>): string {
  expect(Object.keys(pet).filter((key) => !PET_KEYS.includes(key)), 'keys the Pet schema does not have').toEqual([]);
  return JSON.stringify(Object.fromEntries(PET_KEYS.filter((key) => pet[key] !== undefined).map((key) => [key, pet[key]])));
}

/** A Pet's createdAt and updatedAt: RFC 3339, UTC, to the millisecond. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** The pet's times as the database writes them into its JSON (json_instant). */
async function timesOf(id: number): Promise<{ createdAt: string; updatedAt: string }> {
  const row = (await t.pool.query<{ created_at: string; updated_at: string }>('SELECT json_instant(created_at) AS created_at, json_instant(updated_at(pets)) AS updated_at FROM pets WHERE id = $1', [id])).rows[0];
  expect(row?.created_at).toMatch(INSTANT);
  expect(row?.updated_at).toMatch(INSTANT);
  return { createdAt: row?.created_at as string, updatedAt: row?.updated_at as string };
}

describe("a pet's JSON, as the database keeps it, is the JSON the contract's serializer writes", () => {
  it.each([
    ['a plain name', { given: { name: 'Rex', categoryId: 2, status: 'available' } }],
    ['no status (left out, not null)', { given: { name: 'Nameless', categoryId: 1 } }],
    ['quotes and backslashes', { given: { name: 'Say "hi" \\ back\\slash \\"', categoryId: 3, status: 'sold' } }],
    ['non-ASCII: accents, CJK, an emoji (a surrogate pair in JavaScript)', { given: { name: 'Ça 日本 🐕 ok', categoryId: 5, status: 'pending' } }],
    ['line and paragraph separators, a slash, markup', { given: { name: '\u2028\u2029 </script><b>&amp;</b> a/b', categoryId: 6, status: 'available' } }],
    ['the longest name (100 characters) and the largest category', { given: { name: 'é'.repeat(100), categoryId: Number.MAX_SAFE_INTEGER, status: 'sold' } }],
  ] as [string, { given: NewPet }][])('%s', async (_title, { given }) => {
    const created = await post('/v1/pets', given);
    expect(created.status, created.text).toBe(201);
    const id = (created.json as { id: number }).id;
    // The times are the service's: createdAt at the insert, updatedAt the same until a change.
    const times = await timesOf(id);
    expect(times.updatedAt).toBe(times.createdAt);
    expect(created.json).toEqual({ id, ...given, ...times });
    // The contract's Pet, keys in its order, as JSON.stringify writes it.
    const want = petJson({ id, ...given, ...times });

    expectJsonAnswer(await get(`/v1/pets/${id}`), 200, want);
    expectJsonAnswer(await get(`/v1/pets?id=${id}`), 200, `[${want}]`);
    if (given.status) expectJsonAnswer(await get(`/v1/pets?id=${id}&status=${given.status}`), 200, `[${want}]`);
    // Written by Fastify from the contract's schema: the same bytes.
    expect(created.body).toBe(want);
  });

  // The contract keeps control characters out of names that createPet takes; the table does
  // not, so a row written around the service may hold them, and its JSON still escapes them
  // (short escapes, and \u00XX for the others) as JSON.stringify does.
  // Each character JSON escapes is also alone in a name, so that a name is escaped whenever it
  // holds any one of them (pet_json quotes a name that holds none as it is).
  it.each([
    'Loaded "by hand": tab\there\nline\rret\bbs\fff\u0001\u001f\u007f\u0080\u009f end',
    'only a quote: "',
    'only a backslash: C:\\pets',
    'only a tab:\t',
    '\u0001 first',
    'last \u001f',
  ])('a pet inserted around the service (psql, a data load), control characters and all, reads back as JSON.stringify writes it: %j', async (name) => {
    const pet = { name, categoryId: 9, status: 'pending' as const };
    const id = Number((await t.pool.query<{ id: string }>('INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING id', [pet.name, pet.categoryId, pet.status])).rows[0]?.id);
    const times = await timesOf(id);
    expect(times.updatedAt).toBe(times.createdAt);
    expectJsonAnswer(await get(`/v1/pets/${id}`), 200, petJson({ id, ...pet, ...times }));
  });

  it('pages are arrays of the same JSON, joined with commas, and an empty page is []', async () => {
    const answers = [];
    for (const name of ['One', 'Two "2"', 'Three']) answers.push((await post('/v1/pets', { name, categoryId: 8, status: 'sold' })).body);
    const ids = answers.map((body) => (JSON.parse(body) as { id: number }).id);
    const pets = [];
    for (const [i, name] of ['One', 'Two "2"', 'Three'].entries()) pets.push(petJson({ id: ids[i], name, categoryId: 8, status: 'sold', ...(await timesOf(ids[i] as number)) }));
    const first = await get(`/v1/pets?limit=2&id=${ids.join('&id=')}`);
    expectJsonAnswer(first, 200, `[${pets[0]},${pets[1]}]`);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.link ?? '')?.[1];
    expect(next).toBeDefined();
    const last = await get(next as string);
    expectJsonAnswer(last, 200, `[${pets[2]}]`);
    expect(last.headers.link).toBeUndefined();
    expectJsonAnswer(await get(`/v1/pets?id=${ids[2]}&status=available`), 200, '[]');
    // createPet answered each pet with the same bytes.
    expect(answers).toEqual(pets);
  });

  it.each([
    ['placed', { then: undefined, want: 'pending' }],
    ['placed, then completed', { then: 'complete', want: 'sold' }],
    ['placed, then cancelled', { then: 'cancel', want: 'available' }],
  ] as const)('an order %s: getPet and listPets show the status it left', async (_title, { then, want }) => {
    const id = ((await post('/v1/pets', { name: 'For sale', categoryId: 10, status: 'available' })).json as { id: number }).id;
    const { createdAt } = await timesOf(id);
    // A later millisecond: the order's change is seen to move updatedAt.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const placed = await post('/v1/store/orders', { petId: id });
    expect(placed.status, placed.text).toBe(201);
    const held = await timesOf(id);
    expect(held.createdAt).toBe(createdAt);
    expect(held.updatedAt > createdAt, `placing the order moved updatedAt: ${held.updatedAt} after ${createdAt}`).toBe(true);
    if (then) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect((await post(`/v1/store/orders/${(placed.json as { id: number }).id}/${then}`)).status).toBe(200);
    }
    const times = await timesOf(id);
    if (then) expect(times.updatedAt > held.updatedAt, `closing the order moved updatedAt: ${times.updatedAt} after ${held.updatedAt}`).toBe(true);
    const body = petJson({ id, name: 'For sale', categoryId: 10, status: want, ...times });
    expectJsonAnswer(await get(`/v1/pets/${id}`), 200, body);
    expectJsonAnswer(await get(`/v1/pets?id=${id}&status=${want}`), 200, `[${body}]`);
  });
});
