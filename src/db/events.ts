// The events table (migrations/1763700000013_events.sql): written by triggers only, in the
// transaction of the change each records; read here. Events join the append order
// (docs/decisions/0001-append-order.md): a page stops before its first event that is not
// final yet, so a client following rel="next" gets each event it may see exactly once.
//
// Who sees what: a catalogue event (api_key_id NULL) needs pets:read; an order event needs
// orders:read and is seen by the key that placed the order only. Each combination has a
// statement of its own, whose plan walks its index: the primary key (both), events_catalogue
// (catalogue only), events_of_key (own orders only). Events read and write the primary only
// (a page's frontier asks which transactions are writing, which only the primary knows).
//
// The relays (src/events/): `relay` hands the next final events after a relay's position to
// a publisher and moves the position in the transaction that holds the relay's row.
//
// An event's JSON is built by PostgreSQL (`data` is stored as the contract's JSON text) and
// sent as it is (src/db/serialized.ts, docs/decisions/0003-postgresql-built-json.md).
//
// Retention: `purge` deletes the oldest events, in id order, up to (not past) the first one
// that is still kept or not final, and moves `events_retention.purged_through` to the last
// id it deleted, in the same statement. Every event at or below purged_through is gone and
// every event above it is kept: a cursor before it is refused (410) rather than silently
// skipping what was deleted.
import type pg from 'pg';
import type { components } from '../../generated/v1.js';
import { finalPage, isFinal } from './append-order.js';
import { query, statement, type Queryable } from './query.js';
import { Serialized } from './serialized.js';
import { inTransaction } from './transaction.js';

export type Event = components['schemas']['Event'];
export type EventType = components['schemas']['EventType'];

/** SQL: the event (of the table alias `e`, if given) as the contract writes it, `{"id","type","createdAt","data"}`. */
export function eventJson(e?: string): string {
  const c = (column: string) => (e ? `${e}.${column}` : column);
  return `'{"id":' || ${c('id')} || ',"type":"' || ${c('type')} || '","createdAt":"' || json_instant(${c('created_at')}) || '","data":' || ${c('data')} || '}'`;
}
const EVENT_JSON = eventJson();

/**
 * SQL: whether a key may see an event: a catalogue event (`api_key_id` NULL) when it holds
 * pets:read, an order event when it placed the order and holds orders:read. Each argument is
 * an SQL expression: the event's table alias, the key's id, and whether it holds each scope.
 * The one statement of this rule: listEvents' statements are its cases, one per pair of
 * scopes (below), and webhook deliveries use it whole (src/db/webhook-messages.ts).
 */
export function keyMaySee(e: string, key: string, petsRead: string, ordersRead: string): string {
  return `CASE WHEN ${e}.api_key_id IS NULL THEN ${petsRead} ELSE ${e}.api_key_id = ${key} AND ${ordersRead} END`;
}

/**
 * Which events a key sees after $1 ($4 is the key's id where the statement names it), and the
 * scan's order. One key's order events are asked as a range of events_of_key, (key, after)
 * to (key, ∞), in its order: written as an equality and `ORDER BY id`, a generic plan made
 * while one key had placed every order walked the primary key over every event instead
 * (test/db/generic-plans.test.ts).
 */
const VISIBILITY = {
  both: { where: 'id > $1::bigint AND (api_key_id IS NULL OR api_key_id = $4::bigint)', order: 'id' },
  catalogue: { where: 'id > $1::bigint AND api_key_id IS NULL', order: 'id' },
  orders: { where: '(api_key_id, id) > ($4::bigint, $1::bigint) AND api_key_id <= $4::bigint', order: 'api_key_id, id' },
} as const;
type Visibility = keyof typeof VISIBILITY;

interface PageRow {
  purged: number;
  /** Null when the page is empty (the retention row still comes). */
  id: number | null;
  json: string | null;
  final: boolean | null;
}

// A page ($1 after, $2 size, $3 types or null, $4 the key) and one more event, each with
// whether it is final, with where retention has deleted up to, read in the same snapshot.
const pageStatement = (visibility: Visibility) =>
  statement<PageRow>(
    `events-list-${visibility}`,
    `SELECT kept.purged_through AS purged, page.id, page.json, page.final
     FROM events_retention AS kept LEFT JOIN LATERAL (
       SELECT id, ${EVENT_JSON} AS json, ${isFinal('events', '0')} AS final FROM events
       WHERE ${VISIBILITY[visibility].where} AND ($3::text[] IS NULL OR type = ANY ($3::text[]))
       ORDER BY ${VISIBILITY[visibility].order} LIMIT $2::int + 1
     ) AS page ON true
     ORDER BY page.id`,
  );

