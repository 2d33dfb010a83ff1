// The webhook_messages table: the delivery queue, one row per (endpoint, event) still to be
// delivered (docs/decisions/0006-webhook-delivery.md). The dispatcher inserts rows
// (src/events/webhooks/dispatch.ts); an instance takes an endpoint's lease (`claim`: one
// endpoint is delivered to by one instance at a time), makes one attempt at its oldest due
// message, and `finish` writes the attempt to webhook_deliveries and decides what follows,
// in one transaction. A lease that is not finished (the instance died) expires, and any
// instance takes the endpoint again.
import { eventJson, KEY_MAY_SEE } from '../feed.js';
import { inTransaction } from '../../db/transaction.js';
import { execute, query, statement } from '../../db/query.js';
import type pg from 'pg';

/** One message to attempt, under its endpoint's lease. */
export interface Claimed {
  endpoint_id: number;
  url: string;
  secret: string;
  /** The previous secret while it still signs. */
  previous_secret: string | null;
  event_id: number;
  /** The trace context of the change that wrote the event (null: none was traced). */
  trace_parent: string | null;
  /** Attempts made before this one. */
  attempts: number;
  /** The Event as JSON text; null when the event is gone (retention). */
  payload: string | null;
  /** Whether the endpoint's key may see the event now (in force, and holds the scope it needs). */
  may_see: boolean;
}

/** The advisory lock under which leases are taken, one claim at a time (a fixed key of this module's own). */
const CLAIM_LOCK = "hashtext('webhook_endpoints claim')";

