// End to end through the typed client only: the real service on a port, every operation
// and every error answer a client can provoke, each response also checked against the
// contract on the way in.
//
// With CONFORMANCE_PRISM=1 (`npm run test:prism`) the same suite runs through Stoplight
// Prism's validating proxy, and any violation Prism reports fails it. Prism is started
// with --validate-request=false so that the bad requests below reach the service (Prism
// would answer them itself with 422); every response is still validated.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnimalStoreError, createAnimalStoreClient, type AnimalStoreClient } from '../../client/src/index.js';
import { contractViolations } from '../contract.js';
import { createTestDatabase } from '../helper.js';
import { apikey, root, startServer, within, WAIT_MS, type ServerProcess } from '../process.js';

let server: ServerProcess;
let database: { url: string; drop: () => Promise<void> };
let store: AnimalStoreClient;
let anonymous: AnimalStoreClient;
let baseUrl: string;
let prism: ChildProcess | undefined;
const viaPrism = process.env.CONFORMANCE_PRISM === '1';

/** Starts `prism proxy` in front of the service; resolves with its URL. */
function startPrism(upstream: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const port = String(20_000 + Math.floor(Math.random() * 20_000));
    prism = spawn(
      path.join(root, 'node_modules/.bin/prism'),
      ['proxy', path.join(root, 'openapi/v1.yaml'), upstream, '--errors', '--validate-request=false', '-h', '127.0.0.1', '-p', port],
      { env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('Prism is listening')) resolve(`http://127.0.0.1:${port}`);
    };
    prism.stdout?.on('data', onData);
    prism.stderr?.on('data', onData);
    prism.on('exit', (code) => reject(new Error(`prism exited ${code}:\n${output}`)));
    setTimeout(() => reject(new Error(`prism did not start:\n${output}`)), 30_000).unref();
  });
}

/** fetch that checks every answer against openapi/v1.yaml. */
const checkedFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const response = await fetch(request);
  const body = await response.clone().text();
  const headers = Object.fromEntries(response.headers.entries());
  // Prism serves the paths without the servers' /v1 prefix.
  const url = (viaPrism ? '/v1' : '') + new URL(request.url).pathname + new URL(request.url).search;
  expect(contractViolations(request.method, url, { statusCode: response.status, headers, body }), `${request.method} ${url}`).toEqual([]);
  expect(response.headers.get('sl-violations'), `Prism reports a violation for ${request.method} ${url}`).toBeNull();
  return response;
};

beforeAll(async () => {
  database = await createTestDatabase();
  // The key exists before the service starts, so its cache has it from the first request.
  const key = (await apikey(['create', 'client e2e'], database.url)).stdout.trim();
  // WEBHOOK_ALLOW_PRIVATE: the webhook endpoints below are on 127.0.0.1 (port 9: nothing listens).
  server = await startServer({ DATABASE_URL: database.url, WEBHOOK_ALLOW_PRIVATE: 'true' });
  baseUrl = viaPrism ? await startPrism(`${server.url}/v1`) : `${server.url}/v1`;
  store = createAnimalStoreClient({ baseUrl, apiKey: key, fetch: checkedFetch });
  anonymous = createAnimalStoreClient({ baseUrl, apiKey: 'ask_not-a-real-key', fetch: checkedFetch });
}, 180_000);
afterAll(async () => {
  prism?.removeAllListeners('exit');
  prism?.kill('SIGTERM');
  expect(await server.stop('SIGTERM')).toBe(0);
  await database.drop();
});

/** A Pet's createdAt and updatedAt: RFC 3339, UTC, to the millisecond. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Waits until the clock is past the millisecond of every change before: the next change's updatedAt is later. */
const nextMillisecond = () => new Promise((resolve) => setTimeout(resolve, 5));

/** The AnimalStoreError a call throws (fails the test when it resolves or throws something else). */
async function failure(call: () => Promise<unknown>): Promise<AnimalStoreError> {
  const outcome = await call().then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(AnimalStoreError);
  return outcome as AnimalStoreError;
}

