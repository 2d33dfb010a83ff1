// The orders table. Each transition is one statement, so an order and its pet change
// together or not at all, and no statement reads a status and then writes on what it read:
// the conditional UPDATE both decides and writes, under the row's lock (two placements of
// one pet: the second re-checks the pet after the first commits and finds it `pending`).
// The pet's side of each transition is the pets module's SQL (PET_STATUS_CHANGES).
//
// Orders always read and write the primary: a page's frontier asks which transactions are
// writing orders, which only the primary knows (docs/decisions/0001-append-order.md).
import type { components } from '../../generated/v1.js';
import { appendOrdered, finalPage } from '../db/append-order.js';
import { coalesce } from '../db/coalesce.js';
import { PET_STATUS_CHANGES, type PetStatus } from '../catalogue/pets.js';
import { equalPrefixPage } from '../db/keyset.js';
import { columns, query, statement, type Queryable } from '../db/query.js';
import type { Transaction } from '../db/transaction.js';

/** Orders are paged per API key (migration 1763700000008). */
const ORDERS = appendOrdered('orders', 'api_key_id');

export type Order = components['schemas']['Order'];
export type OrderStatus = components['schemas']['OrderStatus'];

const ORDER_COLUMNS = columns(['id', 'pet_id', 'status', 'placed_at', 'expires_at', 'closed_at']);
const { list: O } = ORDER_COLUMNS;
const qualified = ORDER_COLUMNS.qualified;
interface OrderRow {
  id: number;
  pet_id: number;
  status: OrderStatus;
  placed_at: Date;
  expires_at: Date;
  closed_at: Date | null;
}
/** An order's columns, all null when the statement made no order. */
type MaybeOrderRow = OrderRow | { [C in keyof OrderRow]: null };
type PlaceRow = MaybeOrderRow & { pet_found: boolean; pet_status: PetStatus | null };
type ClosingRow = MaybeOrderRow & { was: OrderStatus | null; found: boolean };
type ListRow = OrderRow & { final: boolean };

function toOrder(row: OrderRow): Order {
  const order: Order = { id: row.id, petId: row.pet_id, status: row.status, placedAt: row.placed_at.toISOString(), expiresAt: row.expires_at.toISOString() };
  if (row.closed_at !== null) order.closedAt = row.closed_at.toISOString();
  return order;
}
const isOrder = (row: MaybeOrderRow): row is OrderRow => row.id !== null;

/**
 * A page of one key's orders in id order ($1 the key, $2 after, $3 size), for each
 * combination of filters: `equal`, the columns of the index that serves it before id, with
 * their values (src/db/keyset.ts, `equalPrefixPage`: a generic plan uses that index).
 */
const listStatement = (name: string, equal: readonly (readonly [string, string])[], filter = '') => {
  const { where, order } = equalPrefixPage(equal, '$2');
  return statement<ListRow>(name, `SELECT ${O}, ${ORDERS.isFinal('$1')} AS final FROM orders WHERE ${where} ${filter} ORDER BY ${order} LIMIT $3::int + 1`);
};

// The pet's status read in the statement's snapshot, before its update: why nothing was
// placed. A removed pet is not found.
const PET_BEFORE = (id: string) => `SELECT count(*) > 0 AS pet_found, max(status) AS pet_status FROM pets WHERE id = ${id} AND deleted_at IS NULL`;

/**
 * Closes the placed orders of `input` (id, api_key_id, to_status, i), or expires those past
 * their expiresAt; their pets follow (sold, or available again). The orders are locked
 * first, in id order, so a concurrent close (the other action, the expiry job) is seen
 * committed, never missed, and two batches never wait in a circle. `found` is false for an
 * order that is not this key's. An order named twice in one batch is never sent (`distinct`).
 */
