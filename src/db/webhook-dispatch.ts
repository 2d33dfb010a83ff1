// The webhook_dispatch table: how far the dispatcher has walked the events feed. One
// instance at a time (the row's lock, taken with SKIP LOCKED: another instance skips its
// turn) reads the events after the position in the append order, up to the first that is
// not final (src/db/append-order.ts: no event below it can still appear), inserts one
// webhook_messages row per event and matching endpoint, and moves the position past them,
// in one transaction: each event fans out exactly once (docs/decisions/0006-webhook-delivery.md).
// This module reads the events table with a statement of its own (the feed's repository is
// src/db/events.ts).
import type pg from 'pg';
import { finalPage, isFinal } from './append-order.js';
import { query, statement } from './query.js';
import { inTransaction } from './transaction.js';
import { KEY_MAY_SEE } from './webhook-messages.js';

const STATEMENTS = {
  position: statement<{ position: number }>('webhook-dispatch-position', 'SELECT position FROM webhook_dispatch FOR UPDATE SKIP LOCKED'),
  events: statement<{ id: number; final: boolean }>(
    'webhook-dispatch-events',
    `SELECT id, ${isFinal('events', '0')} AS final FROM events WHERE id > $1 ORDER BY id LIMIT $2::int + 1`,
  ),
  // Events $1 .. $2 (ids), to every enabled endpoint that lists the type, was enabled by the
  // time the event was written, and whose key may see it.
  fanOut: statement<{ n: number }>(
    'webhook-dispatch-fan-out',
    `WITH added AS (
       INSERT INTO webhook_messages (endpoint_id, event_id)
       SELECT ep.id, e.id FROM events e
       JOIN webhook_endpoints ep ON ep.enabled AND e.type = ANY (ep.event_types) AND e.created_at >= ep.enabled_at
       JOIN api_keys k ON k.id = ep.api_key_id
       WHERE e.id > $1 AND e.id <= $2 AND ${KEY_MAY_SEE}
       ON CONFLICT DO NOTHING
       RETURNING 1
     )
     SELECT count(*)::int AS n FROM added`,
  ),
  advance: statement<Record<string, never>>('webhook-dispatch-advance', 'UPDATE webhook_dispatch SET position = $1'),
};

export function createWebhookDispatchRepository(pool: pg.Pool) {
  return {
    /**
     * Fans out up to `limit` events after the position; resolves with how many events were
     * dispatched (0: none final yet, or another instance is dispatching) and messages made.
     */
    async dispatch(limit: number): Promise<{ events: number; messages: number }> {
      return inTransaction(pool, async (tx) => {
        const [row] = await query(tx, STATEMENTS.position);
        if (!row) return { events: 0, messages: 0 };
        const page = finalPage(await query(tx, STATEMENTS.events, [row.position, limit]), limit, row.position);
        const last = page.rows.at(-1)?.id;
        if (last === undefined) return { events: 0, messages: 0 };
        const [made] = await query(tx, STATEMENTS.fanOut, [row.position, last]);
        await query(tx, STATEMENTS.advance, [last]);
        return { events: page.rows.length, messages: made?.n ?? 0 };
      });
    },
  };
}

export type WebhookDispatchRepository = ReturnType<typeof createWebhookDispatchRepository>;
