// PATCH /v1/pets/{petId} (updatePet): a JSON Merge Patch of name, categoryId and status;
// ETags (getPet, createPet, updatePet) and If-Match / If-None-Match; what a pending pet
// keeps; the inventory through changes and removals. Every answer goes through `t.api`,
// which checks it against the contract. Races on two instances: test/e2e/catalogue-races.test.ts.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, countPetsByStatus, lapseOrder, type TestApp, PET_TIMES } from '../helper.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '1000000' } });
});
afterAll(async () => t.close());

type Status = 'available' | 'pending' | 'sold' | null;
const mergePatch = { 'content-type': 'application/merge-patch+json' };
const json = { 'content-type': 'application/json' };

/** A pet created through createPet; `pending` is reached by placing an order for an available one. */
async function newPet(status: Status = 'available', name = 'Rex', categoryId = 1): Promise<{ id: number; etag: string; orderId?: number }> {
  const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name, categoryId, ...(status && status !== 'pending' ? { status } : {}), ...(status === 'pending' ? { status: 'available' } : {}) }) });
  expect(created.statusCode).toBe(201);
  const id = created.json().id as number;
  if (status !== 'pending') return { id, etag: String(created.headers.etag) };
  const placed = await t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: JSON.stringify({ petId: id }) });
  expect(placed.statusCode).toBe(201);
  return { id, etag: await etagOf(id), orderId: placed.json().id as number };
}
const patch = (id: number | string, body: string | object, headers: Record<string, string> = {}) =>
  t.api({ method: 'PATCH', url: `/v1/pets/${id}`, headers: { ...t.auth, ...mergePatch, ...headers }, payload: typeof body === 'string' ? body : JSON.stringify(body) });
const getPet = (id: number | string, headers: Record<string, string> = {}) => t.api({ method: 'GET', url: `/v1/pets/${id}`, headers: { ...t.auth, ...headers } });
const etagOf = async (id: number): Promise<string> => String((await getPet(id)).headers.etag);
/** Everything stored of a pet. */
const stored = async (id: number) => (await t.pool.query('SELECT id, name, category_id, status, pet_json(pets) AS as_json, deleted_at FROM pets WHERE id = $1', [id])).rows[0];
const action = (orderId: number, what: 'cancel' | 'complete') => t.api({ method: 'POST', url: `/v1/store/orders/${orderId}/${what}`, headers: t.auth });
const inventory = async () => (await t.api({ method: 'GET', url: '/v1/store/inventory', headers: t.auth })).json();
const STRONG = /^"[A-Za-z0-9_-]{22}"$/;

