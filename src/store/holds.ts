import type { OrdersRepository } from './orders.js';
import type { PetChange, PetsRepository } from '../catalogue/pets.js';
import type { Queryable } from '../db/query.js';

/**
 * The 412 of updatePet and deletePet, given the strong tags If-Match named (none: it named
 * weak ones only, which never match a write, whatever the pet's state).
 */
export const changedSince = (id: number, strongTags: readonly string[]): string =>
  strongTags.length === 0
    ? `If-Match names only weak ETags (W/"..."), which never match a change of pet ${id}: send its ETag as getPet gives it, without W/`
    : `Pet ${id} has changed since the ETag that If-Match names: read it again, then retry with its new ETag`;

/**
 * A change refused because a placed order holds the pet: the id of that order when the
 * caller placed it, `another key's` when another key did (whose id the caller may not learn).
 */
export type Held = { outcome: 'held'; holder: number | "another key's" };

/**
 * updatePet and deletePet: runs `change` (in the caller's transaction `tx`, if any). When it
 * was refused because a placed order may hold the pet (src/catalogue/pets.ts: the pet is
 * pending, and an order named it in the statement's snapshot or the pet changed while the
 * statement waited for its row), runs it once more in a transaction that has locked the
 * pet's row first. That statement's snapshot is taken under the lock, which every placement
 * and close of an order for the pet needs too: it sees the pet and its orders as they stand,
 * so the change is made, or refused because an order holds the pet, which is then named.
 */
export async function unlessHeld<Done extends { outcome: 'changed' | 'removed' }>(
  petId: number,
  caller: number,
  change: (tx: Queryable | undefined) => Promise<PetChange<Done>>,
  { pets, orders }: { pets: PetsRepository; orders: OrdersRepository },
  tx?: Queryable,
): Promise<Done | { outcome: 'not-found' } | { outcome: 'precondition-failed' } | Held> {
  const first = await change(tx);
  if (first.outcome !== 'reserved') return first;
  return pets.whileLocked(
    petId,
    async (locked) => {
      const result = await change(locked);
      if (result.outcome !== 'reserved') return result;
      const holder = await orders.holderOf(petId, locked);
      if (holder === undefined) throw new Error(`pet ${petId} was refused as held under its row lock, and no placed order names it`);
      // Orders are their key's alone (getOrder is 404 to any other): another key's is named as "an order".
      return { outcome: 'held' as const, holder: holder.apiKeyId === caller ? holder.id : ("another key's" as const) };
    },
    tx,
  );
}
