// A client team's program: plain Node, ESM, no TypeScript, importing the INSTALLED package
// by name. test/e2e/client-package.test.ts copies it into an empty project where the
// packed tarball was installed, runs it against a real service, and reads the JSON report
// it prints: one entry per operation of the contract (OPERATIONS, read from the contract
// by the test, with its method and path) and one per behaviour below, each "ok" or why not.
//
// An operation without a case in `operationCases` gets the derived one (`derivedCase`):
// the installed package's operation table and `call()` send the contract's method and path,
// and the service answers without a 5xx. A case of its own checks what the answer says.
import assert from 'node:assert/strict';
import { AnimalStoreError, createAnimalStoreClient, operationTable, verifyWebhook, WEBHOOK_EVENT_TYPES, WebhookVerificationError } from '@animal-store/client';
// Installed with the package, as its dependency: what a receiver (and the service) signs with.
import { Webhook } from 'standardwebhooks';

const { BASE_URL, LIMITED_URL, API_KEY, OPERATIONS } = process.env;
const contractRequests = JSON.parse(OPERATIONS ?? '[]');
const contractOperations = contractRequests.map((o) => o.operationId);
const store = createAnimalStoreClient({ baseUrl: BASE_URL, apiKey: API_KEY });
const tag = `consumer-${process.pid}-${Date.now()}`;
// Category ids of this run's own, should the service be shared: each case names its own.
const categoryIds = 1_000_000 + (process.pid % 1_000_000) * 8;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SECRET = /^ask_[A-Za-z0-9_-]{43}$/;
const MAX_ID = 9_007_199_254_740_991;
const WHSEC = /^whsec_[A-Za-z0-9+/]{32}$/;
// Webhook endpoints of this run: loopback, port 9 (nothing listens; deliveries fail and are
// retried, which these cases do not wait for). The service runs with WEBHOOK_ALLOW_PRIVATE=true.
const HOOK_URL = 'http://127.0.0.1:9/hook';
// A Pet's createdAt and updatedAt: RFC 3339, UTC, to the millisecond.
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Waits long enough that the next statement's time is a later millisecond than any before. */
const nextMillisecond = () => new Promise((resolve) => setTimeout(resolve, 5));

/** A webhook endpoint of this run's own. */
const newEndpoint = (what, eventTypes = ['pet.created']) => store.createWebhookEndpoint({ url: HOOK_URL, eventTypes, description: `${tag} ${what}` });

/** The status listPets answers to a client holding `secret` (200, or the error's). */
async function statusWith(secret) {
  const client = createAnimalStoreClient({ baseUrl: BASE_URL, apiKey: secret, retry: false });
  return client.listPets({ limit: 1 }).then(
    ({ response }) => response.status,
    (error) => (error instanceof AnimalStoreError ? error.status : Promise.reject(error)),
  );
}