describe('updatePet', () => {
  it.each([
    ['a new name', { from: { status: 'available' as Status }, given: { name: 'Max' }, want: { name: 'Max', categoryId: 1, status: 'available' } }],
    ['a new category', { from: { status: 'sold' as Status }, given: { categoryId: 7 }, want: { name: 'Rex', categoryId: 7, status: 'sold' } }],
    ['status taken away (null): the stored pet has no status property', { from: { status: 'available' as Status }, given: { status: null }, want: { name: 'Rex', categoryId: 1 } }],
    ['status given to a pet without one', { from: { status: null }, given: { status: 'available' }, want: { name: 'Rex', categoryId: 1, status: 'available' } }],
    ['every field at once', { from: { status: 'available' as Status }, given: { name: 'Ünïcødé "quoted" \\ 🐕', categoryId: 9007199254740991, status: 'sold' }, want: { name: 'Ünïcødé "quoted" \\ 🐕', categoryId: 9007199254740991, status: 'sold' } }],
    ['the same values again', { from: { status: 'sold' as Status }, given: { name: 'Rex', categoryId: 1, status: 'sold' }, want: { name: 'Rex', categoryId: 1, status: 'sold' } }],
    ['{}: nothing changes', { from: { status: 'available' as Status }, given: {}, want: { name: 'Rex', categoryId: 1, status: 'available' } }],
  ])('%s: 200 with the pet as it is now and its ETag, which getPet then answers', async (_title, { from, given, want }) => {
    const pet = await newPet(from.status);
    const response = await patch(pet.id, given);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ id: pet.id, ...want, ...PET_TIMES });
    expect(response.headers.etag).toMatch(STRONG);
    const read = await getPet(pet.id);
    expect(read.json()).toEqual({ id: pet.id, ...want, ...PET_TIMES });
    expect(read.headers.etag).toBe(response.headers.etag);
    // The ETag changed exactly when the pet did.
    const changed = JSON.stringify({ name: 'Rex', categoryId: 1, ...(from.status ? { status: from.status } : {}) }) !== JSON.stringify(want);
    expect(response.headers.etag === pet.etag).toBe(!changed);
  });

  it('sends the pet\'s JSON as getPet does, byte for byte', async () => {
    const pet = await newPet('available', 'Kit');
    const response = await patch(pet.id, { status: null });
    expect(response.body).toBe((await getPet(pet.id)).body);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it.each([
    ['id', { given: '{"id":5}', field: '/id', rule: 'additionalProperties' }],
    ['an unknown field', { given: '{"colour":"brown"}', field: '/colour', rule: 'additionalProperties' }],
    ['name: null', { given: '{"name":null}', field: '/name', rule: 'type' }],
    ['categoryId: null', { given: '{"categoryId":null}', field: '/categoryId', rule: 'type' }],
    ['status: pending', { given: '{"status":"pending"}', field: '/status', rule: 'enum' }],
    ['status: lost', { given: '{"status":"lost"}', field: '/status', rule: 'enum' }],
    ['an empty name', { given: '{"name":""}', field: '/name', rule: 'minLength' }],
    ['a name of 101 characters', { given: JSON.stringify({ name: 'x'.repeat(101) }), field: '/name', rule: 'maxLength' }],
    ['a name with a control character', { given: '{"name":"a\\u0007b"}', field: '/name', rule: 'pattern' }],
    ['categoryId: 0', { given: '{"categoryId":0}', field: '/categoryId', rule: 'minimum' }],
    ['categoryId as a string', { given: '{"categoryId":"5"}', field: '/categoryId', rule: 'type' }],
    ['categoryId 2^53', { given: '{"categoryId":9007199254740992}', field: '/categoryId', rule: 'maximum' }],
    ['a body that is an array', { given: '[]', field: '', rule: 'type' }],
    ['a body that is null', { given: 'null', field: '', rule: 'type' }],
    ['malformed JSON', { given: '{"name":', field: '', rule: 'json' }],
  ])('%s is 400 naming the field and the rule, and changes nothing', async (_title, { given, field, rule }) => {
    const pet = await newPet('available');
    const before = await stored(pet.id);
    const response = await patch(pet.id, given);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'bad_request', status: 400 });
    expect(response.json().details).toContainEqual(expect.objectContaining({ location: 'body', field, rule }));
    expect(await stored(pet.id)).toEqual(before);
    expect(await etagOf(pet.id)).toBe(pet.etag);
  });

  it.each([
    ['no body', { payload: undefined, headers: {} }],
    ['an empty body', { payload: '', headers: mergePatch }],
  ])('%s is 400 and changes nothing', async (_title, { payload, headers }) => {
    const pet = await newPet('available');
    const before = await stored(pet.id);
    const response = await t.api({ method: 'PATCH', url: `/v1/pets/${pet.id}`, headers: { ...t.auth, ...headers }, ...(payload === undefined ? {} : { payload }) });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'bad_request', status: 400 });
    expect(await stored(pet.id)).toEqual(before);
  });

  it.each([
    ['application/merge-patch+json', { type: 'application/merge-patch+json', want: 200 }],
    ['application/merge-patch+json; charset=utf-8', { type: 'application/merge-patch+json; charset=utf-8', want: 200 }],
    ['APPLICATION/MERGE-PATCH+JSON', { type: 'APPLICATION/MERGE-PATCH+JSON', want: 200 }],
    ['application/json, read the same way', { type: 'application/json', want: 200 }],
    ['text/plain', { type: 'text/plain', want: 415 }],
    ['application/vnd.api+json', { type: 'application/vnd.api+json', want: 415 }],
    ['application/json-patch+json (RFC 6902, another format)', { type: 'application/json-patch+json', want: 415 }],
  ])('Content-Type %s: %#', async (_title, { type, want }) => {
    const pet = await newPet('available');
    const before = await stored(pet.id);
    const response = await patch(pet.id, { name: 'Max' }, { 'content-type': type });
    expect(response.statusCode).toBe(want);
    if (want === 200) expect(response.json().name).toBe('Max');
    else {
      expect(response.json()).toEqual({ code: 'unsupported_media_type', message: 'Content-Type must be application/merge-patch+json or application/json', status: 415 });
      expect(await stored(pet.id)).toEqual(before);
    }
  });

  it('a merge patch with a charset other than UTF-8 is 415 and changes nothing', async () => {
    const pet = await newPet('available');
    const before = await stored(pet.id);
    const response = await patch(pet.id, { name: 'Max' }, { 'content-type': 'application/merge-patch+json; charset=latin1' });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toEqual({ code: 'unsupported_media_type', message: 'Content-Type charset must be utf-8', status: 415 });
    expect(await stored(pet.id)).toEqual(before);
  });

  it('a merge patch body is validated with the strict JSON rules: a number no double holds is 400', async () => {
    const pet = await newPet('available');
    const response = await patch(pet.id, '{"categoryId":1.0000000000000001}');
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([expect.objectContaining({ location: 'body', field: '/categoryId', rule: 'exact' })]);
  });

  it('createPet does not take a merge patch: 415 naming application/json, and nothing is stored', async () => {
    const count = async () => (await t.pool.query('SELECT count(*)::int AS n FROM pets')).rows[0].n as number;
    const before = await count();
    const response = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...mergePatch }, payload: '{"name":"Rex","categoryId":1}' });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toEqual({ code: 'unsupported_media_type', message: 'Content-Type must be application/json', status: 415 });
    expect(await count()).toBe(before);
  });

  it.each([
    ['an id never assigned', { id: async () => 999_999 }],
    ['the largest id, 2^53 - 1', { id: async () => Number.MAX_SAFE_INTEGER }],
    ['a removed pet', { id: async () => { const pet = await newPet('available'); expect((await t.api({ method: 'DELETE', url: `/v1/pets/${pet.id}`, headers: t.auth })).statusCode).toBe(204); return pet.id; } }],
  ])('%s is 404 and nothing is written', async (_title, { id }) => {
    const petId = await id();
    const before = await stored(petId);
    const response = await patch(petId, { name: 'Max' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ code: 'not_found', message: `Pet ${petId} does not exist`, status: 404 });
    expect(await stored(petId)).toEqual(before);
  });

  it.each([
    ['petId=abc', { given: 'abc', rule: 'type' }],
    ['petId=0', { given: '0', rule: 'minimum' }],
    ['petId=2^53', { given: '9007199254740992', rule: 'maximum' }],
  ])('%s is 400', async (_title, { given, rule }) => {
    const response = await patch(given, { name: 'Max' });
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([expect.objectContaining({ location: 'path', field: 'petId', rule })]);
  });

  it('without an API key it is 401 and changes nothing', async () => {
    const pet = await newPet('available');
    const response = await t.api({ method: 'PATCH', url: `/v1/pets/${pet.id}`, headers: mergePatch, payload: '{"name":"Max"}' });
    expect(response.statusCode).toBe(401);
    expect((await stored(pet.id))?.name).toBe('Rex');
  });
});

