// The events table (migrations/1763700000013_events.sql): written by triggers only, in the
// transaction of the change each records; read here. Events join the append order
// (docs/decisions/0001-append-order.md): a page stops before its first event that is not
// final yet, so a client following rel="next" gets each event it may see exactly once.
//
// Who sees what: a catalogue event (api_key_id NULL) needs pets:read; an order event needs
// orders:read and is seen by the key that placed the order only. Each combination has a
// statement of its own, whose plan walks its index: the primary key (both), events_catalogue
// (catalogue only), events_of_key (own orders only); with a type filter, each type named is a
// range of events_catalogue_by_type or events_of_key_by_type. Events read and write the primary only
// (a page's frontier asks which transactions are writing, which only the primary knows).
//
// The relays (src/events/nats.ts, src/events/webhooks/dispatch.ts): `relay` hands the next
// final events after a relay's position to a publisher and moves the position in the
// transaction that holds the relay's row.
//
// An event's JSON is built by PostgreSQL (`data` is stored as the contract's JSON text) and
// sent as it is (src/db/serialized.ts, docs/decisions/0003-postgresql-built-json.md).
//
// Retention: `purge` deletes the oldest events, in id order, up to (not past) the first one
// that is still kept or not final or not yet handled by a relay that holds retention (NATS;
// not a webhook endpoint's) and ran within the retention period, and moves
// `events_retention.purged_through` to the last id it deleted, in the same statement. Every
// event at or below purged_through is gone and every event above it is kept: a cursor before
// it (0 included) is refused (410) rather than silently skipping what was deleted.
import type pg from 'pg';
import type { components } from '../../generated/v1.js';
import { keyInForce } from '../api-keys/repository.js';
import { appendOrdered, finalPage } from '../db/append-order.js';
import { query, statement, type Queryable, type Statement } from '../db/query.js';
import { Serialized } from '../db/serialized.js';
import { inTransaction } from '../db/transaction.js';

/** Events are paged whole (migration 1763700000013). */
const EVENTS = appendOrdered('events');

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
 * scopes (below), and webhook deliveries use it whole (KEY_MAY_SEE, below).
 */
export function keyMaySee(e: string, key: string, petsRead: string, ordersRead: string): string {
  return `CASE WHEN ${e}.api_key_id IS NULL THEN ${petsRead} ELSE ${e}.api_key_id = ${key} AND ${ordersRead} END`;
}

/**
 * SQL: whether the key `k` (api_keys) of the webhook endpoint `ep` may see the event `e` now:
 * the key is in force (src/api-keys/repository.ts) and keyMaySee holds for it. Webhook deliveries
 * decide by it, at fan-out and again at each attempt (src/events/webhooks/dispatch.ts,
 * src/events/webhooks/messages.ts).
 */
export const KEY_MAY_SEE = `(${keyInForce('k')}
  AND ${keyMaySee('e', 'ep.api_key_id', "'pets:read' = ANY (k.scopes)", "'orders:read' = ANY (k.scopes)")})`;

/**
 * Which events a key sees after $1 ($3 is the key's id where the statement names it), and the
 * scan's order. One key's order events are asked as a range of events_of_key, (key, after)
 * to (key, ∞), in its order: written as an equality and `ORDER BY id`, a generic plan made
 * while one key had placed every order walked the primary key over every event instead
 * (test/db/generic-plans.test.ts).
 */
const VISIBILITY = {
  both: { where: 'id > $1::bigint AND (api_key_id IS NULL OR api_key_id = $3::bigint)', order: 'id' },
  catalogue: { where: 'id > $1::bigint AND api_key_id IS NULL', order: 'id' },
  orders: { where: '(api_key_id, id) > ($3::bigint, $1::bigint) AND api_key_id <= $3::bigint', order: 'api_key_id, id' },
} as const;
type Visibility = keyof typeof VISIBILITY;

/**
 * The same with a type filter ($3 the types, $4 the key): each type named is a range of its
 * own index (migrations/1763700000014_events-indexes.sql), walked in its order, at most a
 * page and one more of each, then merged in id order. A type with no event reads nothing,
 * however many events of other types are kept. Each range is written as row comparisons in
 * the index's order, for the reason above.
 */
const COLUMNS = 'id, type, created_at, data, visible_after';
const CATALOGUE_OF_TYPE = (type: string) =>
  `SELECT ${COLUMNS} FROM events WHERE api_key_id IS NULL AND (type, id) > (${type}, $1::bigint) AND type <= ${type} ORDER BY type, id LIMIT $2::int + 1`;
