import type { OrdersRepository } from './orders.js';
import type { PetChange } from '../catalogue/pets.js';
import type { Queryable } from '../db/query.js';

/** The 412 of updatePet and deletePet. */
export const changedSince = (id: number): string => `Pet ${id} has changed since the ETag that If-Match names: read it again, then retry with its new ETag`;

/**
 * A change refused because the pet is pending: the id of the placed order that holds it when
 * the caller placed it, `another key's` when another key did (whose id the caller may not
 * learn), `none` when none was found three times (the pet kept changing).
 */
export type Held = { outcome: 'held'; holder: number | "another key's" | 'none' };

/**
 * updatePet and deletePet: runs `change` and, when it was refused because a placed order may
 * hold the pet, names the placed order that holds it, read in a statement of its own (a fresh
 * snapshot). None may hold it: that order closed in between, or the pet, pending without an
 * order, changed while the change waited for its row. The change is then tried again (at most
 * twice more), so that the answer is the change's own, or a 409 that names the order holding
 * the pet.
 */
export async function unlessHeld<Done extends { outcome: 'changed' | 'removed' }>(
  petId: number,
  caller: number,
  change: () => Promise<PetChange<Done>>,
  orders: OrdersRepository,
  tx?: Queryable,
): Promise<Done | { outcome: 'not-found' } | { outcome: 'precondition-failed' } | Held> {
  for (let attempt = 1; ; attempt++) {
    const result: PetChange<Done> = await change();
    if (result.outcome !== 'reserved') return result;
    const holder = await orders.holderOf(petId, tx);
    // Orders are their key's alone (getOrder is 404 to any other): another key's is named as "an order".
    if (holder !== undefined) return { outcome: 'held', holder: holder.apiKeyId === caller ? holder.id : "another key's" };
    if (attempt === 3) return { outcome: 'held', holder: 'none' };
  }
}