describe('updatePet on a pending pet (held by a placed order)', () => {
  const reserved = (id: number, orderId: number) => ({
    code: 'pet_reserved',
    message: `Pet ${id} is held by order ${orderId}, which is placed: its status changes when the order is completed, cancelled or expires`,
    status: 409,
  });

  it.each([
    ['available', { given: { status: 'available' } }],
    ['sold', { given: { status: 'sold' } }],
    ['null', { given: { status: null } }],
    ['with a name too', { given: { name: 'Max', status: 'sold' } }],
  ])('setting its status (%s) is 409 pet_reserved naming the order, and changes nothing', async (_title, { given }) => {
    const pet = await newPet('pending');
    const before = await stored(pet.id);
    const response = await patch(pet.id, given);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual(reserved(pet.id, pet.orderId as number));
    expect(await stored(pet.id)).toEqual(before);
  });

  it('its name and category may change: 200, still pending, and the order completes as before', async () => {
    const pet = await newPet('pending');
    const response = await patch(pet.id, { name: 'Max', categoryId: 4 });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ id: pet.id, name: 'Max', categoryId: 4, status: 'pending', ...PET_TIMES });
    expect((await action(pet.orderId as number, 'complete')).statusCode).toBe(200);
    expect((await getPet(pet.id)).json()).toEqual({ id: pet.id, name: 'Max', categoryId: 4, status: 'sold', ...PET_TIMES });
  });

  it('once its order is cancelled, its status may be set', async () => {
    const pet = await newPet('pending');
    expect((await action(pet.orderId as number, 'cancel')).statusCode).toBe(200);
    const response = await patch(pet.id, { status: 'sold' });
    expect(response.statusCode).toBe(200);
    expect(response.json().status).toBe('sold');
  });
});