export const EVENT_STATEMENTS = {
  listBoth: pageStatement('both'),
  listCatalogue: pageStatement('catalogue'),
  listOrders: pageStatement('orders'),
  // One event ($1) if the key ($2 pets:read, $3 orders:read, $4 its id) may see it.
  get: statement<{ json: string }>('events-get', `SELECT ${EVENT_JSON} AS json FROM events e WHERE id = $1 AND ${keyMaySee('e', '$4::bigint', '$2::boolean', '$3::boolean')}`),
  // At most $2 of the oldest events older than $1 days, in id order, up to the first that is
  // not (or not final). Skipped while another instance purges (the retention row is locked).
  purge: statement<{ deleted: number; locked: boolean }>(
    'events-purge',
    `WITH kept AS (SELECT purged_through FROM events_retention FOR UPDATE SKIP LOCKED),
     batch AS (
       SELECT id, created_at < now() - $1::int * interval '1 day' AND ${isFinal('events', '0')} AS old
       FROM events WHERE id > (SELECT purged_through FROM kept) ORDER BY id LIMIT $2::int
     ),
     bound AS (SELECT max(id) AS through FROM batch WHERE id < coalesce((SELECT min(id) FROM batch WHERE NOT old), 9007199254740992)),
     gone AS (DELETE FROM events WHERE id > (SELECT purged_through FROM kept) AND id <= (SELECT through FROM bound) RETURNING id),
     moved AS (UPDATE events_retention SET purged_through = bound.through FROM bound WHERE bound.through IS NOT NULL RETURNING purged_through)
     SELECT (SELECT count(*) FROM gone)::int AS deleted, EXISTS (SELECT 1 FROM kept) AS locked`,
  ),
  // The relays: their row, made once; the next final events after a position ($1, $2 size).
  relayJoin: statement<Record<string, never>>('events-relay-join', 'INSERT INTO event_relays (name) VALUES ($1) ON CONFLICT (name) DO NOTHING'),
  relayLock: statement<{ position: number }>('events-relay-lock', 'SELECT position FROM event_relays WHERE name = $1 FOR UPDATE SKIP LOCKED'),
  relayPage: statement<{ id: number; type: EventType; json: string; final: boolean }>(
    'events-relay-page',
    `SELECT id, type, ${EVENT_JSON} AS json, ${isFinal('events', '0')} AS final FROM events WHERE id > $1::bigint ORDER BY id LIMIT $2::int + 1`,
  ),
  relayMove: statement<Record<string, never>>('events-relay-move', 'UPDATE event_relays SET position = $2 WHERE name = $1 AND position < $2'),
};

/** What the calling key may see: its id and which of the two scopes it holds. */
export interface Viewer {
  key: number;
  petsRead: boolean;
  ordersRead: boolean;
}

export type EventsPage =
  /** The events (JSON text) and where the next page starts: after the last one, or where this one started. */
  | { outcome: 'page'; events: Serialized<Event[]>; next: number }
  /** The page would start before events retention has deleted. */
  | { outcome: 'expired' };

/** An event as a relay publishes it. */
export interface RelayedEvent {
  id: number;
  type: EventType;
  json: string;
}

export function createEventsRepository(primary: pg.Pool) {
  return {
    /**
     * At most `limit` events after `after` that `viewer` may see (of `types`, when given), in
     * id order, up to where every event is final. `after` below where retention has deleted
     * is `expired` (0 is never: a walk from the start begins at the oldest event kept).
     */
    async list({ viewer, types, after, limit }: { viewer: Viewer; types?: readonly EventType[]; after: number; limit: number }): Promise<EventsPage> {
      const values: unknown[] = [after, limit, types ?? null];
      let page = EVENT_STATEMENTS.listCatalogue;
      if (viewer.ordersRead) {
        page = viewer.petsRead ? EVENT_STATEMENTS.listBoth : EVENT_STATEMENTS.listOrders;
        values.push(viewer.key);
      }
      const rows = await query(primary, page, values);
      const purged = rows[0]?.purged ?? 0;
      if (after > 0 && after < purged) return { outcome: 'expired' };
      const kept = finalPage(
        rows.filter((row): row is PageRow & { id: number; json: string; final: boolean } => row.id !== null),
        limit,
        after,
      ).rows;
      return { outcome: 'page', events: new Serialized<Event[]>(`[${kept.map((row) => row.json).join(',')}]`), next: kept.at(-1)?.id ?? after };
    },

    /** The event, if `viewer` may see it and it is kept. */
    async get(id: number, viewer: Viewer): Promise<Serialized<Event> | undefined> {
      const [row] = await query(primary, EVENT_STATEMENTS.get, [id, viewer.petsRead, viewer.ordersRead, viewer.key]);
      return row && new Serialized<Event>(row.json);
    },

    /**
     * Deletes events older than `days`, `batch` at a time, oldest first, while whole batches
     * go; how many. Another instance purging at the same time makes this one do nothing.
     */
    async purge(days: number, batch: number, maxBatches = 20): Promise<number> {
      let total = 0;
      for (let n = 0; n < maxBatches; n++) {
        const [done] = await query(primary, EVENT_STATEMENTS.purge, [days, batch]);
        total += done?.deleted ?? 0;
        if (!done?.locked || (done.deleted ?? 0) < batch) break;
      }
      return total;
    },

    /**
     * One step of the relay `name`, if no other instance is running it: the next final
     * events after its position (at most `limit`) are given to `publish`, and the position
     * moves past them when it resolves, in the transaction that holds the relay's row (which
     * `publish` may write in, so that what it writes and the move commit together). A
     * `publish` that throws moves nothing (the same events come again next time). How many
     * were published, or undefined when another instance holds the relay.
     */
    async relay(name: string, limit: number, publish: (events: RelayedEvent[], tx: Queryable) => Promise<void>): Promise<number | undefined> {
      await query(primary, EVENT_STATEMENTS.relayJoin, [name]);
      return inTransaction(primary, async (tx: Queryable) => {
        const [held] = await query(tx, EVENT_STATEMENTS.relayLock, [name]);
        if (!held) return undefined;
        const { rows } = finalPage(await query(tx, EVENT_STATEMENTS.relayPage, [held.position, limit]), limit, held.position);
        if (rows.length === 0) return 0;
        await publish(
          rows.map(({ id, type, json }) => ({ id, type, json })),
          tx,
        );
        await query(tx, EVENT_STATEMENTS.relayMove, [name, rows.at(-1)?.id]);
        return rows.length;
      });
    },
  };
}

export type EventsRepository = ReturnType<typeof createEventsRepository>;