const closing = (input: string) => `WITH input AS MATERIALIZED (${input}),
    target AS MATERIALIZED (
      SELECT orders.id, orders.status, orders.expires_at <= statement_timestamp() AS lapsed, input.to_status
      FROM orders JOIN input ON orders.id = input.id AND orders.api_key_id = input.api_key_id
      ORDER BY orders.id FOR UPDATE OF orders
    ), closed AS (
      UPDATE orders SET status = CASE WHEN target.lapsed THEN 'expired' ELSE target.to_status END, closed_at = statement_timestamp()
      FROM target WHERE orders.id = target.id AND target.status = 'placed'
      RETURNING ${qualified('orders')}
    ), pet AS (${PET_STATUS_CHANGES.release('ARRAY(SELECT pet_id FROM closed)', "ARRAY(SELECT pet_id FROM closed WHERE status = 'completed')")})
    SELECT ${qualified('closed')}, target.status AS was, target.id IS NOT NULL AS found
    FROM input LEFT JOIN target ON target.id = input.id LEFT JOIN closed ON closed.id = input.id
    ORDER BY input.i`;

export const ORDER_STATEMENTS = {
  // The pet goes from available to pending and the order is stored, in one statement.
  place: statement<PlaceRow>(
    'orders-place',
    `WITH held AS (${PET_STATUS_CHANGES.hold('ARRAY[$2::bigint]')}),
    placed AS (
      INSERT INTO orders (api_key_id, pet_id, status, expires_at)
      SELECT $1, held.id, 'placed', now() + $3 * interval '1 second' FROM held
      RETURNING ${O}
    )
    SELECT ${qualified('placed')}, pet.pet_found, pet.pet_status FROM (${PET_BEFORE('$2')}) AS pet LEFT JOIN placed ON true`,
  ),
  // Several placements in one statement and one commit (src/db/coalesce.ts), answered in
  // the arrays' order (`i`). The pets are locked in id order (PET_STATUS_CHANGES.hold), so
  // this never waits in a circle with another statement that locks pets. A pet named
  // twice in one batch is never sent here (`distinct`).
  placeMany: statement<PlaceRow>(
    'orders-place-many',
    `WITH input AS MATERIALIZED (
      SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::float8[]) WITH ORDINALITY AS t(api_key_id, pet_id, hold, i)
    ), held AS (${PET_STATUS_CHANGES.hold('$2::bigint[]')}),
    placed AS (
      INSERT INTO orders (api_key_id, pet_id, status, expires_at)
      SELECT input.api_key_id, held.id, 'placed', now() + input.hold * interval '1 second' FROM input JOIN held ON held.id = input.pet_id ORDER BY input.i
      RETURNING ${O}
    )
    SELECT ${qualified('placed')}, pet.pet_found, pet.pet_status
    FROM input LEFT JOIN placed ON placed.pet_id = input.pet_id CROSS JOIN LATERAL (${PET_BEFORE('input.pet_id')}) AS pet
    ORDER BY input.i`,
  ),
  // The pet as it is now, in a snapshot of its own: why a placement that saw it available
  // before its update found it changed (see toPlacement).
  petNow: statement<{ pet_found: boolean; pet_status: PetStatus | null }>('orders-pet-now', PET_BEFORE('$1::bigint')),
  // The placed order that holds a pet, if any (at most one: orders_one_placed_per_pet).
  holder: statement<{ id: number; api_key_id: number }>('orders-holder', "SELECT id, api_key_id FROM orders WHERE pet_id = $1 AND status = 'placed'"),
  get: statement<OrderRow>('orders-get', `SELECT ${O} FROM orders WHERE id = $1 AND api_key_id = $2`),
  // Closes a placed order ($1 id, $2 its key, $3 to completed or cancelled), or several
  // (the same, as arrays), answered in their order; see `closing`.
  close: statement<ClosingRow>('orders-close', closing('SELECT $1::bigint AS id, $2::bigint AS api_key_id, $3::text AS to_status, 1 AS i')),
  closeMany: statement<ClosingRow>('orders-close-many', closing('SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[]) WITH ORDINALITY AS t(id, api_key_id, to_status, i)')),
  // The expiry job: placed orders past their expiresAt, a batch at a time. SKIP LOCKED, on
  // the order and its pet: an order being closed by a request is that request's; several
  // instances share the work, and an order is expired once (the status is checked again
  // under the lock); a pet row someone holds (an open psql transaction) holds up its own
  // order's expiry only.
  expire: statement<{ expired: number }>(
    'orders-expire',
    `WITH due AS (
      SELECT orders.id FROM orders JOIN pets ON pets.id = orders.pet_id
      WHERE orders.status = 'placed' AND orders.expires_at <= statement_timestamp()
      ORDER BY orders.expires_at LIMIT $1 FOR UPDATE OF orders, pets SKIP LOCKED
    ), expired AS (
      UPDATE orders SET status = 'expired', closed_at = statement_timestamp() FROM due WHERE orders.id = due.id RETURNING orders.pet_id
    ), freed AS (${PET_STATUS_CHANGES.release('ARRAY(SELECT pet_id FROM expired)', "'{}'::bigint[]")})
    SELECT count(*)::int AS expired FROM expired`,
  ),
  list: listStatement('orders-list', [['api_key_id', '$1']]),
  listByStatus: listStatement('orders-list-by-status', [['api_key_id', '$1'], ['status', '$4']]),
  listByPet: listStatement('orders-list-by-pet', [['api_key_id', '$1'], ['pet_id', '$4']]),
  // A pet has few orders: its index, and the status a filter on them.
  listByStatusAndPet: listStatement('orders-list-by-status-and-pet', [['api_key_id', '$1'], ['pet_id', '$5']], 'AND status = $4'),
};

