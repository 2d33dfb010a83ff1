// A client team's TypeScript, compiled by test/e2e/client-package.test.ts against the
// INSTALLED package's declarations (strict, no @types/node, the package's own .d.ts files
// checked too). Each `@ts-expect-error` fails the compile if the call below it compiles.
// Excluded from the repository's tsconfig: '@animal-store/client' resolves only where the
// tarball was installed.
import { AnimalStoreError, createAnimalStoreClient, type NewPet, type Pet, type RetryEvent } from '@animal-store/client';

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

  const all: Pet[] = [];
  for await (const each of store.listAllPets({ status: 'available' })) all.push(each);
  void [key, replayed, sunset];
  return [...pets, ...all];
}
