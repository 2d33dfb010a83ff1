// A client team's TypeScript, compiled by test/e2e/client-package.test.ts against the
// INSTALLED package's declarations (strict, no @types/node, the package's own .d.ts files
// checked too). Each `@ts-expect-error` fails the compile if the call below it compiles.
// Excluded from the repository's tsconfig: '@animal-store/client' resolves only where the
// tarball was installed.
import { AnimalStoreError, createAnimalStoreClient, verifyWebhook, WebhookVerificationError, type Event, type EventFeed, type WebhookEndpointWithSecret, type WebhookEvent, type ApiKey, type ApiKeyWithSecret, type Category, type NewApiKey, type NewPet, type Pet, type RetryEvent, type Scope } from '@animal-store/client';

const store = createAnimalStoreClient({
  baseUrl: 'http://127.0.0.1:3000/v1',
  apiKey: 'ask_example',
  retry: { maxAttempts: 5, maxDelayMs: 10_000, onRetry: (event: RetryEvent) => console.warn(event.status, event.delayMs) },
});

export async function use(): Promise<Pet[]> {
  const { data: pets } = await store.listPets({ status: 'available', limit: 50 });
  // @ts-expect-error 'lost' is not a PetStatus
  await store.listPets({ status: 'lost' });

  const pet: NewPet = { name: 'Rex', categoryId: 2 };
  const created = await store.createPet(pet, { idempotencyKey: 'order-42' });
  const key: string = created.idempotencyKey;
  const replayed: boolean = created.replayed;
  const id: number = created.data.id;
  // @ts-expect-error categoryId is a number
  await store.createPet({ name: 'Rex', categoryId: '2' });

  const { deprecation } = await store.getPet(id);
  const sunset: Date | undefined = deprecation.sunset;

  try {
    await store.listOrders();
  } catch (error) {
    if (error instanceof AnimalStoreError) {
      const code: string = error.code;
      const status: number = error.status;
      const requestId: string | undefined = error.requestId;
      void [code, status, requestId];
    }
  }

  // 1.3: a merge patch guarded by the ETag of the last answer; categories.
  const updated = await store.updatePet(id, { status: null }, { ifMatch: created.etag });
  const etag: string | undefined = updated.etag;
  // @ts-expect-error only placing an order makes a pet pending
  await store.updatePet(id, { status: 'pending' });
  await store.deletePet(id, { ifMatch: etag });
  const named = await store.putCategory(2, 'Dogs');
  const category: Category = named.data;
  for await (const each of store.listAllCategories()) void each.name;

  // 1.3: least-privilege keys, rotation without downtime, the scope a 403 names.
  const scopes: Scope[] = ['pets:read'];
  const wanted: NewApiKey = { name: 'storefront', scopes, expiresAt: '2030-01-01T00:00:00.000Z' };
  const issued: ApiKeyWithSecret = (await store.createApiKey(wanted)).data;
  const secret: string = issued.secret;
  // @ts-expect-error 'pets:delete' is not a Scope
  await store.createApiKey({ name: 'x', scopes: ['pets:delete'] });
  // @ts-expect-error createApiKey takes no Idempotency-Key
  await store.createApiKey(wanted, { idempotencyKey: 'k' });
  const rotated = await store.rotateApiKey(issued.id, { graceSeconds: 3600 });
  const graceEnds: string | undefined = rotated.data.previousSecretExpiresAt;
  await store.rotateApiKey(issued.id);
  const shown: ApiKey = (await store.getApiKey(issued.id)).data;
  // @ts-expect-error the secret is shown only by createApiKey and rotateApiKey
  void shown.secret;
  for await (const key of store.listAllApiKeys()) void key.revokedAt;
  await store.revokeApiKey(issued.id);
  try {
    await createAnimalStoreClient({ baseUrl: 'http://127.0.0.1:3000/v1', apiKey: secret }).createPet(pet);
  } catch (error) {
    if (error instanceof AnimalStoreError && error.code === 'insufficient_scope') {
      const missing: string | undefined = error.scope;
      void missing;
    }
  }
  void [graceEnds, (await store.listApiKeys({ limit: 10 })).data];

  // 1.4: the events feed, webhook endpoints, and verifying a delivery.
  const feed: EventFeed = store.listAllEvents({ type: ['order.completed'], limit: 100 });
  for await (const event of feed) {
    const seen: Event = event;
    void seen;
  }
  const resumeAt: string | undefined = feed.cursor;
  for await (const event of store.listAllEvents({ cursor: resumeAt })) void event.id;
  // @ts-expect-error 'order.shipped' is not an event type
  store.listAllEvents({ type: ['order.shipped'] });
  const endpoint: WebhookEndpointWithSecret = (await store.createWebhookEndpoint({ url: 'https://warehouse.example/hooks', eventTypes: ['order.completed'] })).data;
  await store.updateWebhookEndpoint(endpoint.id, { enabled: false, description: null });
  const rotatedHook = await store.rotateWebhookEndpointSecret(endpoint.id);
  for await (const attempt of store.listAllWebhookDeliveries(endpoint.id)) void [attempt.statusCode, attempt.error];
  try {
    const delivered: WebhookEvent = verifyWebhook(rotatedHook.data.secret, new Headers(), '{}');
    if (delivered.type === 'order.completed') {
      const petId: number = delivered.data.petId;
      void petId;
    }
  } catch (error) {
    if (error instanceof WebhookVerificationError) void error.reason;
  }
  await store.deleteWebhookEndpoint(endpoint.id);

  const all: Pet[] = [];
  for await (const each of store.listAllPets({ status: 'available' })) all.push(each);
  void [key, replayed, sunset, category];
  return [...pets, ...all];
}