describe('the typed client against the running service', () => {
  it('creates, lists and fetches pets', async () => {
    const created = await store.createPet({ name: 'Rex', categoryId: 2, status: 'available' });
    expect(created.response.status).toBe(201);
    expect(created.data).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 2, status: 'available', createdAt: expect.stringMatching(INSTANT), updatedAt: created.data.createdAt });
    const id = created.data.id;
    expect(created.response.headers.get('location')).toBe(`/v1/pets/${id}`);
    expect(created.requestId).toMatch(/./);
    await store.createPet({ name: 'Tom', categoryId: 3 });

    const all = await store.listPets();
    expect(all.data.map((p) => p.name)).toEqual(['Rex', 'Tom']);
    const available = await store.listPets({ status: 'available', limit: 1 });
    expect(available.data).toEqual([created.data]);

    const fetched = await store.getPet(id);
    expect(fetched.data).toEqual(created.data);
  });

  it('createPet sends an Idempotency-Key of its own, and a repeat with the same key adds nothing', async () => {
    const first = await store.createPet({ name: 'Keyed', categoryId: 4 });
    expect(first.idempotencyKey).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(first.replayed).toBe(false);
    const other = await store.createPet({ name: 'Keyed', categoryId: 4 });
    expect(other.idempotencyKey).not.toBe(first.idempotencyKey);
    expect(other.data.id).not.toBe(first.data.id);

    const again = await store.createPet({ name: 'Keyed', categoryId: 4 }, { idempotencyKey: first.idempotencyKey });
    expect(again.replayed).toBe(true);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.data).toEqual(first.data);
    expect(again.response.headers.get('location')).toBe(first.response.headers.get('location'));
    const keyed = [];
    for await (const pet of store.listAllPets()) if (pet.name === 'Keyed') keyed.push(pet.id);
    expect(keyed).toEqual([first.data.id, other.data.id]);

    const reused = await failure(() => store.createPet({ name: 'Not keyed', categoryId: 4 }, { idempotencyKey: first.idempotencyKey }));
    expect(reused).toMatchObject({ status: 422, code: 'idempotency_key_reused', idempotencyKey: first.idempotencyKey });
  });

  it('listAllPets follows the pages to the end', async () => {
    for (let i = 0; i < 12; i++) await store.createPet({ name: `Paged ${i}`, categoryId: 5, status: 'sold' });
    const names: string[] = [];
    for await (const pet of store.listAllPets({ status: 'sold', limit: 5 })) names.push(pet.name);
    expect(names).toEqual(Array.from({ length: 12 }, (_, i) => `Paged ${i}`));
  });

  it('surfaces the deprecation headers of getPet, on success and on error', async () => {
    const { deprecation: onSuccess } = await store.getPet(1);
    const { deprecation: onError, status } = await failure(() => store.getPet(987654));
    expect(status).toBe(404);
    for (const [id, deprecation] of [[1, onSuccess], [987654, onError]] as const) {
      expect(deprecation?.deprecation?.toISOString()).toBe('2026-11-21T00:00:00.000Z');
      expect(deprecation?.sunset?.toISOString()).toBe('2030-12-05T00:00:00.000Z');
      // The replacement request for that pet (contract 1.2.0; `</v1/pets>` before).
      expect(deprecation?.link).toBe(`</v1/pets?id=${id}>; rel="successor-version"`);
    }
  });

  it('throws every error answer as an AnimalStoreError carrying the typed Error body', async () => {
    const cases = [
      ['listPets limit=0', () => store.listPets({ limit: 0 }), 400, 'bad_request'],
      ['listPets limit=101', () => store.listPets({ limit: 101 }), 400, 'bad_request'],
      // @ts-expect-error the compiler refuses a status outside the enumeration; sent anyway to see the 400
      ['listPets status=lost', () => store.listPets({ status: 'lost' }), 400, 'bad_request'],
      // @ts-expect-error name is required; sent anyway
      ['createPet without name', () => store.createPet({ categoryId: 1 }), 400, 'bad_request'],
      ['createPet with a 101-character name', () => store.createPet({ name: 'x'.repeat(101), categoryId: 1 }), 400, 'bad_request'],
      ['createPet with categoryId 2^53', () => store.createPet({ name: 'Big', categoryId: 2 ** 53 }), 400, 'bad_request'],
      ['createPet with a 70 kB body', () => store.createPet({ name: 'x'.repeat(70_000), categoryId: 1 }), 413, 'payload_too_large'],
      ['getPet of an unknown id', () => store.getPet(987654), 404, 'not_found'],
      ['getPet 0', () => store.getPet(0), 400, 'bad_request'],
      ['listPets with an invalid key', () => anonymous.listPets(), 401, 'unauthorized'],
      ['createPet with an invalid key', () => anonymous.createPet({ name: 'Rex', categoryId: 1 }), 401, 'unauthorized'],
      ['getPet with an invalid key', () => anonymous.getPet(1), 401, 'unauthorized'],
      ['listOrders with an invalid key', () => anonymous.listOrders(), 401, 'unauthorized'],
    ] as const;
    for (const [title, call, status, code] of cases) {
      const error = await failure(call);
      expect(error.response.status, title).toBe(status);
      expect(error, title).toMatchObject({ status, code, body: { code, status } });
      expect(error.requestId, title).toBe(error.response.headers.get('x-request-id'));
      expect(error.requestId, title).toMatch(/./);
      expect(error.message, title).toContain(`${status} ${code}`);
    }
    const badName = await failure(() => store.createPet({ name: 'x'.repeat(101), categoryId: 1 }));
    expect(badName.details).toEqual([expect.objectContaining({ location: 'body', field: '/name', rule: 'maxLength' })]);
  });

  it('updatePet: a draft (no status) is offered, ordered, refused an unlisting while the order holds it, sold, then offered again; If-Match guards each change', async () => {
    const created = await store.createPet({ name: 'Draft', categoryId: 31 });
    const id = created.data.id;
    const { createdAt } = created.data;
    expect(created.data).toEqual({ id, name: 'Draft', categoryId: 31, createdAt: expect.stringMatching(INSTANT), updatedAt: createdAt });
    expect(created.etag).toMatch(/^"[A-Za-z0-9_-]{1,62}"$/);
    // A draft is listed by its id, and by no status filter.
    expect((await store.listPets({ id: [id] })).data).toEqual([created.data]);
    for (const status of ['available', 'pending', 'sold'] as const) expect((await store.listPets({ id: [id], status })).data, status).toEqual([]);
    expect((await store.getPet(id)).etag).toBe(created.etag);

    // Offered, on the condition that it is still the draft this client saw.
    await nextMillisecond();
    const offered = await store.updatePet(id, { status: 'available' }, { ifMatch: created.etag });
    expect(offered.response.status).toBe(200);
    expect(offered.data).toEqual({ id, name: 'Draft', categoryId: 31, status: 'available', createdAt, updatedAt: expect.stringMatching(INSTANT) });
    expect(offered.data.updatedAt > createdAt, `updatedAt ${offered.data.updatedAt} after createdAt ${createdAt}`).toBe(true);
    expect(offered.etag).toMatch(/^"[A-Za-z0-9_-]{1,62}"$/);
    expect(offered.etag).not.toBe(created.etag);
    // The draft's ETag no longer matches: nothing changes.
    const stale = await failure(() => store.updatePet(id, { name: 'Overwritten' }, { ifMatch: created.etag }));
    expect(stale).toMatchObject({ status: 412, code: 'precondition_failed', operation: 'updatePet' });
    // {} changes nothing, updatedAt included, and answers the current ETag (how to get one after getPet's sunset).
    await nextMillisecond();
    const unchanged = await store.updatePet(id, {});
    expect(unchanged.data).toEqual(offered.data);
    expect(unchanged.etag).toBe(offered.etag);
    expect((await store.listPets({ id: [id], status: 'available' })).data).toEqual([offered.data]);

    // Ordered: its status is the order's now, a change. Name and category may still change.
    await nextMillisecond();
    const { data: order } = await store.placeOrder({ petId: id });
    const [held] = (await store.listPets({ id: [id] })).data;
    expect(held).toEqual({ ...offered.data, status: 'pending', updatedAt: expect.stringMatching(INSTANT) });
    expect((held?.updatedAt ?? '') > offered.data.updatedAt, 'placing the order moved updatedAt').toBe(true);
    const unlist = await failure(() => store.updatePet(id, { status: null }));
    expect(unlist).toMatchObject({ status: 409, code: 'pet_reserved' });
    expect(unlist.message).toContain(String(order.id));
    expect((await failure(() => store.updatePet(id, { status: 'available' })))).toMatchObject({ status: 409, code: 'pet_reserved' });
    await nextMillisecond();
    const renamed = await store.updatePet(id, { name: 'Reserved', categoryId: 32 });
    expect(renamed.data).toEqual({ id, name: 'Reserved', categoryId: 32, status: 'pending', createdAt, updatedAt: expect.stringMatching(INSTANT) });
    expect(renamed.data.updatedAt > (held?.updatedAt ?? ''), 'the rename moved updatedAt').toBe(true);
    // The order changed the pet: the ETag from before it does not match.
    expect(await failure(() => store.updatePet(id, { name: 'Late' }, { ifMatch: offered.etag }))).toMatchObject({ status: 412, code: 'precondition_failed' });

    // Sold by the order, then offered again.
    await store.completeOrder(order.id);
    const relisted = await store.updatePet(id, { status: 'available' });
    expect(relisted.data).toEqual({ id, name: 'Reserved', categoryId: 32, status: 'available', createdAt, updatedAt: expect.stringMatching(INSTANT) });
    expect(relisted.data.updatedAt > renamed.data.updatedAt, 'the sale and the relisting moved updatedAt').toBe(true);
    // And unlisted (a draft again): the status is gone, not null.
    await nextMillisecond();
    const unlisted = await store.updatePet(id, { status: null }, { ifMatch: relisted.etag });
    expect(unlisted.data).toEqual({ id, name: 'Reserved', categoryId: 32, createdAt, updatedAt: expect.stringMatching(INSTANT) });
    expect(unlisted.data.updatedAt > relisted.data.updatedAt, 'the unlisting moved updatedAt').toBe(true);
    expect((await store.listPets({ id: [id], status: 'available' })).data).toEqual([]);

    // raw: openapi-fetch sends the patch as application/json, which updatePet reads the same way.
    const viaRaw = await store.raw.PATCH('/pets/{petId}', { params: { path: { petId: id } }, body: { name: 'Plain JSON' } });
    expect(viaRaw.response.status).toBe(200);
    expect(viaRaw.data).toEqual({ id, name: 'Plain JSON', categoryId: 32, createdAt, updatedAt: expect.stringMatching(INSTANT) });
  });

  it('deletePet: refused while an order holds the pet and on a stale If-Match; then the pet is gone and its order stays readable', async () => {
    const created = await store.createPet({ name: 'Leaving', categoryId: 33, status: 'available' });
    const id = created.data.id;
    await nextMillisecond();
    const { data: order } = await store.placeOrder({ petId: id });
    expect(await failure(() => store.deletePet(id))).toMatchObject({ status: 409, code: 'pet_reserved', operation: 'deletePet' });
    await store.cancelOrder(order.id);
    // Available again, as created, but held and released since: updatedAt moved, and the ETag
    // names the representation, so it is not the creation's.
    const again = await store.updatePet(id, {});
    expect(again.data).toEqual({ ...created.data, updatedAt: expect.stringMatching(INSTANT) });
    expect(again.data.updatedAt > created.data.updatedAt, 'the order moved updatedAt').toBe(true);
    const { etag } = again;
    expect(etag).not.toBe(created.etag);
    // Renamed by someone else: the ETag this client holds is stale, and nothing is removed.
    const renamed = await store.updatePet(id, { name: 'Leaving soon' });
    expect(await failure(() => store.deletePet(id, { ifMatch: etag }))).toMatchObject({ status: 412, code: 'precondition_failed' });
    expect((await store.listPets({ id: [id] })).data).toEqual([renamed.data]);
    const removed = await store.deletePet(id, { ifMatch: renamed.etag });
    expect(removed.response.status).toBe(204);
    expect(removed.data).toBeUndefined();

    expect(await failure(() => store.getPet(id))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await failure(() => store.updatePet(id, {}))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await failure(() => store.deletePet(id))).toMatchObject({ status: 404, code: 'not_found' });
    expect((await store.listPets({ id: [id] })).data).toEqual([]);
    expect((await store.listPets({ categoryId: 33 })).data).toEqual([]);
    expect(await failure(() => store.placeOrder({ petId: id }))).toMatchObject({ status: 422, code: 'pet_not_found' });
    expect((await store.getOrder(order.id)).data).toMatchObject({ id: order.id, petId: id, status: 'cancelled' });
  });

  it('listPets filters by categoryId, and listAllPets follows its pages', async () => {
    const made: number[] = [];
    for (let i = 0; i < 5; i++) made.push((await store.createPet({ name: `Category 34 #${i}`, categoryId: 34, status: i % 2 ? 'sold' : 'available' })).data.id);
    await store.createPet({ name: 'Category 35', categoryId: 35 });
    const ids: number[] = [];
    for await (const pet of store.listAllPets({ categoryId: 34, limit: 2 })) ids.push(pet.id);
    expect(ids).toEqual(made);
    expect((await store.listPets({ categoryId: 34, status: 'sold' })).data.map((p) => p.id)).toEqual([made[1], made[3]]);
    // In another order, the iterator follows the sorted pages: names descending, then ids.
    const sorted: number[] = [];
    for await (const pet of store.listAllPets({ categoryId: 34, orderBy: 'name desc', limit: 2 })) sorted.push(pet.id);
    expect(sorted).toEqual([...made].reverse());
    // Searched: by relevance (every pet's words match exactly: then by id), over pages of 2.
    const searched: number[] = [];
    for await (const pet of store.listAllPets({ q: 'category 34', limit: 2 })) searched.push(pet.id);
    expect(searched).toEqual(made);
  });

  it('categories: named (201), renamed (200), a name taken ignoring case (409), listed page by page, removed (204); pets keep their categoryId', async () => {
    const { data: pet } = await store.createPet({ name: 'Categorised', categoryId: 41 });
    const named = await store.putCategory(41, 'Dogs');
    expect(named.response.status).toBe(201);
    expect(named.response.headers.get('location')).toBe('/v1/categories/41');
    expect(named.data).toEqual({ id: 41, name: 'Dogs' });
    const again = await store.putCategory(41, 'Dogs');
    expect(again.response.status).toBe(200);
    const renamed = await store.putCategory(41, 'Hounds');
    expect(renamed.response.status).toBe(200);
    expect(renamed.data).toEqual({ id: 41, name: 'Hounds' });
    expect((await store.putCategory(42, 'Cats')).response.status).toBe(201);
    expect(await failure(() => store.putCategory(43, 'hounds'))).toMatchObject({ status: 409, code: 'category_name_taken', operation: 'putCategory' });
    expect((await store.getCategory(41)).data).toEqual({ id: 41, name: 'Hounds' });

    const firstPage = await store.listCategories({ limit: 1 });
    expect(firstPage.data).toEqual([{ id: 41, name: 'Hounds' }]);
    expect(firstPage.response.headers.get('link')).toMatch(/^<\/v1\/categories\?[^>]*cursor=[^>]*>; rel="next"$/);
    const all = [];
    for await (const category of store.listAllCategories({ limit: 1 })) all.push(category);
    expect(all).toEqual([{ id: 41, name: 'Hounds' }, { id: 42, name: 'Cats' }]);

    const removed = await store.deleteCategory(41);
    expect(removed.response.status).toBe(204);
    expect(await failure(() => store.getCategory(41))).toMatchObject({ status: 404, code: 'not_found', operation: 'getCategory' });
    expect(await failure(() => store.deleteCategory(41))).toMatchObject({ status: 404, code: 'not_found' });
    // A name given to no category any more is free again; the pet was never touched.
    expect((await store.putCategory(43, 'Hounds')).response.status).toBe(201);
    expect((await store.listPets({ id: [pet.id] })).data).toEqual([pet]);
    expect((await store.listPets({ categoryId: 41 })).data).toEqual([pet]);
  });

  it('throws the error answers of the 1.3.0 operations as AnimalStoreErrors', async () => {
    const cases = [
      // @ts-expect-error only placing an order makes a pet pending; sent anyway to see the 400
      ['updatePet status pending', () => store.updatePet(1, { status: 'pending' }), 400, 'bad_request'],
      // @ts-expect-error a name cannot be taken away; sent anyway
      ['updatePet name null', () => store.updatePet(1, { name: null }), 400, 'bad_request'],
      // @ts-expect-error id is not a field of a patch; sent anyway
      ['updatePet with id', () => store.updatePet(1, { id: 2 }), 400, 'bad_request'],
      ['updatePet with a malformed If-Match', () => store.updatePet(1, {}, { ifMatch: 'no quotes' }), 400, 'bad_request'],
      ['updatePet of an unknown id', () => store.updatePet(987654, {}), 404, 'not_found'],
      ['deletePet 0', () => store.deletePet(0), 400, 'bad_request'],
      ['deletePet of an unknown id', () => store.deletePet(987654), 404, 'not_found'],
      ['getCategory 0', () => store.getCategory(0), 400, 'bad_request'],
      ['putCategory with an empty name', () => store.putCategory(44, ''), 400, 'bad_request'],
      ['listCategories limit=0', () => store.listCategories({ limit: 0 }), 400, 'bad_request'],
      ['updatePet with an invalid key', () => anonymous.updatePet(1, {}), 401, 'unauthorized'],
      ['deletePet with an invalid key', () => anonymous.deletePet(1), 401, 'unauthorized'],
      ['listCategories with an invalid key', () => anonymous.listCategories(), 401, 'unauthorized'],
      ['getCategory with an invalid key', () => anonymous.getCategory(1), 401, 'unauthorized'],
      ['putCategory with an invalid key', () => anonymous.putCategory(1, 'Nobody'), 401, 'unauthorized'],
      ['deleteCategory with an invalid key', () => anonymous.deleteCategory(1), 401, 'unauthorized'],
      ['createApiKey with an invalid key', () => anonymous.createApiKey({ name: 'Nobody', scopes: ['pets:read'] }), 401, 'unauthorized'],
      ['listApiKeys with an invalid key', () => anonymous.listApiKeys(), 401, 'unauthorized'],
      ['getApiKey with an invalid key', () => anonymous.getApiKey(1), 401, 'unauthorized'],
      ['revokeApiKey with an invalid key', () => anonymous.revokeApiKey(1), 401, 'unauthorized'],
      ['rotateApiKey with an invalid key', () => anonymous.rotateApiKey(1), 401, 'unauthorized'],
      ['getApiKey 0', () => store.getApiKey(0), 400, 'bad_request'],
      ['getApiKey of an unknown id', () => store.getApiKey(987654), 404, 'not_found'],
      ['revokeApiKey of an unknown id', () => store.revokeApiKey(987654), 404, 'not_found'],
      ['rotateApiKey of another key, or of none', () => store.rotateApiKey(987654), 403, 'forbidden'],
      ['rotateApiKey with a grace over 7 days', () => store.rotateApiKey(1, { graceSeconds: 604_801 }), 400, 'bad_request'],
      ['createApiKey without scopes', () => store.createApiKey({ name: 'Nobody', scopes: [] }), 400, 'bad_request'],
      ['createApiKey expiring in the past', () => store.createApiKey({ name: 'Nobody', scopes: ['pets:read'], expiresAt: '2020-01-01T00:00:00.000Z' }), 400, 'bad_request'],
      // @ts-expect-error the compiler refuses a scope the contract does not have; sent anyway to see the 400
      ['createApiKey with an unknown scope', () => store.createApiKey({ name: 'Nobody', scopes: ['pets:delete'] }), 400, 'bad_request'],
      ['listApiKeys limit=0', () => store.listApiKeys({ limit: 0 }), 400, 'bad_request'],
    ] as const;
    for (const [title, call, status, code] of cases) {
      const error = await failure(call);
      expect(error, title).toMatchObject({ status, code, body: { code, status } });
      expect(error.requestId, title).toMatch(/./);
    }
  });

  it('API keys: one created with pets:read alone (its secret shown once) lists pets and is refused every other scope with 403 insufficient_scope naming it; no key grants a scope it lacks', async () => {
    const created = await store.createApiKey({ name: 'storefront', scopes: ['pets:read'] });
    expect(created.response.status).toBe(201);
    const { secret, ...key } = created.data;
    expect(secret).toMatch(/^ask_[A-Za-z0-9_-]{43}$/);
    expect(key).toEqual({ id: expect.any(Number), name: 'storefront', prefix: secret.slice(0, 8), scopes: ['pets:read'], createdAt: expect.any(String) });
    expect(created.response.headers.get('location')).toBe(`/v1/api-keys/${key.id}`);
    // Never shown again: not by getApiKey, not in the list.
    const fetched = await store.getApiKey(key.id);
    expect(fetched.data).not.toHaveProperty('secret');
    expect(fetched.data).toMatchObject(key);
    const listed = [];
    for await (const each of store.listAllApiKeys({ limit: 1 })) listed.push(each);
    expect(listed.map((each) => each.id)).toContain(key.id);
    expect(listed.filter((each) => 'secret' in each)).toEqual([]);
    expect(JSON.stringify(listed)).not.toContain(secret);

    const reader = createAnimalStoreClient({ baseUrl, apiKey: secret, fetch: checkedFetch });
    expect((await reader.listPets({ limit: 1 })).response.status).toBe(200);
    expect((await reader.getInventory()).response.status).toBe(200);
    expect((await reader.listCategories()).response.status).toBe(200);
    const cases = [
      ['createPet', () => reader.createPet({ name: 'Refused', categoryId: 1 }), 'pets:write'],
      // The scope is checked before the body: an invalid one is still a 403.
      ['createPet with an invalid body', () => reader.createPet({ name: '', categoryId: 1 }), 'pets:write'],
      ['updatePet', () => reader.updatePet(1, {}), 'pets:write'],
      ['putCategory', () => reader.putCategory(1, 'Refused'), 'pets:write'],
      ['placeOrder', () => reader.placeOrder({ petId: 1 }), 'orders:write'],
      ['listOrders', () => reader.listOrders(), 'orders:read'],
      ['createApiKey', () => reader.createApiKey({ name: 'Refused', scopes: ['pets:read'] }), 'keys:manage'],
    ] as const;
    for (const [title, call, scope] of cases) {
      const error = await failure(call);
      expect(error, title).toMatchObject({ status: 403, code: 'insufficient_scope', scope, body: { code: 'insufficient_scope', status: 403 } });
      expect(error.response.headers.get('www-authenticate'), title).toBe(`Bearer realm="animal-store", error="insufficient_scope", scope="${scope}"`);
      expect(error.message, title).toContain(scope);
    }
    // Nothing was written by the refused calls.
    expect((await store.listPets({ limit: 100 })).data.filter((pet) => pet.name === 'Refused')).toEqual([]);

    // A key that manages keys can grant only the scopes it holds.
    const manager = await store.createApiKey({ name: 'key manager', scopes: ['keys:manage', 'pets:read'] });
    const managing = createAnimalStoreClient({ baseUrl, apiKey: manager.data.secret, fetch: checkedFetch });
    expect((await managing.createApiKey({ name: 'granted', scopes: ['pets:read'] })).data.scopes).toEqual(['pets:read']);
    const beyond = await failure(() => managing.createApiKey({ name: 'beyond', scopes: ['pets:read', 'orders:write'] }));
    expect(beyond).toMatchObject({ status: 403, code: 'insufficient_scope', scope: 'orders:write' });
    const names = [];
    for await (const each of store.listAllApiKeys()) names.push(each.name);
    expect(names).not.toContain('beyond');
  });

  it('API keys: a key rotates itself with a grace, both secrets work; rotated again, the older one stops; revoked, none works, nor rotates; a key past its expiresAt stops', async () => {
    const { data: created } = await store.createApiKey({ name: 'rotating', scopes: ['pets:read'] });
    const as = (secret: string) => createAnimalStoreClient({ baseUrl, apiKey: secret, fetch: checkedFetch, retry: false });
    const answers = async (secret: string): Promise<number> =>
      as(secret)
        .listPets({ limit: 1 })
        .then(({ response }) => response.status, (error: unknown) => (error instanceof AnimalStoreError ? error.status : Promise.reject(error)));
    expect(await answers(created.secret)).toBe(200);

    const before = Date.now();
    // A key rotates its own secret, with its current one.
    const rotated = await as(created.secret).rotateApiKey(created.id, { graceSeconds: 600 });
    expect(rotated.response.status).toBe(200);
    expect(rotated.data).toMatchObject({ id: created.id, name: 'rotating', scopes: ['pets:read'], createdAt: created.createdAt, prefix: rotated.data.secret.slice(0, 8) });
    expect(rotated.data.secret).toMatch(/^ask_[A-Za-z0-9_-]{43}$/);
    expect(rotated.data.secret).not.toBe(created.secret);
    const graceEnds = Date.parse(rotated.data.previousSecretExpiresAt ?? '');
    expect(graceEnds).toBeGreaterThanOrEqual(before + 599_000);
    expect(graceEnds).toBeLessThanOrEqual(Date.now() + 601_000);
    // No downtime: the deployed secret keeps working while the new one is rolled out.
    expect(await answers(created.secret)).toBe(200);
    expect(await answers(rotated.data.secret)).toBe(200);
    expect((await store.getApiKey(created.id)).data.previousSecretExpiresAt).toBe(rotated.data.previousSecretExpiresAt);

    // Rotating again ends the first secret's grace at once (every instance within 2 s); the
    // secret it replaces gets the new grace, 0 here: it stops too.
    expect(await failure(() => as(created.secret).rotateApiKey(created.id))).toMatchObject({ status: 403, code: 'forbidden', operation: 'rotateApiKey' });
    const again = await as(rotated.data.secret).rotateApiKey(created.id, { graceSeconds: 0 });
    await within(WAIT_MS, async () => (await answers(created.secret)) === 401, 100);
    await within(WAIT_MS, async () => (await answers(rotated.data.secret)) === 401, 100);
    expect(await answers(again.data.secret)).toBe(200);

    // Revoked: its secrets stop on every instance within 2 s; revoking again answers it as it is.
    const revoked = await store.revokeApiKey(created.id);
    expect(revoked.data).toMatchObject({ id: created.id, revokedAt: expect.any(String) });
    expect(revoked.data).not.toHaveProperty('secret');
    await within(WAIT_MS, async () => (await answers(again.data.secret)) === 401, 100);
    expect((await store.revokeApiKey(created.id)).data.revokedAt).toBe(revoked.data.revokedAt);
    expect(await failure(() => as(again.data.secret).rotateApiKey(created.id))).toMatchObject({ status: 401, code: 'unauthorized', operation: 'rotateApiKey' });
    expect((await store.getApiKey(created.id)).data.revokedAt).toBe(revoked.data.revokedAt);

    // A key that expires: it works until expiresAt, then answers 401 and cannot be rotated.
    const expiresAt = new Date(Date.now() + 3000).toISOString();
    const { data: brief } = await store.createApiKey({ name: 'brief', scopes: ['pets:read'], expiresAt });
    expect(brief.expiresAt).toBe(expiresAt);
    expect(await answers(brief.secret)).toBe(200);
    await within(WAIT_MS, async () => (await answers(brief.secret)) === 401, 250);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
    expect(await failure(() => as(brief.secret).rotateApiKey(brief.id))).toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('events (1.4.0): the feed walked to its first empty page, resumed from its cursor; getEvent; its error answers', async () => {
    const { data: pet } = await store.createPet({ name: 'Evented', categoryId: 41, status: 'available' });
    const feed = store.listAllEvents({ type: ['pet.created', 'pet.updated'], limit: 3 });
    const seen = [];
    for await (const event of feed) seen.push(event);
    expect(seen.filter((e) => e.type === 'pet.created' && e.data.id === pet.id)).toHaveLength(1);
    expect(seen.map((e) => e.id)).toEqual([...new Set(seen.map((e) => e.id))].sort((a, b) => a - b));
    expect(feed.cursor).toMatch(/./);
    await store.updatePet(pet.id, { name: 'Evented again' });
    const since = [];
    for await (const event of feed) since.push(event);
    expect(since.map((e) => [e.type, e.data.id])).toEqual([['pet.updated', pet.id]]);
    const last = since[0];
    expect((await store.getEvent(last?.id ?? 0)).data).toEqual(last);
    expect(await failure(() => store.getEvent(9_007_199_254_740_991))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await failure(() => store.listEvents({ cursor: 'eyJhIjoyMH0.not-its-signature' }))).toMatchObject({ status: 400, code: 'bad_request' });
    expect(await failure(() => anonymous.listEvents())).toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('webhook endpoints (1.4.0): created on loopback with its secret, listed, disabled, rotated, its deliveries listed, removed; its error answers', async () => {
    const created = await store.createWebhookEndpoint({ url: 'http://127.0.0.1:9/hook', eventTypes: ['order.completed'], description: 'client e2e' });
    expect(created.response.status).toBe(201);
    const id = created.data.id;
    const { secret, ...shown } = created.data;
    expect(secret).toMatch(/^whsec_/);
    const listed = [];
    for await (const endpoint of store.listAllWebhookEndpoints({ limit: 1 })) listed.push(endpoint);
    expect(listed).toContainEqual(shown);
    const disabled = await store.updateWebhookEndpoint(id, { enabled: false });
    // Disabled by its key: `disabledAt` says when, and no `disabledReason` (only the service gives one).
    expect(disabled.data).toEqual({ ...shown, enabled: false, disabledAt: disabled.data.disabledAt });
    expect(Date.parse(String(disabled.data.disabledAt))).toBeGreaterThanOrEqual(Date.parse(shown.createdAt));
    expect(disabled.data).not.toHaveProperty('disabledReason');
    expect((await store.getWebhookEndpoint(id)).data).toEqual(disabled.data);
    const rotated = await store.rotateWebhookEndpointSecret(id);
    expect(rotated.data.secret).not.toBe(secret);
    expect((await store.listWebhookDeliveries(id)).data).toEqual([]);
    expect((await store.deleteWebhookEndpoint(id)).response.status).toBe(204);
    expect(await failure(() => store.getWebhookEndpoint(id))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await failure(() => store.createWebhookEndpoint({ url: 'ftp://127.0.0.1/hook', eventTypes: ['order.completed'] }))).toMatchObject({ status: 400, code: 'bad_request' });
  });

  it('raw is openapi-fetch: an error answer comes back as { error }, not thrown', async () => {
    const result = await store.raw.POST('/pets', { body: { name: 'Rex', categoryId: 1 }, headers: { 'Content-Type': 'text/plain' }, bodySerializer: () => 'Rex' });
    expect(result.response.status).toBe(415);
    expect(result.data).toBeUndefined();
    expect(result.error).toMatchObject({ code: 'unsupported_media_type', status: 415 });
  });
});
