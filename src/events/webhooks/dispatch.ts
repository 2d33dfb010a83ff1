// The fan-out of events to webhook endpoints (docs/decisions/0006-webhook-delivery.md). Each
// endpoint has its own relay of the events feed, `webhook-<id>` in event_relays (made,
// moved on enabling, and deleted with the endpoint: src/events/webhooks/endpoints.ts; `retire`
// below tends the relays of endpoints written around the service). A relay
// step (src/events/feed.ts `relayRange`: one instance at a time, the next final events after
// its position, in the append order) inserts one webhook_messages row per event the endpoint
// takes, in the transaction that moves its position: each event fans out to an endpoint
// exactly once.
//
// Invariant: an endpoint has at most WINDOW messages waiting. A step counts them in its own
// transaction, under the relay's row lock (only the relay's holder makes the endpoint's
// messages), and walks at most WINDOW less those events, and none unless at most
// WINDOW / 2 wait. So what an endpoint that is slow or failing costs the database follows
// its attempts, not the rate of events: the events it has not taken yet wait in the feed,
// where they are already. An endpoint's relay does not hold events back from retention
// (`holds_retention` false): an event an endpoint has not taken by EVENT_RETENTION_DAYS is
// skipped, so that a lagging endpoint cannot keep the feed growing.
// The endpoints of a key that is revoked or has expired are disabled, saying why (they would
// never receive anything more).
import { keyInForce } from '../../api-keys/repository.js';
import { KEY_MAY_SEE, NEWEST_POSITION, type EventsRepository } from '../feed.js';
import { execute, query, statement, type Queryable } from '../../db/query.js';

/** The most messages an endpoint has waiting (see the invariant above). */
const WINDOW = 1000;

/** The most relay steps one endpoint gets per poll (each of at most WINDOW events). */
const STEPS_PER_POLL = 10;

/** An endpoint's relay: its row in event_relays. */
const endpointRelay = (id: number): string => `webhook-${id}`;
/** SQL: `endpointRelay` of an endpoint id column. */
export const endpointRelaySql = (id: string): string => `'webhook-' || ${id}`;

/** SQL, a scalar: how many messages endpoint `id` has waiting, counted up to `most` (no further). */
const waitingSql = (id: string, most: string): string => `(SELECT count(*)::int FROM (SELECT FROM webhook_messages WHERE endpoint_id = ${id} LIMIT ${most}) w)`;

const STATEMENTS = {
  // The enabled endpoints whose relay is behind the newest event and that have at most
  // $1 / 2 messages waiting (a step counts them again under the relay's lock).
  due: statement<{ id: number }>(
    'webhook-dispatch-due',
    `SELECT id FROM (
       SELECT ep.id, ${waitingSql('ep.id', '$1::int / 2 + 1')} AS waiting
       FROM webhook_endpoints ep
       JOIN event_relays r ON r.name = ${endpointRelaySql('ep.id')}
       WHERE ep.enabled AND r.position < (SELECT coalesce(max(id), 0) FROM events)
     ) d
     WHERE waiting <= $1::int / 2
     ORDER BY id`,
  ),
  // How many messages endpoint $1 has waiting, counted up to $2.
  waiting: statement<{ n: number }>(
    'webhook-dispatch-waiting',
    `SELECT ${waitingSql('$1', '$2::int')} AS n`,
  ),
  // Events $1 .. $2 (ids) to endpoint $3, if it is enabled, lists the type, was enabled by
  // the time the event was written, and its key may see the event.
  fanOut: statement<{ n: number }>(
    'webhook-dispatch-fan-out',
    `WITH added AS (
       INSERT INTO webhook_messages (endpoint_id, event_id)
       SELECT ep.id, e.id FROM events e
       JOIN webhook_endpoints ep ON ep.id = $3 AND ep.enabled AND e.type = ANY (ep.event_types) AND e.created_at >= ep.enabled_at
       JOIN api_keys k ON k.id = ep.api_key_id
       WHERE e.id >= $1 AND e.id <= $2 AND ${KEY_MAY_SEE}
       ON CONFLICT DO NOTHING
       RETURNING 1
     )
     SELECT count(*)::int AS n FROM added`,
  ),
  // The enabled endpoints of keys no longer in force: disabled, their pending messages dropped.
  retire: statement<Record<string, never>>(
    'webhook-dispatch-retire',
    `WITH retired AS (
       UPDATE webhook_endpoints ep SET enabled = false, disabled_at = now(), lease_token = NULL, lease_until = NULL,
         disabled_reason = CASE WHEN k.revoked_at IS NOT NULL THEN 'its API key was revoked' ELSE 'its API key expired' END
       FROM api_keys k
       WHERE k.id = ep.api_key_id AND ep.enabled AND NOT ${keyInForce('k')}
       RETURNING ep.id
     )
     DELETE FROM webhook_messages m USING retired r WHERE m.endpoint_id = r.id`,
  ),
  // Endpoints written around the service (SQL) get their relay here, and the relays of
  // endpoints deleted so lose theirs (the service makes and deletes both together).
  adopt: statement<Record<string, never>>(
    'webhook-dispatch-adopt',
    `INSERT INTO event_relays (name, position, holds_retention)
     SELECT ${endpointRelaySql('ep.id')}, ${NEWEST_POSITION}, false FROM webhook_endpoints ep
     WHERE NOT EXISTS (SELECT FROM event_relays r WHERE r.name = ${endpointRelaySql('ep.id')})
     ON CONFLICT (name) DO NOTHING`,
  ),
  orphans: statement<Record<string, never>>(
    'webhook-dispatch-orphans',
    `DELETE FROM event_relays WHERE name IN (
       SELECT name FROM event_relays r
       WHERE r.name ~ '^webhook-[0-9]+$' AND NOT EXISTS (SELECT FROM webhook_endpoints ep WHERE r.name = ${endpointRelaySql('ep.id')})
       FOR UPDATE SKIP LOCKED
     )`,
  ),
};