const ORDERS_OF_TYPE = (type: string) =>
  `SELECT ${COLUMNS} FROM events WHERE api_key_id IS NOT NULL AND (api_key_id, type, id) > ($4::bigint, ${type}, $1::bigint) AND (api_key_id, type) <= ($4::bigint, ${type}) ORDER BY api_key_id, type, id LIMIT $2::int + 1`;
const OF_TYPES: Record<Visibility, string> = {
  both: `(${CATALOGUE_OF_TYPE('wanted.name')}) UNION ALL (${ORDERS_OF_TYPE('wanted.name')})`,
  catalogue: CATALOGUE_OF_TYPE('wanted.name'),
  orders: ORDERS_OF_TYPE('wanted.name'),
};

interface PageRow {
  purged: number;
  /** Where the feed is final up to, asked only when the page holds every event after $1 the key may see (else null). */
  head: number | null;
  /** Null when the page is empty (the retention row still comes). */
  id: number | null;
  json: string | null;
  final: boolean | null;
}

/** At most this many events (of any key and type) are read after a short page to move its cursor to where the feed is final. */
const HEAD_SCAN = 1000;

/**
 * SQL, a scalar: a relay position after the newest events, before any that is not final
 * (the last of the newest HEAD_SCAN events before the first of them that is not; 0 when
 * there are none). An event written by a transaction that starts later comes after it.
 */
export const NEWEST_POSITION = `(WITH recent AS (SELECT id, ${EVENTS.isFinal()} AS final FROM events ORDER BY id DESC LIMIT ${HEAD_SCAN})
  SELECT coalesce((SELECT min(id) - 1 FROM recent WHERE NOT final), (SELECT max(id) FROM recent), 0))`;

// A page ($1 after, $2 size, then the statement's own) and one more event, each with whether
// it is final, with where retention has deleted up to, read in the same snapshot. When the
// page holds every event the key may see after $1 (at most $2, all final), `head` is where
// the whole feed is final up to (the last of the first HEAD_SCAN events after $1 before any
// that is not): no event the key may see lies between, nor can come there, so the next page
// may start there. A key that sees few events keeps its cursor at the newest events, and
// retention does not pass it while the client keeps reading. The CASE asks the head's scan
// only when the page is short (an InitPlan runs when first used).
const pageStatement = (visibility: Visibility, typed: boolean) =>
  statement<PageRow>(
    `events-list-${visibility}${typed ? '-of-types' : ''}`,
    `WITH page AS MATERIALIZED (
       SELECT id, ${EVENT_JSON} AS json, ${EVENTS.isFinal()} AS final
       FROM ${
         typed
           ? `(SELECT DISTINCT unnest($3::text[]) AS name) AS wanted CROSS JOIN LATERAL (${OF_TYPES[visibility]}) AS events ORDER BY id`
           : `events WHERE ${VISIBILITY[visibility].where} ORDER BY ${VISIBILITY[visibility].order}`
       }
       LIMIT $2::int + 1
     ), head AS (
       SELECT id, ${EVENTS.isFinal()} AS final FROM events WHERE id > $1::bigint ORDER BY id LIMIT ${HEAD_SCAN}
     )
     SELECT kept.purged_through AS purged,
       CASE WHEN (SELECT count(*) FROM page) <= $2::int AND (SELECT bool_and(final) FROM page) IS NOT FALSE
         THEN (SELECT max(id) FROM head WHERE id < coalesce((SELECT min(id) FROM head WHERE NOT final), 9007199254740992)) END AS head,
       page.id, page.json, page.final
     FROM events_retention AS kept LEFT JOIN page ON true
     ORDER BY page.id`,
  );

