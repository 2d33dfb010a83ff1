// A client team's program: plain Node, ESM, no TypeScript, importing the INSTALLED package
// by name. test/e2e/client-package.test.ts copies it into an empty project where the
// packed tarball was installed, runs it against a real service, and reads the JSON report
// it prints: one entry per operation of the contract (OPERATIONS, read from the contract
// by the test) and one per behaviour below, each "ok" or why not.
//
// When the contract gains an operation, its entry reads "the client has no method ..."
// until the client has one, then "no case ..." until `operationCases` calls it.
import assert from 'node:assert/strict';
import { AnimalStoreError, createAnimalStoreClient, operationTable } from '@animal-store/client';

const { BASE_URL, LIMITED_URL, API_KEY, OPERATIONS } = process.env;
const contractOperations = JSON.parse(OPERATIONS ?? '[]');
const store = createAnimalStoreClient({ baseUrl: BASE_URL, apiKey: API_KEY });
const tag = `consumer-${process.pid}-${Date.now()}`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

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
    assert.deepEqual(first.data, { id: first.data.id, name: `${tag} created`, categoryId: 12, status: 'available' });
    assert.equal(first.response.headers.get('location'), `/v1/pets/${first.data.id}`);
    assert.match(first.idempotencyKey, UUID, 'a key is generated for the caller');
    assert.equal(first.replayed, false);
    const bad = await rejection(store.createPet({ name: '', categoryId: 12 }));
    assert.equal(bad.status, 400);
    assert.match(bad.idempotencyKey, UUID);
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
    // The replacement: listPets with the id filter.
    const replacement = await store.listPets({ id: [pet.id] });
    assert.deepEqual(replacement.data, [pet]);
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
};

const report = { operations: {}, behaviours: {} };
for (const operation of contractOperations) {
  if (typeof store[operation] !== 'function') report.operations[operation] = `the client has no method ${operation}`;
  else if (!(operation in operationCases)) report.operations[operation] = `no case for ${operation} in test/e2e/client-package/consumer.mjs`;
  else report.operations[operation] = await operationCases[operation]().then(() => 'ok', (error) => String(error?.stack ?? error));
}
for (const operation of Object.keys(operationCases)) {
  if (!contractOperations.includes(operation)) report.operations[operation] = `a case for ${operation}, which the contract does not have`;
}
for (const operation of Object.keys(operationTable)) {
  if (!contractOperations.includes(operation)) report.operations[operation] = `the package's operation table has ${operation}, which the contract does not have (stale client/src/generated?)`;
}
for (const [name, run] of Object.entries(behaviourCases)) report.behaviours[name] = await run().then(() => 'ok', (error) => String(error?.stack ?? error));
process.stdout.write(`${JSON.stringify(report)}\n`);