// Every status transition, by every operation that makes one: test/api/status-transitions.test.ts.

describe('If-Match on updatePet', () => {
  it.each([
    ['the current ETag', { ifMatch: (etag: string) => etag, want: 200 }],
    ['*', { ifMatch: () => '*', want: 200 }],
    ['a list that holds the current ETag', { ifMatch: (etag: string) => `"old", ${etag} ,"older"`, want: 200 }],
    ['another ETag', { ifMatch: () => '"kY3zBq9TQ0mFv1cXo2aR8w"', want: 412 }],
    ['the current ETag, weak (W/): compared strongly, never matches', { ifMatch: (etag: string) => `W/${etag}`, want: 412, weakOnly: true }],
    ['weak tags only', { ifMatch: (etag: string) => `W/${etag}, W/"x"`, want: 412, weakOnly: true }],
    ['an empty entity tag', { ifMatch: () => '""', want: 412 }],
  ])('%s: %#', async (_title, { ifMatch, want, weakOnly }: { ifMatch: (etag: string) => string; want: number; weakOnly?: boolean }) => {
    const pet = await newPet('available');
    const before = await stored(pet.id);
    const response = await patch(pet.id, { name: 'Max' }, { 'if-match': ifMatch(pet.etag) });
    expect(response.statusCode).toBe(want);
    if (want === 200) expect(response.json().name).toBe('Max');
    else {
      const message = weakOnly
        ? `If-Match names only weak ETags (W/"..."), which never match a change of pet ${pet.id}: send its ETag as getPet gives it, without W/`
        : `Pet ${pet.id} has changed since the ETag that If-Match names: read it again, then retry with its new ETag`;
      expect(response.json()).toEqual({ code: 'precondition_failed', message, status: 412 });
      expect(await stored(pet.id)).toEqual(before);
    }
  });

  it('an ETag that was current before a change is refused after it: the second of two writers with the same ETag gets 412', async () => {
    const pet = await newPet('available');
    const first = await patch(pet.id, { name: 'First' }, { 'if-match': pet.etag });
    expect(first.statusCode).toBe(200);
    const second = await patch(pet.id, { name: 'Second' }, { 'if-match': pet.etag });
    expect(second.statusCode).toBe(412);
    expect((await getPet(pet.id)).json().name).toBe('First');
    // With the new ETag it goes through.
    const third = await patch(pet.id, { name: 'Third' }, { 'if-match': String(first.headers.etag) });
    expect(third.statusCode).toBe(200);
  });

  it.each([
    ['a bare token', 'abc'],
    ['an unterminated tag', '"abc'],
    ['W/ without quotes', 'W/abc'],
    ['* among tags', '*, "abc"'],
    ['two tags without a comma', '"a" "b"'],
  ])('a malformed If-Match (%s) is 400 naming the header, and changes nothing', async (_title, ifMatch) => {
    const pet = await newPet('available');
    const before = await stored(pet.id);
    const response = await patch(pet.id, { name: 'Max' }, { 'if-match': ifMatch });
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([expect.objectContaining({ location: 'header', field: 'If-Match', rule: 'pattern' })]);
    expect(await stored(pet.id)).toEqual(before);
  });

  it.each([
    ['an unknown pet is 404, not 412 (a failure found before the condition wins: RFC 9110 §13.2.1)', { pet: async () => ({ id: 999_998, etag: '"x"' }), ifMatch: '"x"', given: { name: 'Max' }, want: 404 }],
    ['an unknown pet with * is 404', { pet: async () => ({ id: 999_998, etag: '"x"' }), ifMatch: '*', given: { name: 'Max' }, want: 404 }],
    ['a pending pet, a stale ETag and a status: 412 (the condition is evaluated before the patch is)', { pet: () => newPet('pending'), ifMatch: '"stale"', given: { status: 'sold' }, want: 412 }],
    ['a pending pet, its ETag and a status: 409', { pet: () => newPet('pending'), ifMatch: undefined, given: { status: 'sold' }, want: 409 }],
    ['a pending pet, a stale ETag and a name: 412', { pet: () => newPet('pending'), ifMatch: '"stale"', given: { name: 'Max' }, want: 412 }],
    ['a pending pet, its ETag and a name: 200', { pet: () => newPet('pending'), ifMatch: undefined, given: { name: 'Max' }, want: 200 }],
  ])('%s', async (_title, { pet, ifMatch, given, want }) => {
    const target = await pet();
    const response = await patch(target.id, given, { 'if-match': ifMatch ?? target.etag });
    expect(response.statusCode).toBe(want);
  });

  it('{} with a stale ETag is 412: the condition holds for every patch', async () => {
    const pet = await newPet('available');
    await patch(pet.id, { name: 'Max' });
    const response = await patch(pet.id, {}, { 'if-match': pet.etag });
    expect(response.statusCode).toBe(412);
  });
});