export const EVENT_STATEMENTS = {
  listBoth: pageStatement('both', false),
  listCatalogue: pageStatement('catalogue', false),
  listOrders: pageStatement('orders', false),
  listBothOfTypes: pageStatement('both', true),
  listCatalogueOfTypes: pageStatement('catalogue', true),
  listOrdersOfTypes: pageStatement('orders', true),
  // One event ($1) if the key ($2 pets:read, $3 orders:read, $4 its id) may see it.
  get: statement<{ json: string }>('events-get', `SELECT ${EVENT_JSON} AS json FROM events e WHERE id = $1 AND ${keyMaySee('e', '$4::bigint', '$2::boolean', '$3::boolean')}`),
  // At most $2 of the oldest events older than $1 days, in id order, up to the first that is
  // not (or not final), and never past the position of a relay that ran within $1 days (it
  // has not handled the events after it yet). Skipped while another instance purges (the
  // retention row is locked).
  purge: statement<{ deleted: number; locked: boolean }>(
    'events-purge',
    `WITH kept AS (SELECT purged_through FROM events_retention FOR UPDATE SKIP LOCKED),
     held AS (SELECT min(position) AS position FROM event_relays WHERE holds_retention AND ran_at > now() - $1::int * interval '1 day'),
     batch AS (
       SELECT id, created_at < now() - $1::int * interval '1 day' AND ${EVENTS.isFinal()}
         AND id <= coalesce((SELECT position FROM held), 9007199254740991) AS old
       FROM events WHERE id > (SELECT purged_through FROM kept) ORDER BY id LIMIT $2::int
     ),
     bound AS (SELECT max(id) AS through FROM batch WHERE id < coalesce((SELECT min(id) FROM batch WHERE NOT old), 9007199254740992)),
     gone AS (DELETE FROM events WHERE id > (SELECT purged_through FROM kept) AND id <= (SELECT through FROM bound) RETURNING id),
     moved AS (UPDATE events_retention SET purged_through = bound.through FROM bound WHERE bound.through IS NOT NULL RETURNING purged_through)
     SELECT (SELECT count(*) FROM gone)::int AS deleted, EXISTS (SELECT 1 FROM kept) AS locked`,
  ),
  // The relays: their row, made once ($2: starting after the newest event, that is after the
  // last of the newest events before any that is not final; else from the oldest); the row
  // locked, with whether `ran_at` is a minute old (none: another instance holds it, or it is
  // gone: `present`); the next final events after a position
  // ($1, $2 size); the position moved and `ran_at` set (written at most once a minute while
  // there is nothing to relay).
  relayJoin: statement<Record<string, never>>(
    'events-relay-join',
    `INSERT INTO event_relays (name, position)
     SELECT $1, CASE WHEN $2::boolean THEN ${NEWEST_POSITION} ELSE 0 END
     ON CONFLICT (name) DO NOTHING`,
  ),
  relayLock: statement<{ position: number | null; stale: boolean | null; present: boolean }>(
    'events-relay-lock',
    `WITH held AS (SELECT position, ran_at < now() - interval '1 minute' AS stale FROM event_relays WHERE name = $1 FOR UPDATE SKIP LOCKED)
     SELECT held.position, held.stale, EXISTS (SELECT 1 FROM event_relays WHERE name = $1) AS present FROM (SELECT) AS one LEFT JOIN held ON true`,
  ),
  relayPage: statement<{ id: number; type: EventType; json: string; trace_parent: string | null; final: boolean }>(
    'events-relay-page',
    `SELECT id, type, ${EVENT_JSON} AS json, trace_parent, ${EVENTS.isFinal()} AS final FROM events WHERE id > $1::bigint ORDER BY id LIMIT $2::int + 1`,
  ),
  // The same page without the events' JSON, for a relay that needs only where it ends.
  relayRange: statement<{ id: number; final: boolean }>(
    'events-relay-range',
    `SELECT id, ${EVENTS.isFinal()} AS final FROM events WHERE id > $1::bigint ORDER BY id LIMIT $2::int + 1`,
  ),
  relayMove: statement<Record<string, never>>('events-relay-move', 'UPDATE event_relays SET position = greatest(position, $2), ran_at = now() WHERE name = $1'),
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

/**
 * Where a relay's row starts when its first step finds none: after the oldest event kept, or
 * after the newest events (NEWEST_POSITION); `made`: the row is made and deleted by its owner
 * (a webhook endpoint's, src/events/webhooks/endpoints.ts), and a step that finds none does nothing.
 */
export type RelayStart = 'oldest' | 'newest' | 'made';

/**
 * The most events a relay step takes: a number, or one decided in the step's transaction
 * once it holds the relay's row (0: none this time).
 */
export type RelayLimit = number | ((tx: Queryable) => Promise<number>);

/** An event as a relay publishes it. */
export interface RelayedEvent {
  id: number;
  type: EventType;
  json: string;
  /** The trace context of the change that wrote it (null: none was traced). */
  traceParent: string | null;
}

export function createEventsRepository(primary: pg.Pool) {
  // The relays whose row this instance has made sure of (relay's first step).
  const joined = new Set<string>();

  /** Makes the relay's row unless this instance has (see `join` below). */
  async function join(name: string, from: Exclude<RelayStart, 'made'>): Promise<void> {
    if (joined.has(name)) return;
    await query(primary, EVENT_STATEMENTS.relayJoin, [name, from === 'newest']);
    joined.add(name);
  }

  /** One step of a relay, reading its page with `page`: see `relay` below. */
  async function step<R extends { id: number; final: boolean }>(
    name: string,
    limit: RelayLimit,
    page: Statement<R>,
    act: (rows: R[], tx: Queryable) => Promise<void>,
    from: RelayStart,
  ): Promise<number | undefined> {
    if (from !== 'made') await join(name, from);
    return inTransaction(primary, async (tx: Queryable) => {
      const [held] = await query(tx, EVENT_STATEMENTS.relayLock, [name]);
      if (held?.position === null || held?.position === undefined) {
        // Deleted meanwhile (by hand): made again by the next step.
        if (held?.present === false) joined.delete(name);
        return undefined;
      }
      const position = held.position;
      const most = typeof limit === 'number' ? limit : await limit(tx);
      if (most <= 0) return 0;
      const { rows } = finalPage(await query(tx, page, [position, most]), most, position);
      if (rows.length > 0) await act(rows, tx);
      if (rows.length > 0 || held.stale === true) await query(tx, EVENT_STATEMENTS.relayMove, [name, rows.at(-1)?.id ?? position]);
      return rows.length;
    });
  }

  return {
    /**
     * At most `limit` events after `after` that `viewer` may see (of `types`, when given), in
     * id order, up to where every event is final. `after` is the cursor's position, undefined
     * for a walk from the start (which begins at the oldest event kept). A position below
     * where retention has deleted is `expired`, 0 included: events the walk had not reached
     * are gone. The next page starts after this one's last event, or, when this page holds
     * every event the viewer may see so far, where the whole feed is final up to (`head`):
     * the cursor of a key that sees few events keeps up with the feed.
     */
    async list({ viewer, types, after, limit }: { viewer: Viewer; types?: readonly EventType[]; after: number | undefined; limit: number }): Promise<EventsPage> {
      const from = after ?? 0;
      const typed = types !== undefined && types.length > 0;
      const values: unknown[] = typed ? [from, limit, types] : [from, limit];
      let page = typed ? EVENT_STATEMENTS.listCatalogueOfTypes : EVENT_STATEMENTS.listCatalogue;
      if (viewer.ordersRead) {
        if (viewer.petsRead) page = typed ? EVENT_STATEMENTS.listBothOfTypes : EVENT_STATEMENTS.listBoth;
        else page = typed ? EVENT_STATEMENTS.listOrdersOfTypes : EVENT_STATEMENTS.listOrders;
        values.push(viewer.key);
      }
      const rows = await query(primary, page, values);
      const purged = rows[0]?.purged ?? 0;
      if (after !== undefined && after < purged) return { outcome: 'expired' };
      const kept = finalPage(
        rows.filter((row): row is PageRow & { id: number; json: string; final: boolean } => row.id !== null),
        limit,
        from,
      ).rows;
      const next = Math.max(kept.at(-1)?.id ?? from, rows[0]?.head ?? 0, purged);
      return { outcome: 'page', events: new Serialized<Event[]>(`[${kept.map((row) => row.json).join(',')}]`), next };
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
     * Makes the relay's row, starting at `from`, unless it exists: what `relay`'s first step
     * does, for a relay that must fix where it starts before it can publish (NATS away).
     */
    join,

    /**
     * One step of the relay `name`, if no other instance is running it: the next final
     * events after its position (at most `limit`) are given to `publish`, and the position
     * moves past them when it resolves, in the transaction that holds the relay's row (which
     * `publish` may write in, so that what it writes and the move commit together). A
     * `publish` that throws moves nothing (the same events come again next time). How many
     * were published, or undefined when another instance holds the relay.
     *
     * The relay's row is made by its first step on this instance (`from`, RelayStart, when the
     * row does not exist yet), and again by the step after one that found it deleted (unless
     * `from` is `made`). Each step that holds
     * the row notes when it ran (to the minute): retention waits for a relay that ran within
     * EVENT_RETENTION_DAYS, and no longer for one that did not.
     */
    async relay(name: string, limit: number, publish: (events: RelayedEvent[], tx: Queryable) => Promise<void>, from: RelayStart = 'oldest'): Promise<number | undefined> {
      return step(name, limit, EVENT_STATEMENTS.relayPage, (rows, tx) => publish(rows.map(({ id, type, json, trace_parent }) => ({ id, type, json, traceParent: trace_parent })), tx), from);
    },

    /**
     * `relay`, for a relay that acts on a range of events in SQL (the webhook fan-out): `act`
     * gets the first and last id of the next final events, not the events.
     */
    async relayRange(name: string, limit: RelayLimit, act: (first: number, last: number, tx: Queryable) => Promise<void>, from: RelayStart = 'oldest'): Promise<number | undefined> {
      return step(name, limit, EVENT_STATEMENTS.relayRange, (rows, tx) => act((rows[0] as { id: number }).id, (rows.at(-1) as { id: number }).id, tx), from);
    },
  };
}

export type EventsRepository = ReturnType<typeof createEventsRepository>;
