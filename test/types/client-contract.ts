// Type-level test of the typed client, checked by `npm run typecheck`: each
// `@ts-expect-error` fails the build if the call below it starts to compile.
import { createAnimalStoreClient } from '../../client/index.js';

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
  // @ts-expect-error the contract has no /animals
  await store.raw.GET('/animals');
  // @ts-expect-error createPet is POST /pets; the contract has no PUT
  await store.raw.PUT('/pets', { body: { name: 'Rex', categoryId: 1 } });

  const { data, error } = await store.getPet(1);
  if (data) {
    const name: string = data.name;
    // @ts-expect-error Pet has no `colour`
    void data.colour;
    void name;
  }
  if (error) {
    const code: string = error.code;
    void code;
  }
}