describe('ETag', () => {
  it('createPet sends the ETag getPet then sends; a strong tag of the contract\'s form', async () => {
    const created = await t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: '{"name":"Rex","categoryId":3,"status":"available"}' });
    expect(created.headers.etag).toMatch(STRONG);
    expect((await getPet(created.json().id)).headers.etag).toBe(created.headers.etag);
  });

  it('createPet with an Idempotency-Key sends the ETag too, and its replay the same', async () => {
    const send = () => t.api({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json, 'idempotency-key': 'etag-replay' }, payload: '{"name":"Rex","categoryId":3}' });
    const first = await send();
    const replay = await send();
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers.etag).toBe(first.headers.etag);
    expect((await getPet(first.json().id)).headers.etag).toBe(first.headers.etag);
  });

  it('is a hash of the pet\'s JSON: pets alike but for their id have different tags', async () => {
    const [a, b] = [await newPet('available'), await newPet('available')];
    expect(a.etag).not.toBe(b.etag);
  });

  it('changes when an order is placed, completed, cancelled or expires', async () => {
    const pet = await newPet('available');
    const seen = [pet.etag];
    const placed = await t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: JSON.stringify({ petId: pet.id }) });
    seen.push(await etagOf(pet.id));
    await action(placed.json().id, 'cancel');
    seen.push(await etagOf(pet.id));
    const again = await t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: JSON.stringify({ petId: pet.id }) });
    seen.push(await etagOf(pet.id));
    await action(again.json().id, 'complete');
    seen.push(await etagOf(pet.id));
    // available, pending, available, pending, sold: each a representation of its own (each
    // change moves updatedAt, so available again is not the first available).
    expect(new Set(seen).size).toBe(seen.length);
    // An If-Match with the tag from before the placement is refused while the pet is pending.
    const expiring = await newPet('available');
    const order = await t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: JSON.stringify({ petId: expiring.id }) });
    const pending = await etagOf(expiring.id);
    expect(pending).not.toBe(expiring.etag);
    expect((await patch(expiring.id, { name: 'Max' }, { 'if-match': expiring.etag })).statusCode).toBe(412);
    // Expired by the job (within 2 s of its expiresAt): the pet is available again, and so is its tag.
    await lapseOrder(t.pool, order.json().id);
    const deadline = Date.now() + 10_000;
    while ((await getPet(expiring.id)).json().status !== 'available' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await etagOf(expiring.id)).not.toBe(pending);
  });

  it('changes when the pet is written around the service (psql), and If-Match sees it', async () => {
    const pet = await newPet('available');
    await t.pool.query("UPDATE pets SET name = 'Renamed' WHERE id = $1", [pet.id]);
    expect(await etagOf(pet.id)).not.toBe(pet.etag);
    expect((await patch(pet.id, { name: 'Max' }, { 'if-match': pet.etag })).statusCode).toBe(412);
  });

  it.each([
    ['plain ASCII', 'Rex'],
    ['quotes and backslashes', 'a "b" \\ c'],
    ['non-ASCII', 'Ünïcødé ñ 中文'],
    ['astral characters', '🐕🐈'],
    ['U+2028 and U+2029', 'a\u2028b\u2029c'],
    ['100 characters', 'é'.repeat(100)],
  ])('is computed the same way in Node (answers) and in SQL (If-Match): %s', async (_title, name) => {
    const pet = await newPet('available', name);
    // Node's, as answered; SQL's, as the migration installed it; the recipe, computed here.
    const sql = (await t.pool.query<{ etag: string }>('SELECT pet_etag(pet_json(pets)) AS etag FROM pets WHERE id = $1', [pet.id])).rows[0]?.etag;
    const json = (await getPet(pet.id)).body;
    const recipe = `"${createHash('sha256').update(json).digest().subarray(0, 16).toString('base64url')}"`;
    expect(pet.etag).toBe(recipe);
    expect(sql).toBe(recipe);
    // And through the surface: the answered tag is the one the write compares with.
    expect((await patch(pet.id, { categoryId: 2 }, { 'if-match': pet.etag })).statusCode).toBe(200);
  });

  it('a pet written with SQL, C1 controls and all, has the same tag in Node and SQL', async () => {
    const id = Number((await t.pool.query<{ id: string }>("INSERT INTO pets (name, category_id) VALUES (E'c1 \\u0085 \\u009f end', 1) RETURNING id")).rows[0]?.id);
    const etag = await etagOf(id);
    expect((await t.pool.query<{ etag: string }>('SELECT pet_etag(pet_json(pets)) AS etag FROM pets WHERE id = $1', [id])).rows[0]?.etag).toBe(etag);
    expect((await patch(id, { categoryId: 2 }, { 'if-match': etag })).statusCode).toBe(200);
  });
});

