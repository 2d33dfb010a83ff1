// POST /v1/pets (createPet): docs/interface.md 4.2 and 7, and what a careful API does with
// every kind of bad body: a clear 4xx Error body, and nothing stored.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp, PET_TIMES } from '../helper.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t.close());

const create = (payload: unknown, headers: Record<string, string> = {}) =>
  t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, 'content-type': 'application/json', ...headers }, payload: payload as string });

async function storedPets(): Promise<unknown[]> {
  return (await t.pool.query('SELECT id, name, category_id, status FROM pets ORDER BY id')).rows;
}

describe('createPet accepts a NewPet', () => {
  it.each([
    ['with a status', { given: { name: 'Rex', categoryId: 2, status: 'available' } }],
    ['without a status (no default is applied)', { given: { name: 'Tom', categoryId: 3 } }],
    ['pending', { given: { name: 'Kit', categoryId: 1, status: 'pending' } }],
    ['sold', { given: { name: 'Old', categoryId: 1, status: 'sold' } }],
    ['a 100-character name', { given: { name: 'n'.repeat(100), categoryId: 1 } }],
    ['a unicode name', { given: { name: 'Ñandú 🐦 小鸟', categoryId: 1 } }],
    ['the largest categoryId, 2^53 - 1', { given: { name: 'Big', categoryId: Number.MAX_SAFE_INTEGER } }],
  ])('%s: 201, the Pet with its id, and Location', async (_title, { given }) => {
    const response = await create(given);
    expect(response.statusCode).toBe(201);
    const pet = response.json();
    expect(pet).toEqual({ id: expect.any(Number), ...given, ...PET_TIMES });
    expect(response.headers.location).toBe(`/v1/pets/${pet.id}`);
    // The stored animal reads back identically, exactly (no rounding of categoryId).
    const read = await t.api({ method: 'GET', url: `/v1/pets/${pet.id}`, headers: t.auth });
    expect(read.json()).toEqual(pet);
  });

  it('assigns increasing ids', async () => {
    const a = (await create({ name: 'A', categoryId: 1 })).json();
    const b = (await create({ name: 'B', categoryId: 1 })).json();
    expect(b.id).toBeGreaterThan(a.id);
  });

  it('accepts application/json with a charset', async () => {
    const response = await create(JSON.stringify({ name: 'C', categoryId: 1 }), { 'content-type': 'application/json; charset=utf-8' });
    expect(response.statusCode).toBe(201);
  });
});

describe('createPet refuses a bad body with 400 and stores nothing', () => {
  let before: unknown[];
  beforeEach(async () => {
    before = await storedPets();
  });

  it.each([
    ['no name', { given: { categoryId: 1 }, want: { field: '/name', rule: 'required' } }],
    ['no categoryId', { given: { name: 'Rex' }, want: { field: '/categoryId', rule: 'required' } }],
    ['an empty object', { given: {}, want: { rule: 'required' } }],
    ['an empty name', { given: { name: '', categoryId: 1 }, want: { field: '/name', rule: 'minLength' } }],
    ['a 101-character name', { given: { name: 'n'.repeat(101), categoryId: 1 }, want: { field: '/name', rule: 'maxLength' } }],
    ['a name with a NUL character', { given: { name: 'a\u0000b', categoryId: 1 }, want: { field: '/name', rule: 'pattern' } }],
    ['a name that is a number', { given: { name: 5, categoryId: 1 }, want: { field: '/name', rule: 'type' } }],
    ['a null name', { given: { name: null, categoryId: 1 }, want: { field: '/name', rule: 'type' } }],
    ['categoryId as a string', { given: { name: 'Rex', categoryId: '5' }, want: { field: '/categoryId', rule: 'type' } }],
    ['categoryId with a fraction', { given: { name: 'Rex', categoryId: 1.5 }, want: { field: '/categoryId', rule: 'type' } }],
    ['categoryId 0', { given: { name: 'Rex', categoryId: 0 }, want: { field: '/categoryId', rule: 'minimum' } }],
    ['a negative categoryId', { given: { name: 'Rex', categoryId: -1 }, want: { field: '/categoryId', rule: 'minimum' } }],
    ['categoryId 2^53, which a double cannot tell from 2^53 + 1', { given: '{"name":"Rex","categoryId":9007199254740992}', want: { field: '/categoryId', rule: 'maximum' } }],
    ['categoryId 2^63 - 1', { given: '{"name":"Rex","categoryId":9223372036854775807}', want: { field: '/categoryId', rule: 'maximum' } }],
    ['categoryId 1e400 (infinite as a double)', { given: '{"name":"Rex","categoryId":1e400}', want: { field: '/categoryId' } }],
    ['an unknown status', { given: { name: 'Rex', categoryId: 1, status: 'lost' }, want: { field: '/status', rule: 'enum' } }],
    ['a null status', { given: { name: 'Rex', categoryId: 1, status: null }, want: { field: '/status' } }],
    ['a client-chosen id', { given: { id: 7, name: 'Rex', categoryId: 1 }, want: { field: '/id', rule: 'additionalProperties' } }],
    ['an unknown field', { given: { name: 'Rex', categoryId: 1, colour: 'red' }, want: { field: '/colour', rule: 'additionalProperties' } }],
    ['an array', { given: [{ name: 'Rex', categoryId: 1 }], want: { rule: 'type' } }],
    ['a JSON string', { given: '"Rex"', want: { rule: 'type' } }],
    ['JSON null', { given: 'null', want: { rule: 'type' } }],
  ])('%s', async (_title, { given, want }) => {
    const response = await create(typeof given === 'string' ? given : JSON.stringify(given));
    expect(response.statusCode).toBe(400);
    const body = response.json();
    expect(body).toMatchObject({ code: 'bad_request', status: 400 });
    expect(body.message).toMatch(/^body/);
    expect(body.details[0]).toMatchObject({ location: 'body', ...want });
    expect(await storedPets()).toEqual(before);
  });

  it.each([
    // Where JSON.parse stopped, in the same words on every Node version (said as "Body is not
    // valid JSON" alone up to 1.1.0).
    ['malformed JSON', { given: '{"name": "Rex",', want: 'Body is not valid JSON: quoted object key expected but reached end of input at line 1, column 16' }],
    ['malformed JSON over lines', { given: '{\n  "name": "Rex"\n  "categoryId": 1\n}', want: "Body is not valid JSON: comma ',' expected after value but got '\"' at line 3, column 3" }],
    ['an empty body', { given: '', want: 'Body is empty: send a JSON object' }],
    ['a __proto__ key', { given: '{"name":"Rex","categoryId":1,"__proto__":{"x":1}}', want: 'Body has a property named __proto__, or constructor holding prototype, which this API refuses: no body of the contract has one' }],
    ['a constructor key holding prototype', { given: '{"name":"Rex","categoryId":1,"constructor":{"prototype":{"x":1}}}', want: 'Body has a property named __proto__, or constructor holding prototype, which this API refuses: no body of the contract has one' }],
  ])('%s', async (_title, { given, want }) => {
    const response = await create(given);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'bad_request', status: 400, ...(want ? { message: want } : {}) });
    expect(await storedPets()).toEqual(before);
  });

  it('an empty body names the body in details, as every 400 names what it refuses', async () => {
    expect((await create('')).json().details).toEqual([{ location: 'body', field: '', rule: 'required', message: 'is empty: send a JSON object' }]);
  });

  it('no body and no content type is a 400', async () => {
    const response = await t.api({ method: 'POST', url: '/v1/pets', headers: t.auth });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'bad_request', status: 400 });
  });
});