/**
 * What a placement's row says (`place` and `placeMany` return the same columns), or
 * `changed`: the pet was available in the statement's snapshot and yet not held, so a write
 * that committed meanwhile (another placement, updatePet, deletePet) changed it; what it is
 * now is read again (`reread`).
 */
function toPlacement(row: PlaceRow | undefined): Placement | { outcome: 'changed' } {
  if (row && isOrder(row)) return { outcome: 'placed', order: toOrder(row) };
  if (!row?.pet_found) return { outcome: 'pet-not-found' };
  if (row.pet_status === 'available') return { outcome: 'changed' };
  return { outcome: 'pet-not-available', petStatus: row.pet_status };
}

/** A placement's answer, the pet read again when it changed under the statement. */
async function reread(on: Queryable, petId: number, placement: Placement | { outcome: 'changed' }): Promise<Placement> {
  if (placement.outcome !== 'changed') return placement;
  const [now] = await query(on, ORDER_STATEMENTS.petNow, [petId]);
  if (!now?.pet_found) return { outcome: 'pet-not-found' };
  // Available again: it was held and released since; when this placement was refused it was pending.
  return { outcome: 'pet-not-available', petStatus: now.pet_status === 'available' ? 'pending' : now.pet_status };
}

/** What a close's row says: not found, the order is not this key's (or does not exist). */
function toClosing(row: ClosingRow | undefined, to: 'completed' | 'cancelled'): Closing {
  if (!row?.found) return { outcome: 'not-found' };
  if (!isOrder(row)) return { outcome: 'not-placed', status: row.was as OrderStatus };
  const order = toOrder(row);
  return order.status === to ? { outcome: 'closed', order } : { outcome: 'not-placed', status: order.status };
}

/** Throws if two inputs share a key: a batch must not name one row twice (the caller then runs each alone). */
function distinct<T>(inputs: readonly T[], key: (input: T) => number, what: string): void {
  if (new Set(inputs.map(key)).size !== inputs.length) throw new Error(`one ${what} twice in a batch`);
}

export type Placement =
  | { outcome: 'placed'; order: Order }
  | { outcome: 'pet-not-found' }
  | { outcome: 'pet-not-available'; petStatus: PetStatus | null };

export type Closing = { outcome: 'closed'; order: Order } | { outcome: 'not-found' } | { outcome: 'not-placed'; status: OrderStatus };

export interface OrderPage {
  apiKeyId: number;
  after: number;
  /** The page's size: at most this many orders. */
  limit: number;
  status: OrderStatus | undefined;
  petId: number | undefined;
}

interface PlaceInput {
  apiKeyId: number;
  petId: number;
  holdSeconds: number;
}
interface CloseInput {
  apiKeyId: number;
  id: number;
  to: 'completed' | 'cancelled';
}