export function createWebhookDispatchRepository(events: Pick<EventsRepository, 'relayRange'>, primary: Queryable) {
  /**
   * One step of endpoint `id`'s relay: over the room it has (see the invariant above), or
   * none. How many events it walked, of how many it could, and the messages it made;
   * undefined when another instance holds the relay (or the endpoint is gone).
   */
  async function step(id: number): Promise<{ events: number; room: number; messages: number } | undefined> {
    let messages = 0;
    let room = 0;
    const walked = await events.relayRange(
      endpointRelay(id),
      async (tx) => {
        const [waiting] = await query(tx, STATEMENTS.waiting, [id, WINDOW]);
        room = WINDOW - (waiting?.n ?? 0);
        return room >= WINDOW / 2 ? room : 0;
      },
      async (first, last, tx) => {
        const [made] = await query(tx, STATEMENTS.fanOut, [first, last, id]);
        messages = made?.n ?? 0;
      },
      'made',
    );
    return walked === undefined ? undefined : { events: walked, room, messages };
  }

  return {
    /**
     * Disables the enabled endpoints of revoked or expired keys, saying why; gives endpoints
     * written around the service their relay, and drops the relays of endpoints deleted so.
     */
    async retire(): Promise<void> {
      await execute(primary, STATEMENTS.retire, []);
      await execute(primary, STATEMENTS.adopt, []);
      await execute(primary, STATEMENTS.orphans, []);
    },

    /**
     * Fills every due endpoint's waiting messages up to WINDOW from its relay; resolves with
     * how many messages were made.
     */
    async dispatch(): Promise<{ messages: number }> {
      let messages = 0;
      let failure: unknown;
      for (const { id } of await query(primary, STATEMENTS.due, [WINDOW])) {
        try {
          // Step while whole steps come back (the relay is behind and the endpoint has room),
          // at most STEPS_PER_POLL times (an endpoint that takes few of the events walked does
          // not hold up the others' refills).
          for (let steps = 0; steps < STEPS_PER_POLL; steps++) {
            const done = await step(id);
            if (done === undefined) break;
            messages += done.messages;
            if (done.events === 0 || done.events < done.room) break;
          }
        } catch (error) {
          // One endpoint's step failing (its row deleted by SQL meanwhile, say) leaves the
          // others' to do; the first failure is reported once all were tried.
          failure ??= error;
        }
      }
      if (failure !== undefined) throw failure;
      return { messages };
    },
  };
}

export type WebhookDispatchRepository = ReturnType<typeof createWebhookDispatchRepository>;