describe('createPet refuses what is not a small JSON body', () => {
  it.each([
    ['text/plain', 'text/plain'],
    ['form data', 'application/x-www-form-urlencoded'],
    ['XML', 'application/xml'],
  ])('%s is 415', async (_title, type) => {
    const before = await storedPets();
    const response = await create('name=Rex&categoryId=1', { 'content-type': type });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toEqual({ code: 'unsupported_media_type', message: 'Content-Type must be application/json', status: 415 });
    expect(await storedPets()).toEqual(before);
  });

  it('a body over 64 KiB is 413', async () => {
    const before = await storedPets();
    const response = await create(JSON.stringify({ name: 'Rex', categoryId: 1, pad: 'x'.repeat(70_000) }));
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ code: 'payload_too_large', status: 413 });
    expect(await storedPets()).toEqual(before);
  });
});

// What a client sent is repeated in an answer in at most 60 characters and `...`, so that
// the Error body stays within the contract's bounds (message 1024, field 128, detail 512
// characters, at most 20 details) however large the body (`t.api` checks every answer
// against them).
describe('a 400 repeats what the client sent in at most 60 characters', () => {
  const long = 'k'.repeat(30_000);
  const cut = `${'k'.repeat(60)}...`;
  // A field is a JSON Pointer, `/` and the name: its first 60 characters.
  const field = `/${'k'.repeat(59)}...`;

  it('an unknown property with a 30,000-character name', async () => {
    const response = await create(JSON.stringify({ name: 'Rex', categoryId: 1, [long]: 1 }));
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      code: 'bad_request',
      message: `body ${field}: must NOT have the unknown property '${cut}'`,
      status: 400,
      details: [{ location: 'body', field, rule: 'additionalProperties', message: `must NOT have the unknown property '${cut}'` }],
    });
  });

  it('a lone surrogate in a property with a 30,000-character name', async () => {
    const response = await create(`{"name":"Rex","categoryId":1,"${long}":"\\ud800"}`);
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([{ location: 'body', field, rule: 'encoding', message: 'must be well-formed Unicode (a \\u escape leaves a lone surrogate)' }]);
  });

  it('a number of 30,000 digits cut short', async () => {
    const response = await create(`{"name":"Rex","categoryId":${'1'.repeat(30_000)}.}`);
    expect(response.statusCode).toBe(400);
    const { message } = response.json() as { message: string };
    expect(message).toBe(`Body is not valid JSON: invalid number '${'1'.repeat(60)}...', expecting a digit but got '}' at line 1, column 30029`);
  });

  it('30 broken fields: 20 details, and the message says how many there were', async () => {
    const fields = Array.from({ length: 30 }, (_, i) => `"f${i}":"\\ud800"`).join(',');
    const response = await create(`{"name":"Rex","categoryId":1,${fields}}`);
    expect(response.statusCode).toBe(400);
    const body = response.json() as { message: string; details: { field: string }[] };
    expect(body.details).toHaveLength(20);
    expect(body.details[0]).toMatchObject({ field: '/f0', rule: 'encoding' });
    expect(body.message).toBe('body /f0: must be well-formed Unicode (a \\u escape leaves a lone surrogate) (and 29 more problems; details lists the first 20)');
  });
});
