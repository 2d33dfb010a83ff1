// The orders table, and the pet statuses that orders change with them. Each transition is
// one statement, so the order and its pet change together or not at all, and no statement
// reads a status and then writes on what it read: the conditional UPDATE both decides and
// writes, under the row's lock (two placements of one pet: the second re-checks the pet
// after the first commits and finds it `pending`).
//
// Orders always read and write the primary: listOrders' frontier (orders_frontier in
// migrations/1763700000006_create-orders.sql) asks which transactions are still running,
// which only the primary knows.
import pg from 'pg';
import type { components } from '../../generated/v1.js';
import { coalesce } from './coalesce.js';
import type { PetStatus } from './pets.js';
import { exactInt8 } from './pets.js';
import { columns } from './table.js';
import type { Queryable, Transaction } from './transaction.js';

export type Order = components['schemas']['Order'];
export type OrderStatus = components['schemas']['OrderStatus'];
export type Inventory = components['schemas']['Inventory'];

export const ORDER_COLUMNS = columns(['id', 'pet_id', 'status', 'placed_at', 'expires_at', 'closed_at']);
type OrderRow = [id: number, petId: number, status: OrderStatus, placedAt: Date, expiresAt: Date, closedAt: Date | null];
const { list: O } = ORDER_COLUMNS;

const orderQuery = (name: string, text: string, values: unknown[]): pg.QueryArrayConfig => ({ name, text, values, rowMode: 'array', types: exactInt8 });

type PlaceRow = [...OrderRow, found: boolean, petStatus: PetStatus | null];
type CloseRow = [...OrderRow, status: OrderStatus];

function toOrder(row: OrderRow): Order {
  const order: Order = { id: row[0], petId: row[1], status: row[2], placedAt: row[3].toISOString(), expiresAt: row[4].toISOString() };
  if (row[5] !== null) order.closedAt = row[5].toISOString();
  return order;
}

/** The list statement for each combination of filters: each has a plan that uses its index. */
const listStatement = (filters: string, name: string) =>
  [
    name,
    `WITH page AS MATERIALIZED (
       SELECT ${O}, visible_after FROM orders WHERE api_key_id = $1 AND id > $2 ${filters} ORDER BY id LIMIT $3
     ), snap AS MATERIALIZED (SELECT pg_current_snapshot() AS s)
     SELECT page.*, (
       SELECT CASE WHEN upto IS NULL OR upto < pg_snapshot_xmin(s) THEN NULL ELSE orders_frontier($1, s, upto) END
       FROM (SELECT max(visible_after) AS upto FROM page) AS m CROSS JOIN snap
     )::text AS frontier
     FROM page ORDER BY id`,
  ] as const;