const STATEMENTS = {
  // Claims run one at a time across instances, so that each claim's snapshot (taken after
  // this lock, in READ COMMITTED) counts every lease an earlier claim took: without it, two
  // claims that overlap each count none of the other's, and one key holds more than $4
  // (docs/decisions/0006-webhook-delivery.md, invariants).
  lockClaim: statement<Record<string, never>>('webhook-messages-lock-claim', `SELECT FROM pg_advisory_xact_lock(${CLAIM_LOCK})`),
  // $1 lease token, $2 lease in ms, $3 at most this many endpoints, $4 at most this many
  // leases in force per API key (across instances): the enabled endpoints with a due message
  // and no lease in force, least recently claimed first, each with its oldest due message.
  // An expired previous secret is cleared as the lease is taken. A lease runs from the
  // statement's start, after the claim lock (now() is the transaction's, before its wait).
  claim: statement<Claimed>(
    'webhook-messages-claim',
    `WITH candidates AS (
       SELECT ep.id, ep.api_key_id, ep.claimed_at,
         (SELECT count(*) FROM webhook_endpoints o WHERE o.api_key_id = ep.api_key_id AND o.lease_until >= now()) AS leased
       FROM webhook_endpoints ep
       WHERE ep.enabled AND (ep.lease_until IS NULL OR ep.lease_until < now())
         AND EXISTS (SELECT 1 FROM webhook_messages m WHERE m.endpoint_id = ep.id AND m.due_at <= now())
       ORDER BY ep.claimed_at NULLS FIRST, ep.id
       LIMIT $3::int * $4::int
       FOR UPDATE SKIP LOCKED
     ), picked AS (
       SELECT id FROM (
         SELECT id, claimed_at, leased + row_number() OVER (PARTITION BY api_key_id ORDER BY claimed_at NULLS FIRST, id) AS nth FROM candidates
       ) c
       WHERE nth <= $4::int
       ORDER BY claimed_at NULLS FIRST, id
       LIMIT $3
     ), leased AS (
       UPDATE webhook_endpoints ep SET lease_token = $1, lease_until = statement_timestamp() + $2::int * interval '1 millisecond', claimed_at = clock_timestamp(),
         previous_secret = CASE WHEN ep.previous_secret_expires_at > now() THEN ep.previous_secret END,
         previous_secret_expires_at = CASE WHEN ep.previous_secret_expires_at > now() THEN ep.previous_secret_expires_at END
       FROM picked WHERE ep.id = picked.id
       RETURNING ep.id, ep.api_key_id, ep.url, ep.secret, ep.previous_secret
     )
     SELECT ep.id AS endpoint_id, ep.url, ep.secret, ep.previous_secret, m.event_id, m.attempts, e.trace_parent,
       ${eventJson('e')} AS payload,
       coalesce(${KEY_MAY_SEE}, false) AS may_see
     FROM leased ep
     CROSS JOIN LATERAL (
       SELECT event_id, attempts FROM webhook_messages WHERE endpoint_id = ep.id AND due_at <= now() ORDER BY due_at, event_id LIMIT 1
     ) m
     LEFT JOIN events e ON e.id = m.event_id
     LEFT JOIN api_keys k ON k.id = ep.api_key_id`,
  ),
  // The endpoint's row, locked, and whether this instance still holds its lease ($2).
  lock: statement<{ mine: boolean; failing_since: Date | null }>(
    'webhook-messages-lock',
    'SELECT lease_token IS NOT DISTINCT FROM $2::uuid AS mine, failing_since FROM webhook_endpoints WHERE id = $1 FOR UPDATE',
  ),
  log: statement<Record<string, never>>(
    'webhook-messages-log',
    `INSERT INTO webhook_deliveries (endpoint_id, event_id, attempt, status_code, error, duration_ms, attempted_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  ),
  // Released without an attempt (the key may no longer see the event, or it is gone).
  drop: statement<Record<string, never>>(
    'webhook-messages-drop',
    `WITH m AS (DELETE FROM webhook_messages WHERE endpoint_id = $1 AND event_id = $2)
     UPDATE webhook_endpoints SET lease_token = NULL, lease_until = NULL WHERE id = $1 AND lease_token = $3`,
  ),
  delivered: statement<Record<string, never>>(
    'webhook-messages-delivered',
    `WITH m AS (DELETE FROM webhook_messages WHERE endpoint_id = $1 AND event_id = $2)
     UPDATE webhook_endpoints SET failing_since = NULL, lease_token = NULL, lease_until = NULL WHERE id = $1`,
  ),
  // $3 the delay in ms, $4 the window in seconds, $5 when this attempt started: the message
  // is tried again after the delay, cut to the end of the window after its first attempt
  // (a last attempt is made there, however long the schedule or a Retry-After asks to
  // wait); it is given up when this attempt was made at the end of the window or later, or
  // after its 100th attempt (the log's bound; the default schedule makes about a dozen in
  // 3 days). `expired`: when given up at the end of the window, since when (its first
  // attempt).
  retry: statement<{ kept: boolean; expired: Date | null }>(
    'webhook-messages-retry',
    `WITH msg AS (
       SELECT first, attempts < 99 AND now() < first + $4::int * interval '1 second' AS keep, now() >= first + $4::int * interval '1 second' AS expired
       FROM (SELECT coalesce(first_attempted_at, $5) AS first, attempts FROM webhook_messages WHERE endpoint_id = $1 AND event_id = $2) m
     ),
     kept AS (
       UPDATE webhook_messages m SET attempts = attempts + 1, first_attempted_at = msg.first,
         due_at = least(now() + $3::int * interval '1 millisecond', msg.first + $4::int * interval '1 second')
       FROM msg WHERE m.endpoint_id = $1 AND m.event_id = $2 AND msg.keep
     ),
     dropped AS (
       DELETE FROM webhook_messages m USING msg WHERE m.endpoint_id = $1 AND m.event_id = $2 AND NOT msg.keep
     )
     SELECT keep AS kept, CASE WHEN NOT keep AND expired THEN first END AS expired FROM msg`,
  ),
  // After a failure: failing since the first failure after the last delivery; $3 the window
  // in words, $4 the last outcome's, $5 when a message given up at the end of the window was
  // first attempted (else null): the endpoint is disabled when no attempt has succeeded since
  // then, every attempt having failed for the whole window.
  failed: statement<{ enabled: boolean }>(
    'webhook-messages-failed',
    `UPDATE webhook_endpoints SET
       failing_since = coalesce(failing_since, $2),
       enabled = enabled AND NOT coalesce(coalesce(failing_since, $2) <= $5::timestamptz, false),
       disabled_at = CASE WHEN enabled AND coalesce(failing_since, $2) <= $5::timestamptz THEN now() ELSE disabled_at END,
       disabled_reason = CASE WHEN enabled AND coalesce(failing_since, $2) <= $5::timestamptz
         THEN 'every delivery failed for ' || $3 || ' (from ' || json_instant(coalesce(failing_since, $2)) || '); the last: ' || $4
         ELSE disabled_reason END,
       lease_token = NULL, lease_until = NULL
     WHERE id = $1 RETURNING enabled`,
  ),
  // $2 why: the endpoint is disabled at once and its pending messages dropped.
  disable: statement<Record<string, never>>(
    'webhook-messages-disable',
    `WITH m AS (DELETE FROM webhook_messages WHERE endpoint_id = $1)
     UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2, disabled_at = now(), lease_token = NULL, lease_until = NULL WHERE id = $1`,
  ),
  dropAll: statement<Record<string, never>>('webhook-messages-drop-all', 'DELETE FROM webhook_messages WHERE endpoint_id = $1'),
  // The queue, for the metrics: messages due now and scheduled later (a retry's wait), and
  // how long the oldest due one has been due, in seconds (0: none). At most WINDOW messages
  // per endpoint (src/events/webhooks/dispatch.ts), so the count stays cheap.
  backlog: statement<{ due: number; scheduled: number; oldest_due_seconds: number }>(
    'webhook-messages-backlog',
    `SELECT count(*) FILTER (WHERE due_at <= now())::int AS due, count(*) FILTER (WHERE due_at > now())::int AS scheduled,
       coalesce(extract(epoch FROM now() - min(due_at) FILTER (WHERE due_at <= now())), 0)::float8 AS oldest_due_seconds
     FROM webhook_messages`,
  ),
};

/** The delivery queue, across instances (it lives in the database). */
export interface WebhookBacklog {
  due: number;
  scheduled: number;
  oldestDueSeconds: number;
}

export type Result =
  | { kind: 'delivered'; statusCode: number }
  | { kind: 'gone' }
  | { kind: 'failed'; statusCode?: number; error?: string; delayMs: number };

export interface Finished {
  endpointId: number;
  eventId: number;
  attempt: number;
  attemptedAt: Date;
  durationMs: number;
  result: Result;
}

function inWords(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? '' : 's'}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? '' : 's'}`;
  return `${seconds} second${seconds === 1 ? '' : 's'}`;
}

export function createWebhookMessagesRepository(pool: pg.Pool) {
  return {
    /** The queue now: messages due, scheduled later, and the oldest due one's wait. */
    async backlog(): Promise<WebhookBacklog> {
      const [row] = await query(pool, STATEMENTS.backlog, []);
      return { due: row?.due ?? 0, scheduled: row?.scheduled ?? 0, oldestDueSeconds: row?.oldest_due_seconds ?? 0 };
    },

    /**
     * Takes up to `limit` endpoints' leases for `leaseMs`, each with the message to attempt,
     * leaving each API key at most `perKey` leases in force (across instances).
     */
    async claim(token: string, leaseMs: number, limit: number, perKey: number): Promise<Claimed[]> {
      return inTransaction(pool, async (tx) => {
        await execute(tx, STATEMENTS.lockClaim);
        return query(tx, STATEMENTS.claim, [token, leaseMs, limit, perKey]);
      });
    },

    /** Releases the lease without an attempt, dropping the message (its key may no longer see it, or it is gone). */
    async drop(token: string, endpointId: number, eventId: number): Promise<void> {
      await inTransaction(pool, (tx) => execute(tx, STATEMENTS.drop, [endpointId, eventId, token]));
    },

    /**
     * Writes the attempt, then (while this instance still holds the lease) what follows from
     * it, and releases the lease; nothing when the endpoint was removed meanwhile.
     */
    async finish(token: string, done: Finished, windowSeconds: number): Promise<void> {
      const { endpointId, eventId, result } = done;
      await inTransaction(pool, async (tx) => {
        const [endpoint] = await query(tx, STATEMENTS.lock, [endpointId, token]);
        if (!endpoint) return;
        const statusCode = result.kind === 'delivered' ? result.statusCode : result.kind === 'gone' ? 410 : (result.statusCode ?? null);
        const error = result.kind === 'failed' ? (result.error ?? null) : null;
        await execute(tx, STATEMENTS.log, [endpointId, eventId, done.attempt, statusCode, error, done.durationMs, done.attemptedAt]);
        if (!endpoint.mine) return;
        if (result.kind === 'delivered') return void (await execute(tx, STATEMENTS.delivered, [endpointId, eventId]));
        if (result.kind === 'gone') return void (await execute(tx, STATEMENTS.disable, [endpointId, 'the receiver answered 410 Gone']));
        const [retried] = await query(tx, STATEMENTS.retry, [endpointId, eventId, result.delayMs, windowSeconds, done.attemptedAt]);
        const last = error ?? String(statusCode);
        const [after] = await query(tx, STATEMENTS.failed, [endpointId, done.attemptedAt, inWords(windowSeconds), last, retried?.expired ?? null]);
        if (after && !after.enabled) await execute(tx, STATEMENTS.dropAll, [endpointId]);
      });
    },
  };
}

export type WebhookMessagesRepository = ReturnType<typeof createWebhookMessagesRepository>;
