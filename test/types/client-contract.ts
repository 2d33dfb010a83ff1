// Type-level test of the typed client, checked by `npm run typecheck`: each
// `@ts-expect-error` fails the build if the call below it starts to compile, and the
// assertions at the end fail it when the client and the contract part ways.
import { createAnimalStoreClient, type AnimalStoreClient, type OperationId, type TakesIdempotencyKey, operationTable } from '../../client/src/index.js';
import type { operations } from '../../generated/v1.js';

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
}

// The client has a method for every operation of the contract (named by its operationId).
// When the contract gains an operation, this fails to compile until the client has it.
type Missing = Exclude<keyof operations, keyof AnimalStoreClient>;
export const everyOperationHasAMethod: [Missing] extends [never] ? true : { missing: Missing } = true;

// The run-time table (which operations get an Idempotency-Key) says what the types say.
type KeyTable = { [K in OperationId]: (typeof operationTable)[K]['idempotencyKey'] };
type KeyTypes = { [K in OperationId]: TakesIdempotencyKey<K> };
export const tableAgreesWithTypes: [KeyTable, KeyTypes] extends [KeyTypes, KeyTable] ? true : { table: KeyTable; types: KeyTypes } = true;
export const tableHasEveryOperation: [Exclude<keyof operations, keyof typeof operationTable>] extends [never] ? true : false = true;
