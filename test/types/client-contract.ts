// Type-level test of the typed client, checked by `npm run typecheck`: each
// `@ts-expect-error` fails the build if the call below it starts to compile, and the
// assertions at the end fail it when the client and the contract part ways.
import { AnimalStoreError, createAnimalStoreClient, type AnimalStoreClient, type ApiKey, type OperationId, type Scope, type TakesIdempotencyKey, operationTable } from '../../client/src/index.js';
import type { operations } from '../../generated/v1.js';
import type { PathOperationId } from '../../generated/operations.js';

export async function wrongCalls(): Promise<void> {
  const store = createAnimalStoreClient({ baseUrl: 'http://localhost:3000/v1', apiKey: 'ask_x' });

  // @ts-expect-error petId is an integer, not a string
  await store.getPet('1');
  // @ts-expect-error name is required
  await store.createPet({ categoryId: 1 });
  // @ts-expect-error id is assigned by the service; NewPet has no id
  await store.createPet({ id: 1, name: 'Rex', categoryId: 1 });
  // @ts-expect-error categoryId is a number
  await store.createPet({ name: 'Rex', categoryId: '1' });
  // @ts-expect-error 'lost' is not a PetStatus
  await store.listPets({ status: 'lost' });
  // @ts-expect-error limit is a number
  await store.listPets({ limit: '20' });
  // @ts-expect-error 'relevance desc' is not a PetOrderBy (relevance goes one way)
  store.listAllPets({ q: 'lab', orderBy: 'relevance desc' });
  // @ts-expect-error q is a string
  store.listAllPets({ q: 1 });
  // @ts-expect-error the iterator makes the cursors itself
  store.listAllPets({ cursor: 'abc.def' });
  // @ts-expect-error listPets takes no Idempotency-Key
  await store.listPets({}, { idempotencyKey: 'k' });
  // @ts-expect-error 'lost' is not an OrderStatus
  await store.listOrders({ status: 'lost' });
  // @ts-expect-error an order id is a number
  await store.cancelOrder('1');
  // @ts-expect-error NewOrder takes petId only
  await store.placeOrder({ petId: 1, quantity: 2 });
  // @ts-expect-error the contract has no /animals
  await store.raw.GET('/animals');
  // @ts-expect-error createPet is POST /pets; the contract has no PUT
  await store.raw.PUT('/pets', { body: { name: 'Rex', categoryId: 1 } });

  const { data, deprecation } = await store.getPet(1);
  const name: string = data.name;
  const sunset: Date | undefined = deprecation.sunset;
  // @ts-expect-error Pet has no `colour`
  void data.colour;
  void name;
  void sunset;

  const created = await store.createPet({ name: 'Rex', categoryId: 1 }, { idempotencyKey: 'mine' });
  const key: string = created.idempotencyKey;
  const replayed: boolean = created.replayed;
  void key;
  void replayed;
  const page = await store.listPets();
  // @ts-expect-error listPets takes no key, so its result has none
  void page.idempotencyKey;
  // @ts-expect-error listPets is not deprecated
  void page.deprecation;
  // @ts-expect-error listPets answers no ETag, so its result has none
  void page.etag;

  // updatePet: a merge patch of name, categoryId, status (null takes it away), with If-Match.
  const updated = await store.updatePet(1, { name: 'Rex', status: null }, { ifMatch: created.etag });
  const etag: string | undefined = updated.etag;
  const renamed: string = updated.data.name;
  const etags: (string | undefined)[] = [created.etag, (await store.getPet(1)).etag];
  void [etag, renamed, etags];
  // @ts-expect-error only placing an order makes a pet pending
  await store.updatePet(1, { status: 'pending' });
  // @ts-expect-error id is not a field of a patch
  await store.updatePet(1, { id: 2 });
  // @ts-expect-error name cannot be taken away (null)
  await store.updatePet(1, { name: null });
  // @ts-expect-error updatePet takes no Idempotency-Key
  await store.updatePet(1, {}, { idempotencyKey: 'k' });
  // @ts-expect-error listPets takes no If-Match
  await store.listPets({}, { ifMatch: '"x"' });
  const removed = await store.deletePet(1, { ifMatch: '"x"' });
  const nothing: undefined = removed.data;
  void nothing;
  await store.listPets({ categoryId: 3 });

  // Categories.
  const named = await store.putCategory(2, 'Dogs');
  const category: { id: number; name: string } = named.data;
  void category;
  // @ts-expect-error a name is a string
  await store.putCategory(2, 7);
  // @ts-expect-error a category id is a number
  await store.getCategory('2');
  // @ts-expect-error the iterator makes the cursors itself
  store.listAllCategories({ cursor: 'abc.def' });
  for await (const each of store.listAllCategories({ limit: 100 })) void each.name;
  const { data: categories } = await store.listCategories({ limit: 10 });
  void categories[0]?.name;
  await store.deleteCategory(2);

  // API keys: scopes are the contract's, a secret only where one is shown.
  const issued = await store.createApiKey({ name: 'storefront', scopes: ['pets:read'], expiresAt: '2030-01-01T00:00:00.000Z' });
  const secret: string = issued.data.secret;
  // Answers list held scopes as strings: a later minor version may add a scope (HeldScope).
  const scopes: string[] = issued.data.scopes;
  const asked: Scope[] = ['pets:read'];
  void [secret, scopes, asked];
  // @ts-expect-error 'pets:delete' is not a Scope
  await store.createApiKey({ name: 'x', scopes: ['pets:delete'] });
  // @ts-expect-error scopes are required
  await store.createApiKey({ name: 'x' });
  // @ts-expect-error createApiKey takes no Idempotency-Key: a repeat would mint a second key
  await store.createApiKey({ name: 'x', scopes: ['pets:read'] }, { idempotencyKey: 'k' });
  // @ts-expect-error createApiKey takes no key, so its result has none
  void issued.idempotencyKey;
  const shown = await store.getApiKey(issued.data.id);
  const lastUsed: string | undefined = shown.data.lastUsedAt;
  // @ts-expect-error getApiKey never answers the secret
  void shown.data.secret;
  // @ts-expect-error a key id is a number
  await store.getApiKey('2');
  for await (const each of store.listAllApiKeys({ limit: 100 })) void each.revokedAt;
  // @ts-expect-error the iterator makes the cursors itself
  store.listAllApiKeys({ cursor: 'abc.def' });
  const rotated = await store.rotateApiKey(issued.data.id, { graceSeconds: 3600 });
  const next: string = rotated.data.secret;
  const graceEnds: string | undefined = rotated.data.previousSecretExpiresAt;
  await store.rotateApiKey(issued.data.id);
  await store.rotateApiKey(issued.data.id, {});
  // @ts-expect-error graceSeconds is a number of seconds
  await store.rotateApiKey(issued.data.id, { graceSeconds: '1h' });
  // @ts-expect-error a rotation has graceSeconds only
  await store.rotateApiKey(issued.data.id, { scopes: ['pets:read'] });
  const revoked = await store.revokeApiKey(issued.data.id);
  const revokedAt: string | undefined = revoked.data.revokedAt;
  void [lastUsed, next, graceEnds, revokedAt];
  const keys: ApiKey[] = (await store.listApiKeys({ limit: 10 })).data;
  void keys;

  // Events and webhooks (1.4): event types are the contract's; secrets only where shown.
  // @ts-expect-error 'pet.sold' is not an event type
  await store.listEvents({ type: ['pet.sold'] });
  // @ts-expect-error an event id is a number
  await store.getEvent('1');
  const feed = store.listAllEvents({ type: ['order.placed'], limit: 50 });
  for await (const event of feed) void event.createdAt;
  const resumeFrom: string | undefined = feed.cursor;
  void resumeFrom;
  // @ts-expect-error eventTypes are required
  await store.createWebhookEndpoint({ url: 'https://warehouse.example/hook' });
  // @ts-expect-error createWebhookEndpoint takes no Idempotency-Key: a repeat would make a second endpoint
  await store.createWebhookEndpoint({ url: 'https://warehouse.example/hook', eventTypes: ['pet.created'] }, { idempotencyKey: 'k' });
  const hook = await store.createWebhookEndpoint({ url: 'https://warehouse.example/hook', eventTypes: ['pet.created'] });
  const hookSecret: string = hook.data.secret;
  void hookSecret;
  // @ts-expect-error getWebhookEndpoint never answers the secret
  void (await store.getWebhookEndpoint(hook.data.id)).data.secret;
  // @ts-expect-error the secret is not a field of a patch
  await store.updateWebhookEndpoint(hook.data.id, { secret: 'whsec_x' });
  await store.updateWebhookEndpoint(hook.data.id, { enabled: true, description: null });
  // @ts-expect-error the iterator makes the cursors itself
  store.listAllWebhookDeliveries(hook.data.id, { cursor: 'abc.def' });
  const rotatedHook: string = (await store.rotateWebhookEndpointSecret(hook.data.id)).data.secret;
  void rotatedHook;

  // A 403 names the scope the key lacks.
  try {
    await store.createPet({ name: 'Rex', categoryId: 1 });
  } catch (error) {
    if (error instanceof AnimalStoreError && error.code === 'insufficient_scope') {
      const missing: string | undefined = error.scope;
      void missing;
    }
  }
}

// The client has a method for every operation of the contract (named by its operationId).
// When the contract gains an operation, this fails to compile until the client has it.
type Missing = Exclude<PathOperationId, keyof AnimalStoreClient>;
export const everyOperationHasAMethod: [Missing] extends [never] ? true : { missing: Missing } = true;

// The run-time table (which operations get an Idempotency-Key) says what the types say.
type KeyTable = { [K in OperationId]: (typeof operationTable)[K]['idempotencyKey'] };
type KeyTypes = { [K in OperationId]: TakesIdempotencyKey<K> };
export const tableAgreesWithTypes: [KeyTable, KeyTypes] extends [KeyTypes, KeyTable] ? true : { table: KeyTable; types: KeyTypes } = true;
export const tableHasEveryOperation: [Exclude<PathOperationId, keyof typeof operationTable>] extends [never] ? true : false = true;