describe('getPet with If-None-Match', () => {
  const deprecation = { deprecation: '@1795219200', sunset: 'Thu, 05 Dec 2030 00:00:00 GMT' };
  it.each([
    ['its current ETag', { ifNoneMatch: (etag: string) => etag, want: 304 }],
    ['its ETag, weak (compared weakly)', { ifNoneMatch: (etag: string) => `W/${etag}`, want: 304 }],
    ['a list that holds it', { ifNoneMatch: (etag: string) => `"a", ${etag}`, want: 304 }],
    ['*', { ifNoneMatch: () => '*', want: 304 }],
    ['another ETag', { ifNoneMatch: () => '"kY3zBq9TQ0mFv1cXo2aR8w"', want: 200 }],
  ])('%s: %#', async (_title, { ifNoneMatch, want }) => {
    const pet = await newPet('available');
    const response = await getPet(pet.id, { 'if-none-match': ifNoneMatch(pet.etag) });
    expect(response.statusCode).toBe(want);
    expect(response.headers.etag).toBe(pet.etag);
    expect(response.headers).toMatchObject({ ...deprecation, link: `</v1/pets?id=${pet.id}>; rel="successor-version"` });
    if (want === 304) expect(response.body).toBe('');
    else expect(response.json()).toEqual({ id: pet.id, name: 'Rex', categoryId: 1, status: 'available', ...PET_TIMES });
  });

  it('after a change, the old ETag gets the pet again (200), the new one 304', async () => {
    const pet = await newPet('available');
    const changed = await patch(pet.id, { status: 'sold' });
    expect((await getPet(pet.id, { 'if-none-match': pet.etag })).statusCode).toBe(200);
    expect((await getPet(pet.id, { 'if-none-match': String(changed.headers.etag) })).statusCode).toBe(304);
  });

  it('HEAD answers as GET does: 304 without a body', async () => {
    const pet = await newPet('available');
    const response = await t.api({ method: 'HEAD', url: `/v1/pets/${pet.id}`, headers: { ...t.auth, 'if-none-match': pet.etag } });
    expect(response.statusCode).toBe(304);
    expect(response.headers.etag).toBe(pet.etag);
  });

  it.each([
    ['an unknown pet, with *', { id: 999_997, ifNoneMatch: '*', want: 404 }],
    ['a malformed value', { id: 1, ifNoneMatch: 'abc', want: 400 }],
  ])('%s is %#', async (_title, { id, ifNoneMatch, want }) => {
    const response = await getPet(id, { 'if-none-match': ifNoneMatch });
    expect(response.statusCode).toBe(want);
  });
});