export function createOrdersRepository(primary: Queryable) {
  const placeValues = (inputs: readonly PlaceInput[]) => [inputs.map((p) => p.apiKeyId), inputs.map((p) => p.petId), inputs.map((p) => p.holdSeconds)];
  const closeValues = (inputs: readonly CloseInput[]) => [inputs.map((c) => c.id), inputs.map((c) => c.apiKeyId), inputs.map((c) => c.to)];
  const closeOne = async (on: Queryable, { apiKeyId, id, to }: CloseInput): Promise<Closing> => toClosing((await query(on, ORDER_STATEMENTS.close, [id, apiKeyId, to]))[0], to);
  // Placements and closes that arrive in the same turn share one statement and one commit
  // (docs/decisions/0002-request-coalescing.md). A batch waiting on a row someone holds (an
  // open transaction on a pet) holds up only the requests that arrived with it.
  const placeMany = coalesce<PlaceInput, Placement | { outcome: 'changed' }>({
    max: 100,
    one: async (input) => toPlacement((await query(primary, ORDER_STATEMENTS.place, [input.apiKeyId, input.petId, input.holdSeconds]))[0]),
    many: async (inputs) => {
      distinct(inputs, (p) => p.petId, 'pet');
      const rows = await query(primary, ORDER_STATEMENTS.placeMany, placeValues(inputs));
      return inputs.map((_, i) => toPlacement(rows[i]));
    },
  });
  const closeMany = coalesce<CloseInput, Closing>({
    max: 100,
    one: (input) => closeOne(primary, input),
    many: async (inputs) => {
      distinct(inputs, (c) => c.id, 'order');
      const rows = await query(primary, ORDER_STATEMENTS.closeMany, closeValues(inputs));
      return inputs.map((c, i) => toClosing(rows[i], c.to));
    },
  });
  return {
    /** Places an order for the pet if it is available: in `tx` when given, else coalesced. */
    async place(input: PlaceInput, tx?: Transaction): Promise<Placement> {
      if (!tx) return reread(primary, input.petId, await placeMany(input));
      return reread(tx, input.petId, toPlacement((await query(tx, ORDER_STATEMENTS.place, [input.apiKeyId, input.petId, input.holdSeconds]))[0]));
    },

    /** The id of the placed order that holds this pet, if one does; in `tx` when given. */
    async holderOf(petId: number, tx?: Queryable): Promise<{ id: number; apiKeyId: number } | undefined> {
      const [row] = await query(tx ?? primary, ORDER_STATEMENTS.holder, [petId]);
      return row && { id: row.id, apiKeyId: row.api_key_id };
    },

    /** The order, if this API key placed it. */
    async get(apiKeyId: number, id: number): Promise<Order | undefined> {
      const [row] = await query(primary, ORDER_STATEMENTS.get, [id, apiKeyId]);
      return row ? toOrder(row) : undefined;
    },

    /**
     * Completes or cancels a placed order of this API key: in `tx` when given, else
     * coalesced. A placed order past its expiresAt is expired instead, and answers `not-placed`.
     */
    async close(apiKeyId: number, id: number, to: 'completed' | 'cancelled', tx?: Transaction): Promise<Closing> {
      return tx ? closeOne(tx, { apiKeyId, id, to }) : closeMany({ apiKeyId, id, to });
    },

    /**
     * A page of this API key's orders, in id order, up to where every order is final
     * (src/db/append-order.ts), and the id the next page starts after (none: the last page).
     */
    async list({ apiKeyId, after, limit, status, petId }: OrderPage): Promise<{ orders: Order[]; next: number | undefined }> {
      const byPet = petId !== undefined;
      const list = status && byPet ? ORDER_STATEMENTS.listByStatusAndPet : status ? ORDER_STATEMENTS.listByStatus : byPet ? ORDER_STATEMENTS.listByPet : ORDER_STATEMENTS.list;
      const rows = await query(primary, list, [apiKeyId, after, limit, ...(status ? [status] : []), ...(byPet ? [petId] : [])]);
      // The page stops before its first order that is not final (src/db/append-order.ts).
      const page = finalPage(rows, limit, after);
      return { orders: page.rows.map(toOrder), next: page.next };
    },

    /** Expires placed orders past their expiresAt, a batch at a time until a batch is not full; returns how many. */
    async expireDue(batch = 1000): Promise<number> {
      let total = 0;
      for (;;) {
        const expired = (await query(primary, ORDER_STATEMENTS.expire, [batch]))[0]?.expired ?? 0;
        total += expired;
        if (expired < batch) return total;
      }
    },
  };
}

export type OrdersRepository = ReturnType<typeof createOrdersRepository>;