export const ORDER_STATEMENTS = {
  // The pet goes from available to pending and the order is stored, in one statement; when
  // no row was updated, `pet` (read in the statement's snapshot, before it) says why.
  place: `WITH held AS (
      UPDATE pets SET status = 'pending' WHERE id = $2 AND status = 'available' RETURNING id
    ), placed AS (
      INSERT INTO orders (api_key_id, pet_id, status, expires_at)
      SELECT $1, held.id, 'placed', now() + $3 * interval '1 second' FROM held
      RETURNING ${O}
    )
    SELECT ${ORDER_COLUMNS.qualified('placed')}, pet.found, pet.status
    FROM (SELECT count(*) > 0 AS found, max(status) AS status FROM pets WHERE id = $2) AS pet
    LEFT JOIN placed ON true`,
  // Several placements in one statement and one commit (src/db/coalesce.ts): `place` for
  // each row of the arrays, answered in their order (`i`). The pets are taken by key, in id
  // order (the primary key's scan sorts the array), so two batches never wait on each other
  // in a circle. A pet named twice in one batch is never sent here (see `placeMany`).
  placeMany: `WITH input AS MATERIALIZED (
      SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::float8[]) WITH ORDINALITY AS t(api_key_id, pet_id, hold, i)
    ), held AS (
      UPDATE pets SET status = 'pending' WHERE id = ANY ($2::bigint[]) AND status = 'available' RETURNING id
    ), placed AS (
      INSERT INTO orders (api_key_id, pet_id, status, expires_at)
      SELECT input.api_key_id, held.id, 'placed', now() + input.hold * interval '1 second' FROM input JOIN held ON held.id = input.pet_id ORDER BY input.i
      RETURNING ${O}
    )
    SELECT ${ORDER_COLUMNS.qualified('placed')}, pet.found, pet.status
    FROM input LEFT JOIN placed ON placed.pet_id = input.pet_id
    CROSS JOIN LATERAL (SELECT count(*) > 0 AS found, max(status) AS status FROM pets WHERE id = input.pet_id) AS pet
    ORDER BY input.i`,
  get: `SELECT ${O} FROM orders WHERE id = $1 AND api_key_id = $2`,
  // Closes a placed order: to $3 (completed or cancelled), or to expired when it is past
  // its expiresAt; its pet follows (sold, or available again). The row is locked first, so
  // a concurrent close (the other action, the expiry job) is seen committed, never missed.
  // Both updates name their row by primary key (`orders.id = $1`, `pets.id = (SELECT ...)`):
  // written as joins (`FROM closed WHERE pets.id = closed.pet_id AND pets.status =
  // 'pending'`), a plan made while few pets were pending walked the (status, id) index over
  // every pending pet instead, ~2 ms of PostgreSQL's CPU per close with 3,000 pending.
  close: `WITH target AS (
      SELECT id, pet_id, status, expires_at <= statement_timestamp() AS lapsed FROM orders WHERE id = $1 AND api_key_id = $2 FOR UPDATE
    ), closed AS (
      UPDATE orders SET status = CASE WHEN target.lapsed THEN 'expired' ELSE $3 END, closed_at = statement_timestamp()
      FROM target WHERE orders.id = $1 AND target.status = 'placed'
      RETURNING ${ORDER_COLUMNS.qualified('orders')}
    ), pet AS (
      UPDATE pets SET status = CASE WHEN (SELECT status FROM closed) = 'completed' THEN 'sold' ELSE 'available' END
      WHERE pets.id = (SELECT pet_id FROM closed) AND pets.status = 'pending'
    )
    SELECT ${ORDER_COLUMNS.qualified('closed')}, target.status FROM target LEFT JOIN closed ON true`,
  // Several closes in one statement and one commit (src/db/coalesce.ts): `close` for each
  // row of the arrays, answered in their order. Every order is locked before any pet, each
  // kind in id order (the sort below the lock; the pets' key scan), so two batches never
  // wait on each other in a circle. Pets are named by key as in `expire`, for its reason.
  // An order named twice in one batch is never sent here (see `closeMany`).
  closeMany: `WITH input AS MATERIALIZED (
      SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[]) WITH ORDINALITY AS t(id, api_key_id, to_status, i)
    ), target AS MATERIALIZED (
      SELECT orders.id, orders.pet_id, orders.status, orders.expires_at <= statement_timestamp() AS lapsed, input.to_status
      FROM orders JOIN input ON orders.id = input.id AND orders.api_key_id = input.api_key_id
      ORDER BY orders.id FOR UPDATE OF orders
    ), closed AS (
      UPDATE orders SET status = CASE WHEN target.lapsed THEN 'expired' ELSE target.to_status END, closed_at = statement_timestamp()
      FROM target WHERE orders.id = target.id AND target.status = 'placed'
      RETURNING ${ORDER_COLUMNS.qualified('orders')}
    ), pet AS (
      UPDATE pets SET status = CASE WHEN pets.id = ANY (ARRAY(SELECT pet_id FROM closed WHERE status = 'completed')) THEN 'sold' ELSE 'available' END
      WHERE pets.id = ANY (ARRAY(SELECT pet_id FROM closed)) AND coalesce(pets.status, '') = 'pending'
    )
    SELECT ${ORDER_COLUMNS.qualified('closed')}, target.status, target.id IS NOT NULL AS found
    FROM input LEFT JOIN target ON target.id = input.id LEFT JOIN closed ON closed.id = input.id
    ORDER BY input.i`,
  // The expiry job: placed orders past their expiresAt, a batch at a time. SKIP LOCKED, on
  // the order and its pet: an order being closed by a request is that request's; several
  // instances share the work, and an order is expired once (the status is checked again
  // under the lock); a pet row someone holds (an open psql transaction) holds up its own
  // order's expiry only, not the batch's. The pets are found by key (`id = ANY (ARRAY(...))`)
  // for the reason `close` gives: a plan made while few pets were pending walked every pending
  // pet, each batch. Their status is compared through coalesce, which no index serves: with
  // a plain `status = 'pending'` beside the array, the planner still chose that walk.
  expire: `WITH due AS (
      SELECT orders.id FROM orders JOIN pets ON pets.id = orders.pet_id
      WHERE orders.status = 'placed' AND orders.expires_at <= statement_timestamp()
      ORDER BY orders.expires_at LIMIT $1 FOR UPDATE OF orders, pets SKIP LOCKED
    ), expired AS (
      UPDATE orders SET status = 'expired', closed_at = statement_timestamp() FROM due WHERE orders.id = due.id RETURNING orders.pet_id
    ), freed AS (
      UPDATE pets SET status = 'available' WHERE pets.id = ANY (ARRAY(SELECT pet_id FROM expired)) AND coalesce(pets.status, '') = 'pending'
    )
    SELECT count(*)::int FROM expired`,
  inventory: `SELECT status, sum(n)::bigint FROM (
      SELECT status, n FROM pet_status_totals UNION ALL SELECT status, n FROM pet_status_changes
    ) AS counted GROUP BY status`,
  // Folds the status changes recorded since into the totals (a job): the inventory then sums
  // a few rows, however many pets there are.
  foldInventory: `WITH folded AS (
      DELETE FROM pet_status_changes WHERE id IN (SELECT id FROM pet_status_changes ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING status, n
    )
    UPDATE pet_status_totals SET n = pet_status_totals.n + f.n
    FROM (SELECT status, sum(n) AS n FROM folded GROUP BY status) AS f WHERE pet_status_totals.status = f.status`,
  list: listStatement('', 'orders-list'),
  listByStatus: listStatement('AND status = $4', 'orders-list-by-status'),
  listByPet: listStatement('AND pet_id = $4', 'orders-list-by-pet'),
  listByStatusAndPet: listStatement('AND status = $4 AND pet_id = $5', 'orders-list-by-status-and-pet'),
};