/** Waits until listPets with `secret` answers `status`: a revocation or an ended grace reaches every instance within 2 s. */
async function untilAnswers(secret, status, ms = 3000) {
  const started = Date.now();
  for (;;) {
    const got = await statusWith(secret);
    if (got === status) return;
    if (Date.now() - started > ms) assert.fail(`listPets with the secret still answers ${got} after ${ms} ms, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The AnimalStoreError that `promise` rejects with. */
async function rejection(promise) {
  const outcome = await promise.then(
    () => assert.fail('resolved, but an AnimalStoreError was expected'),
    (error) => error,
  );
  assert.ok(outcome instanceof AnimalStoreError, `expected an AnimalStoreError, got ${outcome}`);
  assert.match(outcome.requestId, /./, 'an error carries the X-Request-Id');
  return outcome;
}

/** Every operation of the contract, by operationId: calls it through the client and checks the answer. */
const operationCases = {
  async listPets() {
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await store.createPet({ name: `${tag} listed ${i}`, categoryId: 11, status: 'pending' })).data);
    const page = await store.listPets({ status: 'pending', limit: 2 });
    assert.equal(page.response.status, 200);
    assert.equal(page.data.length, 2);
    assert.match(page.response.headers.get('link') ?? '', /rel="next"/);
    const all = [];
    for await (const pet of store.listAllPets({ status: 'pending', limit: 2 })) all.push(pet);
    assert.deepEqual(all.filter((p) => p.name.startsWith(`${tag} listed`)), made);
    const ids = all.map((p) => p.id);
    assert.deepEqual(ids, [...new Set(ids)].sort((a, b) => a - b), 'each pet once, in ascending id order');
    const bad = await rejection(store.listPets({ limit: 0 }));
    assert.equal(bad.status, 400);
    assert.equal(bad.code, 'bad_request');
    assert.equal(bad.details?.[0]?.field, 'limit');
  },

  async createPet() {
    const first = await store.createPet({ name: `${tag} created`, categoryId: 12, status: 'available' });
    assert.equal(first.response.status, 201);
    assert.match(first.data.createdAt, INSTANT);
    assert.deepEqual(first.data, { id: first.data.id, name: `${tag} created`, categoryId: 12, status: 'available', createdAt: first.data.createdAt, updatedAt: first.data.createdAt });
    assert.equal(first.response.headers.get('location'), `/v1/pets/${first.data.id}`);
    assert.match(first.idempotencyKey, UUID, 'a key is generated for the caller');
    assert.equal(first.replayed, false);
    const bad = await rejection(store.createPet({ name: '', categoryId: 12 }));
    assert.equal(bad.status, 400);
    assert.match(bad.idempotencyKey, UUID);
  },

  async batchCreatePets() {
    const made = await store.batchCreatePets([
      { name: `${tag} batch a`, categoryId: 15, status: 'available' },
      { name: `${tag} batch b`, categoryId: 15 },
    ]);
    assert.equal(made.response.status, 200);
    assert.deepEqual(made.data.pets.map((p) => [p.name, p.status]), [[`${tag} batch a`, 'available'], [`${tag} batch b`, undefined]]);
    assert.ok(made.data.pets[0].id < made.data.pets[1].id, 'ids ascend in the order given');
    assert.match(made.idempotencyKey, UUID, 'a key is generated for the caller');
    const bad = await rejection(store.batchCreatePets([{ name: `${tag} fine`, categoryId: 15 }, { name: '', categoryId: 15 }]));
    assert.equal(bad.status, 400);
    assert.equal(bad.details?.[0]?.field, '/requests/1/name');
    const { data: none } = await store.listPets({ categoryId: 15, limit: 100 });
    assert.equal(none.filter((p) => p.name === `${tag} fine`).length, 0, 'a refused batch stores nothing');
  },

  async exportPets() {
    await store.batchCreatePets([{ name: `${tag} export, "one"`, categoryId: 16 }, { name: `${tag} export two`, categoryId: 16, status: 'sold' }]);
    const csv = await store.exportPets({ categoryId: 16 });
    assert.equal(csv.response.status, 200);
    assert.match(csv.response.headers.get('content-type'), /^text\/csv/);
    const lines = (await new Response(csv.data).text()).split('\r\n');
    assert.equal(lines[0], 'id,name,categoryId,status,tags');
    assert.ok(lines[1].endsWith(`,"${tag} export, ""one""",16,,`), `a quoted name: ${lines[1]}`);
    const ndjson = await store.exportPets({ categoryId: 16, status: 'sold' }, { format: 'application/x-ndjson' });
    const pets = (await new Response(ndjson.data).text()).trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(pets.map((p) => p.name), [`${tag} export two`]);
  },

  async getPet() {
    const { data: pet } = await store.createPet({ name: `${tag} fetched`, categoryId: 13 });
    const fetched = await store.getPet(pet.id);
    assert.deepEqual(fetched.data, pet);
    assert.equal(fetched.deprecation.sunset?.toISOString(), '2030-12-05T00:00:00.000Z');
    const missing = await rejection(store.getPet(9_007_199_254_740_991));
    assert.equal(missing.status, 404);
    assert.equal(missing.code, 'not_found');
    assert.equal(missing.operation, 'getPet');
    assert.equal(missing.deprecation?.link, '</v1/pets?id=9007199254740991>; rel="successor-version"');
    // The replacement: listPets with the id filter, its pages followed (a page may stop
    // short of a pet while a lower id's writer is still open: the contract's append order).
    const replacement = [];
    for await (const found of store.listAllPets({ id: [pet.id] })) replacement.push(found);
    assert.deepEqual(replacement, [pet]);
  },

  async updatePet() {
    const created = await store.createPet({ name: `${tag} draft`, categoryId: 20 });
    assert.match(created.etag, /^"[A-Za-z0-9_-]+"$/, 'createPet resolves with the ETag');
    assert.match(created.data.createdAt, INSTANT);
    assert.equal(created.data.updatedAt, created.data.createdAt, 'a new pet was updated when it was created');
    await nextMillisecond();
    const offered = await store.updatePet(created.data.id, { status: 'available' }, { ifMatch: created.etag });
    assert.equal(offered.response.status, 200);
    assert.match(offered.data.updatedAt, INSTANT);
    assert.ok(offered.data.updatedAt > created.data.updatedAt, `a change moves updatedAt: ${offered.data.updatedAt} after ${created.data.updatedAt}`);
    assert.deepEqual(offered.data, { ...created.data, status: 'available', updatedAt: offered.data.updatedAt });
    assert.notEqual(offered.etag, created.etag, 'a change makes a new ETag');
    const stale = await rejection(store.updatePet(created.data.id, { name: `${tag} late` }, { ifMatch: created.etag }));
    assert.equal(stale.status, 412);
    assert.equal(stale.code, 'precondition_failed');
    await nextMillisecond();
    const unchanged = await store.updatePet(created.data.id, {});
    assert.equal(unchanged.etag, offered.etag, '{} changes nothing');
    assert.deepEqual(unchanged.data, offered.data, '{} changes nothing, updatedAt included');
    const { data: order } = await store.placeOrder({ petId: created.data.id });
    const reserved = await rejection(store.updatePet(created.data.id, { status: null }));
    assert.equal(reserved.status, 409);
    assert.equal(reserved.code, 'pet_reserved');
    await store.cancelOrder(order.id);
    await nextMillisecond();
    const unlisted = await store.updatePet(created.data.id, { status: null });
    assert.ok(unlisted.data.updatedAt > offered.data.updatedAt, `the order and status: null moved updatedAt: ${unlisted.data.updatedAt} after ${offered.data.updatedAt}`);
    assert.deepEqual(unlisted.data, { ...created.data, updatedAt: unlisted.data.updatedAt }, 'status: null takes the status away');
  },

  async deletePet() {
    const { data: pet } = await store.createPet({ name: `${tag} removed`, categoryId: 21, status: 'available' });
    const { data: order } = await store.placeOrder({ petId: pet.id });
    assert.equal((await rejection(store.deletePet(pet.id))).code, 'pet_reserved');
    await store.completeOrder(order.id);
    const { etag } = await store.updatePet(pet.id, {});
    const removed = await store.deletePet(pet.id, { ifMatch: etag });
    assert.equal(removed.response.status, 204);
    assert.deepEqual((await store.listPets({ id: [pet.id] })).data, []);
    assert.equal((await rejection(store.deletePet(pet.id))).status, 404);
    assert.equal((await store.getOrder(order.id)).data.petId, pet.id, 'its order stays readable');
  },

  async listCategories() {
    const first = categoryIds;
    await store.putCategory(first, `${tag} listed A`);
    await store.putCategory(first + 1, `${tag} listed B`);
    const page = await store.listCategories({ limit: 1 });
    assert.equal(page.response.status, 200);
    assert.equal(page.data.length, 1);
    assert.match(page.response.headers.get('link') ?? '', /rel="next"/);
    const all = [];
    for await (const category of store.listAllCategories({ limit: 1 })) all.push(category);
    assert.deepEqual(all.filter((c) => c.name.startsWith(`${tag} listed`)), [{ id: first, name: `${tag} listed A` }, { id: first + 1, name: `${tag} listed B` }]);
    const ids = all.map((c) => c.id);
    assert.deepEqual(ids, [...new Set(ids)].sort((a, b) => a - b), 'each category once, in ascending id order');
  },

  async getCategory() {
    const id = categoryIds + 2;
    await store.putCategory(id, `${tag} fetched`);
    assert.deepEqual((await store.getCategory(id)).data, { id, name: `${tag} fetched` });
    const missing = await rejection(store.getCategory(9_007_199_254_740_991));
    assert.equal(missing.status, 404);
    assert.equal(missing.code, 'not_found');
  },

  async putCategory() {
    const id = categoryIds + 3;
    const named = await store.putCategory(id, `${tag} named`);
    assert.equal(named.response.status, 201);
    assert.deepEqual(named.data, { id, name: `${tag} named` });
    const renamed = await store.putCategory(id, `${tag} renamed`);
    assert.equal(renamed.response.status, 200);
    const taken = await rejection(store.putCategory(id + 100_000_000, `${tag} RENAMED`));
    assert.equal(taken.status, 409);
    assert.equal(taken.code, 'category_name_taken');
  },

  async deleteCategory() {
    const id = categoryIds + 4;
    await store.putCategory(id, `${tag} removed`);
    const { data: pet } = await store.createPet({ name: `${tag} keeps its category`, categoryId: id });
    const removed = await store.deleteCategory(id);
    assert.equal(removed.response.status, 204);
    assert.equal((await rejection(store.getCategory(id))).status, 404);
    assert.deepEqual((await store.listPets({ id: [pet.id] })).data, [pet], 'pets keep their categoryId');
  },

  async placeOrder() {
    const { data: pet } = await store.createPet({ name: `${tag} for sale`, categoryId: 14, status: 'available' });
    const placed = await store.placeOrder({ petId: pet.id });
    assert.equal(placed.response.status, 201);
    assert.equal(placed.data.status, 'placed');
    assert.equal(placed.data.petId, pet.id);
    assert.equal(placed.response.headers.get('location'), `/v1/store/orders/${placed.data.id}`);
    assert.match(placed.idempotencyKey, UUID, 'a key is generated for the caller');
    assert.equal((await store.listPets({ id: [pet.id] })).data[0]?.status, 'pending');
    const again = await rejection(store.placeOrder({ petId: pet.id }));
    assert.equal(again.status, 409);
    assert.equal(again.code, 'pet_not_available');
    const missing = await rejection(store.placeOrder({ petId: 9_007_199_254_740_991 }));
    assert.equal(missing.status, 422);
    assert.equal(missing.code, 'pet_not_found');
    // The same key again: the stored answer, nothing placed twice.
    const { data: other } = await store.createPet({ name: `${tag} replayed`, categoryId: 14, status: 'available' });
    const first = await store.placeOrder({ petId: other.id }, { idempotencyKey: `${tag}-place` });
    const replay = await store.placeOrder({ petId: other.id }, { idempotencyKey: `${tag}-place` });
    assert.equal(replay.replayed, true);
    assert.deepEqual(replay.data, first.data);
  },

  async listOrders() {
    const made = [];
    for (let i = 0; i < 3; i++) {
      const { data: pet } = await store.createPet({ name: `${tag} listed order ${i}`, categoryId: 15, status: 'available' });
      made.push((await store.placeOrder({ petId: pet.id })).data);
    }
    const page = await store.listOrders({ status: 'placed', limit: 2 });
    assert.equal(page.response.status, 200);
    assert.equal(page.data.length, 2);
    const all = [];
    for await (const order of store.listAllOrders({ limit: 2 })) all.push(order);
    for (const order of made) assert.equal(all.filter((o) => o.id === order.id).length, 1, `order ${order.id} once`);
    const ids = all.map((o) => o.id);
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b), 'in ascending id order');
  },

  async getOrder() {
    const { data: pet } = await store.createPet({ name: `${tag} looked up`, categoryId: 16, status: 'available' });
    const { data: order } = await store.placeOrder({ petId: pet.id });
    assert.deepEqual((await store.getOrder(order.id)).data, order);
    const missing = await rejection(store.getOrder(9_007_199_254_740_991));
    assert.equal(missing.status, 404);
    assert.equal(missing.code, 'not_found');
  },

  async cancelOrder() {
    const { data: pet } = await store.createPet({ name: `${tag} returned`, categoryId: 17, status: 'available' });
    const { data: order } = await store.placeOrder({ petId: pet.id });
    const cancelled = await store.cancelOrder(order.id);
    assert.equal(cancelled.data.status, 'cancelled');
    assert.equal((await store.listPets({ id: [pet.id] })).data[0]?.status, 'available');
    const again = await rejection(store.cancelOrder(order.id));
    assert.equal(again.status, 409);
    assert.equal(again.code, 'order_closed');
  },

  async completeOrder() {
    const { data: pet } = await store.createPet({ name: `${tag} sold`, categoryId: 18, status: 'available' });
    const { data: order } = await store.placeOrder({ petId: pet.id });
    const completed = await store.completeOrder(order.id);
    assert.equal(completed.data.status, 'completed');
    assert.equal((await store.listPets({ id: [pet.id] })).data[0]?.status, 'sold');
    const again = await rejection(store.completeOrder(order.id));
    assert.equal(again.code, 'order_closed');
  },

  async createApiKey() {
    const created = await store.createApiKey({ name: `${tag} storefront`, scopes: ['pets:read'] });
    assert.equal(created.response.status, 201);
    assert.match(created.data.secret, SECRET);
    assert.equal(created.data.prefix, created.data.secret.slice(0, 8));
    assert.deepEqual(created.data.scopes, ['pets:read']);
    assert.equal(created.response.headers.get('location'), `/v1/api-keys/${created.data.id}`);
    assert.equal('idempotencyKey' in created, false, 'createApiKey takes no Idempotency-Key');
    // The key does what its scope allows, and nothing else.
    const reader = createAnimalStoreClient({ baseUrl: BASE_URL, apiKey: created.data.secret });
    assert.equal((await reader.listPets({ limit: 1 })).response.status, 200);
    const refused = await rejection(reader.createPet({ name: `${tag} refused`, categoryId: 22 }));
    assert.equal(refused.status, 403);
    assert.equal(refused.code, 'insufficient_scope');
    assert.equal(refused.scope, 'pets:write');
    assert.equal(refused.response.headers.get('www-authenticate'), 'Bearer realm="animal-store", error="insufficient_scope", scope="pets:write"');
    const past = await rejection(store.createApiKey({ name: `${tag} past`, scopes: ['pets:read'], expiresAt: '2020-01-01T00:00:00.000Z' }));
    assert.equal(past.status, 400);
    assert.equal(past.code, 'bad_request');
  },

  async listApiKeys() {
    const made = [];
    for (const name of ['A', 'B']) made.push((await store.createApiKey({ name: `${tag} listed ${name}`, scopes: ['orders:read'] })).data.id);
    const page = await store.listApiKeys({ limit: 1 });
    assert.equal(page.response.status, 200);
    assert.equal(page.data.length, 1);
    assert.match(page.response.headers.get('link') ?? '', /rel="next"/);
    const all = [];
    for await (const key of store.listAllApiKeys({ limit: 1 })) all.push(key);
    assert.deepEqual(all.filter((k) => k.name.startsWith(`${tag} listed`)).map((k) => k.id), made);
    const ids = all.map((k) => k.id);
    assert.deepEqual(ids, [...new Set(ids)].sort((a, b) => a - b), 'each key once, in ascending id order');
    assert.deepEqual(all.filter((k) => 'secret' in k), [], 'no secret in a list');
  },

  async getApiKey() {
    const { data: created } = await store.createApiKey({ name: `${tag} fetched key`, scopes: ['pets:read', 'orders:read'], expiresAt: '2030-01-01T00:00:00.000Z' });
    const { secret, ...key } = created;
    const fetched = await store.getApiKey(created.id);
    assert.equal('secret' in fetched.data, false, 'the secret is never shown again');
    assert.deepEqual({ ...fetched.data, lastUsedAt: undefined }, { ...key, lastUsedAt: undefined });
    assert.match(secret, SECRET);
    const missing = await rejection(store.getApiKey(MAX_ID));
    assert.equal(missing.status, 404);
    assert.equal(missing.code, 'not_found');
  },

  async revokeApiKey() {
    const { data: created } = await store.createApiKey({ name: `${tag} revoked`, scopes: ['pets:read'] });
    assert.equal(await statusWith(created.secret), 200);
    const revoked = await store.revokeApiKey(created.id);
    assert.equal(revoked.response.status, 200);
    assert.match(revoked.data.revokedAt ?? '', /^\d{4}-/);
    assert.equal('secret' in revoked.data, false);
    await untilAnswers(created.secret, 401);
    const again = await store.revokeApiKey(created.id);
    assert.equal(again.data.revokedAt, revoked.data.revokedAt, 'revoking a revoked key answers it as it is');
    assert.equal((await rejection(store.revokeApiKey(MAX_ID))).status, 404);
  },

  async rotateApiKey() {
    const { data: created } = await store.createApiKey({ name: `${tag} rotated`, scopes: ['pets:read'] });
    await untilAnswers(created.secret, 200);
    // A key rotates its own secret, with its current one.
    const as = (secret) => createAnimalStoreClient({ baseUrl: BASE_URL, apiKey: secret, retry: false });
    const rotated = await as(created.secret).rotateApiKey(created.id, { graceSeconds: 600 });
    assert.equal(rotated.response.status, 200);
    assert.equal(rotated.data.id, created.id);
    assert.match(rotated.data.secret, SECRET);
    assert.notEqual(rotated.data.secret, created.secret);
    assert.equal(rotated.data.prefix, rotated.data.secret.slice(0, 8));
    assert.ok(Date.parse(rotated.data.previousSecretExpiresAt) > Date.now() + 590_000, `grace until ${rotated.data.previousSecretExpiresAt}`);
    // Without downtime: the secret deployed keeps working beside the new one.
    assert.equal(await statusWith(created.secret), 200);
    assert.equal(await statusWith(rotated.data.secret), 200);
    // No key rotates another: that would hand over its identity.
    const another = await rejection(store.rotateApiKey(created.id));
    assert.equal(another.status, 403);
    assert.equal(another.code, 'forbidden');
    // Once the new one is deployed, end the grace: rotating with 0 ends both earlier secrets.
    const last = await as(rotated.data.secret).rotateApiKey(created.id, { graceSeconds: 0 });
    await untilAnswers(created.secret, 401);
    await untilAnswers(rotated.data.secret, 401);
    assert.equal(await statusWith(last.data.secret), 200);
    // Default grace (nothing sent): the secret replaced works one more day.
    const byDefault = await as(last.data.secret).rotateApiKey(created.id);
    assert.ok(Date.parse(byDefault.data.previousSecretExpiresAt) > Date.now() + 86_300_000, `default grace until ${byDefault.data.previousSecretExpiresAt}`);
    await store.revokeApiKey(created.id);
    await untilAnswers(byDefault.data.secret, 401);
    const inactive = await rejection(as(byDefault.data.secret).rotateApiKey(created.id));
    assert.equal(inactive.status, 401);
  },

  async listEvents() {
    const { data: pet } = await store.createPet({ name: `${tag} evented`, categoryId: 21, status: 'available' });
    const page = await store.listEvents({ type: ['pet.created'], limit: 100 });
    assert.equal(page.response.status, 200);
    assert.match(page.response.headers.get('link') ?? '', /^<\/v1\/events\?[^>]*>; rel="next"$/, 'the feed always names a next page');
    // The walk ends at the first empty page, and holds the cursor to resume from.
    const feed = store.listAllEvents({ type: ['pet.created'], limit: 5 });
    const seen = [];
    for await (const event of feed) seen.push(event);
    const mine = seen.filter((e) => e.data.id === pet.id);
    assert.equal(mine.length, 1, 'the pet.created of the pet, once');
    assert.deepEqual(mine[0].data, pet);
    assert.ok(seen.every((e) => e.type === 'pet.created'));
    assert.match(feed.cursor ?? '', /./);
    await store.updatePet(pet.id, { name: `${tag} evented again` });
    await store.createPet({ name: `${tag} evented later`, categoryId: 21 });
    // Resumed from its cursor. A page stops before what a transaction still open anywhere on
    // the server could precede (another test's, on a busy machine), and the walk ends at an
    // empty page: walk again from where it stopped, after a moment, until the event is there.
    const later = [];
    let cursor = feed.cursor;
    for (let attempt = 0; attempt < 100 && !later.includes(`${tag} evented later`); attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      const resumed = store.listAllEvents({ type: ['pet.created'], limit: 5, cursor });
      for await (const event of resumed) later.push(event.data.name);
      cursor = resumed.cursor ?? cursor;
    }
    assert.deepEqual(later.filter((n) => n.startsWith(tag)), [`${tag} evented later`], 'resumed: only what came since, of the type asked');
    const bad = await rejection(store.listEvents({ type: ['pet.sold'] }));
    assert.equal(bad.status, 400);
  },

  async getEvent() {
    const { data: pet } = await store.createPet({ name: `${tag} one event`, categoryId: 22 });
    let found;
    for await (const event of store.listAllEvents({ type: ['pet.created'], limit: 100 })) if (event.data.id === pet.id) found = event;
    assert.ok(found, 'the pet.created of the pet is in the feed');
    const { data, response } = await store.getEvent(found.id);
    assert.equal(response.status, 200);
    assert.deepEqual(data, found);
    const missing = await rejection(store.getEvent(MAX_ID));
    assert.equal(missing.status, 404);
    assert.equal(missing.code, 'not_found');
  },

  async createWebhookEndpoint() {
    const created = await newEndpoint('created', ['order.completed', 'order.expired']);
    assert.equal(created.response.status, 201);
    assert.match(created.data.secret, WHSEC);
    assert.equal(created.response.headers.get('location'), `/v1/webhook-endpoints/${created.data.id}`);
    assert.deepEqual(created.data.eventTypes, ['order.completed', 'order.expired']);
    assert.equal(created.data.enabled, true);
    assert.equal('idempotencyKey' in created, false, 'it takes no Idempotency-Key, so it is never repeated');
    const bad = await rejection(store.createWebhookEndpoint({ url: HOOK_URL, eventTypes: ['pet.sold'] }));
    assert.equal(bad.status, 400);
    assert.equal(bad.details?.[0]?.field, '/eventTypes/0');
  },

  async listWebhookEndpoints() {
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await newEndpoint(`listed ${i}`)).data.id);
    const page = await store.listWebhookEndpoints({ limit: 2 });
    assert.equal(page.data.length, 2);
    assert.match(page.response.headers.get('link') ?? '', /rel="next"/);
    const all = [];
    for await (const endpoint of store.listAllWebhookEndpoints({ limit: 2 })) all.push(endpoint);
    assert.deepEqual(all.filter((e) => made.includes(e.id)).map((e) => e.id), made);
    assert.ok(all.every((e) => !('secret' in e)), 'never a secret');
  },

  async getWebhookEndpoint() {
    const { data: created } = await newEndpoint('fetched');
    const { data } = await store.getWebhookEndpoint(created.id);
    const { secret, ...shown } = created;
    assert.deepEqual(data, shown);
    const missing = await rejection(store.getWebhookEndpoint(MAX_ID));
    assert.equal(missing.status, 404);
  },

  async updateWebhookEndpoint() {
    const { data: created } = await newEndpoint('changed');
    const off = await store.updateWebhookEndpoint(created.id, { enabled: false, eventTypes: ['pet.created', 'pet.deleted'], description: null });
    assert.equal(off.response.status, 200);
    assert.equal(off.data.enabled, false);
    assert.deepEqual(off.data.eventTypes, ['pet.created', 'pet.deleted']);
    assert.equal('description' in off.data, false, 'null removes the description');
    const on = await store.updateWebhookEndpoint(created.id, { enabled: true });
    assert.equal(on.data.enabled, true);
    assert.equal(on.data.disabledReason, undefined);
    const bad = await rejection(store.updateWebhookEndpoint(created.id, { url: 'ftp://127.0.0.1/hook' }));
    assert.equal(bad.status, 400);
  },

  async deleteWebhookEndpoint() {
    const { data: created } = await newEndpoint('removed');
    const removed = await store.deleteWebhookEndpoint(created.id);
    assert.equal(removed.response.status, 204);
    const gone = await rejection(store.getWebhookEndpoint(created.id));
    assert.equal(gone.status, 404);
  },

  async rotateWebhookEndpointSecret() {
    const { data: created } = await newEndpoint('rotated');
    const rotated = await store.rotateWebhookEndpointSecret(created.id);
    assert.equal(rotated.response.status, 200);
    assert.match(rotated.data.secret, WHSEC);
    assert.notEqual(rotated.data.secret, created.secret);
    assert.ok(Date.parse(rotated.data.previousSecretExpiresAt) > Date.now() + 23 * 3_600_000, `previous secret until ${rotated.data.previousSecretExpiresAt}`);
    const missing = await rejection(store.rotateWebhookEndpointSecret(MAX_ID));
    assert.equal(missing.status, 404);
  },

  async listWebhookDeliveries() {
    const { data: created } = await newEndpoint('delivered', ['pet.created']);
    const page = await store.listWebhookDeliveries(created.id, { limit: 10 });
    assert.equal(page.response.status, 200);
    assert.ok(Array.isArray(page.data));
    for await (const attempt of store.listAllWebhookDeliveries(created.id)) assert.ok(attempt.attempt >= 1);
    const missing = await rejection(store.listWebhookDeliveries(MAX_ID));
    assert.equal(missing.status, 404);
  },

  async getInventory() {
    const before = (await store.getInventory()).data;
    const { data: pet } = await store.createPet({ name: `${tag} counted`, categoryId: 19, status: 'available' });
    await store.placeOrder({ petId: pet.id });
    const after = (await store.getInventory()).data;
    assert.deepEqual(after, { ...before, pending: before.pending + 1 });
  },
};

/** What the package promises beyond one call per operation. */
const behaviourCases = {
  async 'a repeat with the same Idempotency-Key replays the answer and adds nothing'() {
    const key = `${tag}-replay`;
    const first = await store.createPet({ name: `${tag} once`, categoryId: 14 }, { idempotencyKey: key });
    const again = await store.createPet({ name: `${tag} once`, categoryId: 14 }, { idempotencyKey: key });
    assert.equal(first.replayed, false);
    assert.equal(again.replayed, true);
    assert.equal(again.response.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.idempotencyKey, key);
    assert.deepEqual(again.data, first.data);
    const named = [];
    for await (const pet of store.listAllPets({ limit: 100 })) if (pet.name === `${tag} once`) named.push(pet.id);
    assert.deepEqual(named, [first.data.id]);
  },

  async 'a 429 is retried after its Retry-After, a keyed createPet included, and thrown when retries are off'() {
    // LIMITED_URL serves one request per key per second: of two calls at once, one is
    // refused. A window may end between the two, so a round without a 429 is repeated.
    const seen = [];
    const retries = [];
    const limited = createAnimalStoreClient({
      baseUrl: LIMITED_URL,
      apiKey: API_KEY,
      retry: { maxAttempts: 10, onRetry: (event) => retries.push(event) },
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (response.status === 429) seen.push(response.headers.get('retry-after'));
        return response;
      },
    });
    for (let round = 0; round < 20 && retries.length === 0; round++) {
      const [created, listed] = await Promise.all([limited.createPet({ name: `${tag} limited ${round}`, categoryId: 15 }), limited.listPets({ limit: 1 })]);
      assert.equal(created.response.status, 201);
      assert.equal(listed.response.status, 200);
    }
    assert.ok(retries.length > 0, 'no 429 in 20 rounds');
    // Every 429 was retried (10 attempts were never used up), each after what it asked for.
    assert.equal(retries.length, seen.length);
    for (const value of seen) assert.match(value, /^\d+$/);
    for (const event of retries) {
      assert.equal(event.status, 429);
      assert.ok(seen.some((value) => Number(value) * 1000 === event.delayMs), `waited ${event.delayMs} ms; Retry-After said ${seen}`);
    }
    const created = [];
    for await (const pet of store.listAllPets({ limit: 100 })) if (pet.name.startsWith(`${tag} limited`)) created.push(pet.name);
    assert.deepEqual(created, [...new Set(created)], 'no pet was created twice');

    const once = createAnimalStoreClient({ baseUrl: LIMITED_URL, apiKey: API_KEY, retry: false });
    let refused;
    for (let round = 0; round < 20 && !refused; round++) {
      const outcomes = await Promise.allSettled([once.listPets({ limit: 1 }), once.listPets({ limit: 1 })]);
      refused = outcomes.find((o) => o.status === 'rejected')?.reason;
    }
    assert.ok(refused instanceof AnimalStoreError, `expected an AnimalStoreError, got ${refused}`);
    assert.equal(refused.status, 429);
    assert.equal(refused.code, 'rate_limited');
    assert.ok(refused.retryAfter >= 1, `retryAfter ${refused.retryAfter}`);
  },

  async 'createApiKey is never repeated, even with retries on: a 429 is thrown and no second key is minted'() {
    // LIMITED_URL serves one request per key per second: listPets spends the second, so the
    // createApiKey right after it is refused (a round where a window ends between the two
    // is repeated).
    const retries = [];
    const limited = createAnimalStoreClient({ baseUrl: LIMITED_URL, apiKey: API_KEY, retry: { maxAttempts: 10, onRetry: (event) => retries.push(event) } });
    const once = createAnimalStoreClient({ baseUrl: LIMITED_URL, apiKey: API_KEY, retry: false });
    let refused;
    let minted = 0;
    for (let round = 0; round < 20 && !refused; round++) {
      await once.listPets({ limit: 1 }).catch(() => undefined);
      await limited.createApiKey({ name: `${tag} minted once`, scopes: ['pets:read'] }).then(
        () => minted++,
        (error) => (refused = error),
      );
    }
    assert.ok(refused instanceof AnimalStoreError, `expected an AnimalStoreError, got ${refused}`);
    assert.equal(refused.status, 429);
    assert.equal(refused.code, 'rate_limited');
    assert.equal(refused.operation, 'createApiKey');
    assert.deepEqual(retries.filter((event) => event.method === 'POST'), [], 'createApiKey was repeated');
    const named = [];
    for await (const key of store.listAllApiKeys({ limit: 100 })) if (key.name === `${tag} minted once`) named.push(key.id);
    assert.equal(named.length, minted, 'one key per call that succeeded, none for the refused one');
  },
};

behaviourCases['verifyWebhook returns the event of a delivery signed by standardwebhooks with the whsec_ secret, and refuses a tampered one'] = async () => {
  const { data: endpoint } = await newEndpoint('verified');
  const event = { id: 7, type: 'pet.created', createdAt: new Date().toISOString(), data: { id: 7, name: 'Rex', categoryId: 2, createdAt: '2026-11-26T10:00:00.000Z', updatedAt: '2026-11-26T10:00:00.000Z' } };
  const body = JSON.stringify(event);
  const now = new Date();
  const headers = { 'webhook-id': '7', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': new Webhook(endpoint.secret).sign('7', now, body) };
  assert.deepEqual(verifyWebhook(endpoint.secret, headers, body), event);
  assert.throws(() => verifyWebhook(endpoint.secret, headers, body.replace('Rex', 'Max')), (error) => error instanceof WebhookVerificationError && error.reason === 'signature');
  assert.equal(WEBHOOK_EVENT_TYPES.length, 10);
};

/**
 * An operation without a case of its own: its entry in the package's operation table is the
 * contract's, `call()` sends one request with the contract's method to a URL of its path (path
 * parameters 0, no query, an empty JSON object as the body when it takes one), and the service
 * answers it: a 2xx, or a 4xx the client throws as an AnimalStoreError with its request id.
 */
async function derivedCase({ operationId, method, path }) {
  assert.deepEqual({ method: operationTable[operationId]?.method, path: operationTable[operationId]?.path }, { method, path }, 'the package sends what the contract says');
  const sent = [];
  const probe = createAnimalStoreClient({
    baseUrl: BASE_URL,
    apiKey: API_KEY,
    retry: false,
    fetch: (input, init) => {
      const request = new Request(input, init);
      sent.push(`${request.method} ${new URL(request.url).pathname}`);
      return fetch(request);
    },
  });
  const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  const params = { ...(names.length > 0 ? { path: Object.fromEntries(names.map((n) => [n, 0])) } : {}), ...(['POST', 'PUT', 'PATCH'].includes(method) ? { body: {} } : {}) };
  const status = await probe.call(operationId, params).then(
    ({ response }) => response.status,
    (error) => {
      assert.ok(error instanceof AnimalStoreError, `expected an answer or an AnimalStoreError, got ${error}`);
      assert.match(error.requestId, /./, 'an error carries the X-Request-Id');
      return error.status;
    },
  );
  const literal = (text) => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
  const template = new RegExp(`^${literal(new URL(BASE_URL).pathname)}${path.split(/\{[^}]+\}/).map(literal).join('[^/]+')}$`);
  assert.equal(sent.length, 1, `one request: ${sent}`);
  assert.match(sent[0], new RegExp(`^${method} `));
  assert.match(sent[0].slice(method.length + 1), template);
  assert.ok(status < 500, `answered ${status}`);
}

const report = { operations: {}, behaviours: {} };
for (const request of contractRequests) {
  const { operationId: operation } = request;
  const run = operation in operationCases ? operationCases[operation] : () => derivedCase(request);
  report.operations[operation] = await run().then(() => 'ok', (error) => String(error?.stack ?? error));
}
for (const operation of Object.keys(operationCases)) {
  if (!contractOperations.includes(operation)) report.operations[operation] = `a case for ${operation}, which the contract does not have`;
}
for (const operation of Object.keys(operationTable)) {
  if (!contractOperations.includes(operation)) report.operations[operation] = `the package's operation table has ${operation}, which the contract does not have (stale client/src/generated?)`;
}
for (const [name, run] of Object.entries(behaviourCases)) report.behaviours[name] = await run().then(() => 'ok', (error) => String(error?.stack ?? error));
process.stdout.write(`${JSON.stringify(report)}\n`);