describe('the inventory through changes and removals', () => {
  it('getInventory equals the pets counted one by one after every change of status, every removal, and bad requests', async () => {
    const check = async () => expect(await inventory()).toEqual(await countPetsByStatus(t.pool));
    const before = await inventory();
    const a = await newPet('available');
    const b = await newPet(null);
    const c = await newPet('sold');
    const d = await newPet('pending');
    await check();
    expect(await inventory()).toEqual({ ...before, available: before.available + 1, noStatus: before.noStatus + 1, sold: before.sold + 1, pending: before.pending + 1 });
    const steps: [string, () => Promise<unknown>][] = [
      ['available → sold', () => patch(a.id, { status: 'sold' })],
      ['none → available', () => patch(b.id, { status: 'available' })],
      ['sold → none', () => patch(c.id, { status: null })],
      ['a name only', () => patch(a.id, { name: 'Max' })],
      ['{}', () => patch(a.id, {})],
      ['refused: pending → sold', () => patch(d.id, { status: 'sold' })],
      ['refused: a stale If-Match', () => patch(b.id, { status: 'sold' }, { 'if-match': b.etag })],
      ['refused: pending', () => patch(b.id, { status: 'pending' })],
      ['removed: sold', () => t.api({ method: 'DELETE', url: `/v1/pets/${a.id}`, headers: t.auth })],
      ['removed: no status', () => t.api({ method: 'DELETE', url: `/v1/pets/${c.id}`, headers: t.auth })],
      ['refused: removing a pending pet', () => t.api({ method: 'DELETE', url: `/v1/pets/${d.id}`, headers: t.auth })],
      ['refused: removing it again', () => t.api({ method: 'DELETE', url: `/v1/pets/${a.id}`, headers: t.auth })],
      ['a removed pet changed with SQL counts nowhere', () => t.pool.query("UPDATE pets SET status = 'available' WHERE id = $1", [c.id])],
      ['a pet inserted removed with SQL counts nowhere', () => t.pool.query("INSERT INTO pets (name, category_id, status, deleted_at) VALUES ('Gone', 1, 'sold', now())")],
    ];
    for (const [what, step] of steps) {
      await step();
      expect(await inventory(), what).toEqual(await countPetsByStatus(t.pool));
    }
    expect(await inventory()).toEqual({ ...before, available: before.available + 1, pending: before.pending + 1 });
  });
});