/** What a placement's row says (`place` and `placeMany` return the same columns). */
function toPlacement(row: PlaceRow | undefined): Placement {
  if (row && row[0] !== null) return { outcome: 'placed', order: toOrder(row.slice(0, 6) as OrderRow) };
  if (!row?.[6]) return { outcome: 'pet-not-found' };
  // Read before this statement's update: `available` there means another placement took it
  // first (from available, a pet can only become pending).
  const status = row[7];
  return { outcome: 'pet-not-available', petStatus: status === 'available' ? 'pending' : status };
}

/** What a close's row says: none, the order is not this key's (or does not exist). */
function toClosing(row: CloseRow | undefined, to: 'completed' | 'cancelled'): Closing {
  if (!row) return { outcome: 'not-found' };
  if (row[0] === null) return { outcome: 'not-placed', status: row[6] };
  const order = toOrder(row.slice(0, 6) as OrderRow);
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
  /** Rows to read: one more than the page, to know whether another follows. */
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

export function createOrdersRepository(pool: pg.Pool) {
  const on = (tx: Queryable | undefined): Queryable => tx ?? pool;
  const placeOne = async (input: PlaceInput, tx?: Transaction): Promise<Placement> => {
    const result = await on(tx).query<PlaceRow>(orderQuery('orders-place', ORDER_STATEMENTS.place, [input.apiKeyId, input.petId, input.holdSeconds]));
    return toPlacement(result.rows[0]);
  };
  const closeOne = async ({ apiKeyId, id, to }: CloseInput, tx?: Transaction): Promise<Closing> => {
    const result = await on(tx).query<CloseRow>(orderQuery('orders-close', ORDER_STATEMENTS.close, [id, apiKeyId, to]));
    return toClosing(result.rows[0], to);
  };
  // Placements and closes that arrive in the same turn share one statement and one commit
  // (src/db/coalesce.ts): under load the commit's WAL flush is most of what each costs
  // PostgreSQL. Not serial: a batch waiting on a row someone holds (an open transaction
  // on a pet) holds up only the requests that arrived with it.
  const placeMany = coalesce<PlaceInput, Placement>({
    max: 100,
    one: (input) => placeOne(input),
    many: async (inputs) => {
      distinct(inputs, (p) => p.petId, 'pet');
      const values = [inputs.map((p) => p.apiKeyId), inputs.map((p) => p.petId), inputs.map((p) => p.holdSeconds)];
      const rows = (await pool.query<PlaceRow>(orderQuery('orders-place-many', ORDER_STATEMENTS.placeMany, values))).rows;
      return inputs.map((_, i) => toPlacement(rows[i]));
    },
  });
  const closeMany = coalesce<CloseInput, Closing>({
    max: 100,
    one: (input) => closeOne(input),
    many: async (inputs) => {
      distinct(inputs, (c) => c.id, 'order');
      const values = [inputs.map((c) => c.id), inputs.map((c) => c.apiKeyId), inputs.map((c) => c.to)];
      const rows = (await pool.query<[...CloseRow, boolean]>(orderQuery('orders-close-many', ORDER_STATEMENTS.closeMany, values))).rows;
      return inputs.map((c, i) => {
        const row = rows[i];
        return toClosing(row?.[7] ? (row.slice(0, 7) as CloseRow) : undefined, c.to);
      });
    },
  });
  return {
    /** Places an order for the pet if it is available: in `tx` when given, else coalesced. */
    place(input: PlaceInput, tx?: Transaction): Promise<Placement> {
      return tx ? placeOne(input, tx) : placeMany(input);
    },

    /** The order, if this API key placed it. */
    async get(apiKeyId: number, id: number): Promise<Order | undefined> {
      const row = (await pool.query<OrderRow>(orderQuery('orders-get', ORDER_STATEMENTS.get, [id, apiKeyId]))).rows[0];
      return row ? toOrder(row) : undefined;
    },

    /**
     * Completes or cancels a placed order of this API key: in `tx` when given, else
     * coalesced. A placed order past its expiresAt is expired instead, and answers `not-placed`.
     */
    close(apiKeyId: number, id: number, to: 'completed' | 'cancelled', tx?: Transaction): Promise<Closing> {
      return tx ? closeOne({ apiKeyId, id, to }, tx) : closeMany({ apiKeyId, id, to });
    },

    /**
     * A page of this API key's orders, in id order, up to where every order is final: it
     * stops before the first one that a transaction still running could precede (see the
     * migration). `more` says that rows follow, read or withheld.
     */
    async list(page: OrderPage): Promise<{ orders: Order[]; more: boolean }> {
      const { apiKeyId, after, limit, status, petId } = page;
      const [name, text] =
        status && petId !== undefined
          ? ORDER_STATEMENTS.listByStatusAndPet
          : status
            ? ORDER_STATEMENTS.listByStatus
            : petId !== undefined
              ? ORDER_STATEMENTS.listByPet
              : ORDER_STATEMENTS.list;
      const values: unknown[] = [apiKeyId, after, limit, ...(status ? [status] : []), ...(petId !== undefined ? [petId] : [])];
      const rows = (await pool.query<[...OrderRow, string, string | null]>(orderQuery(name, text, values))).rows;
      const frontier = rows[0]?.[7];
      const final = frontier ? rows.filter((row) => BigInt(row[6]) < BigInt(frontier)) : rows;
      return { orders: final.map((row) => toOrder(row.slice(0, 6) as OrderRow)), more: final.length < rows.length };
    },

    /** Expires placed orders past their expiresAt, a batch at a time until a batch is not full; returns how many. */
    async expireDue(batch = 1000): Promise<number> {
      let total = 0;
      for (;;) {
        const result = await pool.query<[number]>({ name: 'orders-expire', text: ORDER_STATEMENTS.expire, values: [batch], rowMode: 'array' });
        const expired = result.rows[0]?.[0] ?? 0;
        total += expired;
        if (expired < batch) return total;
      }
    },

    /** How many pets have each status, and none. */
    async inventory(): Promise<Inventory> {
      const rows = (await pool.query<[string, number]>(orderQuery('inventory', ORDER_STATEMENTS.inventory, []))).rows;
      const counts = new Map(rows);
      return { available: counts.get('available') ?? 0, pending: counts.get('pending') ?? 0, sold: counts.get('sold') ?? 0, noStatus: counts.get('none') ?? 0 };
    },

    /** Folds recorded status changes into the inventory's totals (a job). */
    async foldInventory(batch = 50_000): Promise<number> {
      const result = await pool.query({ name: 'inventory-fold', text: ORDER_STATEMENTS.foldInventory, values: [batch] });
      return result.rowCount ?? 0;
    },
  };
}

export type OrdersRepository = ReturnType<typeof createOrdersRepository>;
