// The fan-out of events to webhook endpoints: the relay `webhooks` of the events feed
// (src/db/events.ts `relay`: one instance at a time, the next final events after its
// position, in the append order) inserts one webhook_messages row per event and matching
// endpoint, in the transaction that moves the relay's position: each event fans out exactly
// once (docs/decisions/0006-webhook-delivery.md). The endpoints of a key that is revoked or
// has expired are disabled, saying why (they would never receive anything more).
import { keyInForce } from './api-keys.js';
import { KEY_MAY_SEE, type EventsRepository } from './events.js';
import { execute, query, statement, type Queryable } from './query.js';

const STATEMENTS = {
  // Events $1 .. $2 (ids), to every enabled endpoint that lists the type, was enabled by the
  // time the event was written, and whose key may see it.
  fanOut: statement<{ n: number }>(
    'webhook-dispatch-fan-out',
    `WITH added AS (
       INSERT INTO webhook_messages (endpoint_id, event_id)
       SELECT ep.id, e.id FROM events e
       JOIN webhook_endpoints ep ON ep.enabled AND e.type = ANY (ep.event_types) AND e.created_at >= ep.enabled_at
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
};

/** The relay of the events feed that fans events out to webhook endpoints (its row in event_relays). */
export const WEBHOOK_RELAY = 'webhooks';

export function createWebhookDispatchRepository(events: Pick<EventsRepository, 'relayRange'>, primary: Queryable) {
  return {
    /** Disables the enabled endpoints of revoked or expired keys, saying why. */
    async retire(): Promise<void> {
      await execute(primary, STATEMENTS.retire, []);
    },

    /**
     * Fans out up to `limit` events after the relay's position; resolves with how many events
     * were dispatched (0: none final yet, or another instance is dispatching) and messages made.
     */
    async dispatch(limit: number): Promise<{ events: number; messages: number }> {
      let messages = 0;
      const dispatched = await events.relayRange(WEBHOOK_RELAY, limit, async (first, last, tx) => {
        const [made] = await query(tx, STATEMENTS.fanOut, [first, last]);
        messages = made?.n ?? 0;
      });
      return { events: dispatched ?? 0, messages };
    },
  };
}

export type WebhookDispatchRepository = ReturnType<typeof createWebhookDispatchRepository>;
