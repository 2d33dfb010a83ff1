// The webhook_endpoints table: each API key's endpoints. The signing secret is stored as it
// is (an HMAC key must be usable to sign; docs/security.md) and returned only by `create`
// and `rotate`, the two answers that show it, and by the engine's claim
// (src/events/webhooks/messages.ts). Endpoints join the append order partitioned by their key
// (docs/decisions/0001-append-order.md): listWebhookEndpoints pages a key's own by id.
import type pg from 'pg';
import type { components } from '../../../generated/v1.js';
import { appendOrdered, finalPage } from '../../db/append-order.js';
import { NEWEST_POSITION, type EventType } from '../feed.js';
import { endpointRelaySql } from './dispatch.js';
import { equalPrefixPage } from '../../db/keyset.js';
import { columns, execute, query, statement } from '../../db/query.js';
import { inTransaction } from '../../db/transaction.js';

/** Endpoints are paged per API key (migration 1763700000015). */
const ENDPOINTS = appendOrdered('webhook_endpoints', 'api_key_id');

export type WebhookEndpoint = components['schemas']['WebhookEndpoint'];

/** How many endpoints one API key may have (as Stripe allows). */
export const ENDPOINTS_PER_KEY = 16;

const { list: C } = columns(['id', 'url', 'event_types', 'description', 'enabled', 'disabled_reason', 'disabled_at', 'created_at', 'previous_secret_expires_at']);
interface EndpointRow {
  id: number;
  url: string;
  event_types: EventType[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: Date | null;
  created_at: Date;
  previous_secret_expires_at: Date | null;
}

/** The endpoint as the contract shows it: unset fields absent; the previous secret's expiry while it still signs. */
function toEndpoint(row: EndpointRow, now = Date.now()): WebhookEndpoint {
  const endpoint: WebhookEndpoint = { id: row.id, url: row.url, eventTypes: row.event_types, enabled: row.enabled, createdAt: row.created_at.toISOString() };
  if (row.description !== null) endpoint.description = row.description;
  if (row.disabled_reason !== null) endpoint.disabledReason = row.disabled_reason;
  if (row.disabled_at !== null) endpoint.disabledAt = row.disabled_at.toISOString();
  if (row.previous_secret_expires_at !== null && row.previous_secret_expires_at.getTime() > now) endpoint.previousSecretExpiresAt = row.previous_secret_expires_at.toISOString();
  return endpoint;
}

const OF_KEY = equalPrefixPage([['api_key_id', '$1']], '$2');
const STATEMENTS = {
  // The key's row, locked until the insert commits: endpoints of one key are created one at
  // a time, so that the count below sees every one committed before.
  lockKey: statement<{ id: number }>('webhook-endpoints-lock-key', 'SELECT id FROM api_keys WHERE id = $1 FOR NO KEY UPDATE'),
  // $6 the most endpoints a key may have: no row when it has that many already.
  insert: statement<EndpointRow>(
    'webhook-endpoints-insert',
    `INSERT INTO webhook_endpoints (api_key_id, url, event_types, description, secret)
     SELECT $1, $2, $3, $4, $5 WHERE (SELECT count(*) FROM webhook_endpoints WHERE api_key_id = $1) < $6::int
     RETURNING ${C}`,
  ),
  // The endpoint's relay (src/events/webhooks/dispatch.ts), made with it: it starts after the
  // newest events, so the endpoint takes the events written from its creation on.
  startRelay: statement<Record<string, never>>('webhook-endpoints-start-relay', `INSERT INTO event_relays (name, position, holds_retention) VALUES (${endpointRelaySql('$1::bigint')}, ${NEWEST_POSITION}, false)`),
  // On enabling again: the relay skips what was written while the endpoint was disabled.
  restartRelay: statement<Record<string, never>>(
    'webhook-endpoints-restart-relay',
    `UPDATE event_relays SET position = greatest(position, ${NEWEST_POSITION}), ran_at = now() WHERE name = ${endpointRelaySql('$1::bigint')}`,
  ),
  // Deleted before the endpoint, so that a relay step under way (it holds the relay's row,
  // and its messages' foreign key then waits on the endpoint's row) finishes first.
  dropRelay: statement<{ id: number }>(
    'webhook-endpoints-drop-relay',
    `WITH endpoint AS (SELECT id FROM webhook_endpoints WHERE id = $2 AND api_key_id = $1),
     dropped AS (DELETE FROM event_relays WHERE name = (SELECT ${endpointRelaySql('id')} FROM endpoint))
     SELECT id FROM endpoint`,
  ),
  // Locks taken in the order every writer takes them: the relay's row, then the endpoint's
  // (a relay step holds its row and its messages' foreign key then waits on the endpoint's).
  lockRelay: statement<Record<string, never>>('webhook-endpoints-lock-relay', `SELECT FROM event_relays WHERE name = ${endpointRelaySql('$1::bigint')} FOR UPDATE`),
  enabled: statement<{ enabled: boolean }>('webhook-endpoints-enabled', 'SELECT enabled FROM webhook_endpoints WHERE id = $2 AND api_key_id = $1 FOR NO KEY UPDATE'),
  count: statement<{ n: number }>('webhook-endpoints-count', 'SELECT count(*)::int AS n FROM webhook_endpoints WHERE api_key_id = $1'),
  get: statement<EndpointRow>('webhook-endpoints-get', `SELECT ${C} FROM webhook_endpoints WHERE id = $2 AND api_key_id = $1`),
  // A page of one key's endpoints, by its index (src/db/keyset.ts, `equalPrefixPage`).
  list: statement<EndpointRow & { final: boolean }>(
    'webhook-endpoints-list',
    `SELECT ${C}, ${ENDPOINTS.isFinal('$1')} AS final FROM webhook_endpoints WHERE ${OF_KEY.where} ORDER BY ${OF_KEY.order} LIMIT $3::int + 1`,
  ),
  // A merge patch: $3 url, $4 event types, $5 whether description is given and $6 its value
  // (null removes it), $7 enabled. Enabling a disabled endpoint delivers events created
  // from now on and clears why it was disabled; disabling drops its pending deliveries.
  update: statement<EndpointRow>(
    'webhook-endpoints-update',
    `WITH changed AS (
       UPDATE webhook_endpoints SET
         url = coalesce($3, url),
         event_types = coalesce($4::text[], event_types),
         description = CASE WHEN $5::boolean THEN $6 ELSE description END,
         enabled = coalesce($7::boolean, enabled),
         enabled_at = CASE WHEN $7::boolean AND NOT enabled THEN now() ELSE enabled_at END,
         disabled_reason = CASE WHEN $7::boolean THEN NULL ELSE disabled_reason END,
         disabled_at = CASE WHEN $7::boolean THEN NULL WHEN NOT $7::boolean AND enabled THEN now() ELSE disabled_at END,
         failing_since = CASE WHEN $7::boolean AND NOT enabled THEN NULL ELSE failing_since END
       WHERE id = $2 AND api_key_id = $1
       RETURNING ${C}
     ), dropped AS (
       DELETE FROM webhook_messages m USING changed c WHERE m.endpoint_id = c.id AND NOT c.enabled
     )
     SELECT * FROM changed`,
  ),
  // Its messages and attempt log go with it (ON DELETE CASCADE).
  delete: statement<{ id: number }>('webhook-endpoints-delete', 'DELETE FROM webhook_endpoints WHERE id = $2 AND api_key_id = $1 RETURNING id'),
  // $3 the new secret, $4 seconds the replaced one keeps signing.
  rotate: statement<EndpointRow>(
    'webhook-endpoints-rotate',
    `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = now() + $4::int * interval '1 second', secret = $3
     WHERE id = $2 AND api_key_id = $1 RETURNING ${C}`,
  ),
  // A previous secret whose 24 hours are over is not kept (the engine's claim clears it too).
  forgetSecrets: statement<Record<string, never>>(
    'webhook-endpoints-forget-secrets',
    'UPDATE webhook_endpoints SET previous_secret = NULL, previous_secret_expires_at = NULL WHERE previous_secret_expires_at <= now()',
  ),
};

export interface NewEndpoint {
  apiKeyId: number;
  url: string;
  eventTypes: readonly EventType[];
  description?: string;
  secret: string;
}

export interface EndpointPatch {
  url?: string;
  eventTypes?: readonly EventType[];
  description?: string | null;
  enabled?: boolean;
}

export function createWebhookEndpointsRepository(primary: pg.Pool) {
  return {
    /** The new endpoint, or undefined when its key has ENDPOINTS_PER_KEY already. */
    async create(endpoint: NewEndpoint): Promise<WebhookEndpoint | undefined> {
      return inTransaction(primary, async (tx) => {
        await query(tx, STATEMENTS.lockKey, [endpoint.apiKeyId]);
        const [row] = await query(tx, STATEMENTS.insert, [endpoint.apiKeyId, endpoint.url, endpoint.eventTypes, endpoint.description ?? null, endpoint.secret, ENDPOINTS_PER_KEY]);
        if (row) await execute(tx, STATEMENTS.startRelay, [row.id]);
        return row && toEndpoint(row);
      });
    },

    /** Whether the key has ENDPOINTS_PER_KEY endpoints already (`create` decides for good). */
    async full(apiKeyId: number): Promise<boolean> {
      const [row] = await query(primary, STATEMENTS.count, [apiKeyId]);
      return (row?.n ?? 0) >= ENDPOINTS_PER_KEY;
    },

    async get(apiKeyId: number, id: number): Promise<WebhookEndpoint | undefined> {
      const [row] = await query(primary, STATEMENTS.get, [apiKeyId, id]);
      return row && toEndpoint(row);
    },

    /** At most `limit` of the key's endpoints after `after`, up to where every one is final, and where the next page starts. */
    async list(apiKeyId: number, after: number, limit: number): Promise<{ endpoints: WebhookEndpoint[]; next: number | undefined }> {
      const page = finalPage(await query(primary, STATEMENTS.list, [apiKeyId, after, limit]), limit, after);
      const now = Date.now();
      return { endpoints: page.rows.map((row) => toEndpoint(row, now)), next: page.next };
    },

    async update(apiKeyId: number, id: number, patch: EndpointPatch): Promise<WebhookEndpoint | undefined> {
      return inTransaction(primary, async (tx) => {
        // Enabling may move the relay (below): its row is locked first.
        if (patch.enabled === true) await execute(tx, STATEMENTS.lockRelay, [id]);
        const [before] = await query(tx, STATEMENTS.enabled, [apiKeyId, id]);
        if (!before) return undefined;
        const [row] = await query(tx, STATEMENTS.update, [
          apiKeyId,
          id,
          patch.url ?? null,
          patch.eventTypes ?? null,
          patch.description !== undefined,
          patch.description ?? null,
          patch.enabled ?? null,
        ]);
        if (row && row.enabled && !before.enabled) await execute(tx, STATEMENTS.restartRelay, [id]);
        return row && toEndpoint(row);
      });
    },

    /** Removes the endpoint; false when the key has none with this id. */
    async delete(apiKeyId: number, id: number): Promise<boolean> {
      return inTransaction(primary, async (tx) => {
        if ((await query(tx, STATEMENTS.dropRelay, [apiKeyId, id])).length === 0) return false;
        return (await query(tx, STATEMENTS.delete, [apiKeyId, id])).length > 0;
      });
    },

    /** Gives the endpoint `secret`; the one it replaces signs too for `graceSeconds`. */
    async rotate(apiKeyId: number, id: number, secret: string, graceSeconds: number): Promise<WebhookEndpoint | undefined> {
      const [row] = await query(primary, STATEMENTS.rotate, [apiKeyId, id, secret, graceSeconds]);
      return row && toEndpoint(row);
    },

    /** Clears the previous secrets whose time is over; how many. */
    async forgetExpiredSecrets(): Promise<number> {
      return execute(primary, STATEMENTS.forgetSecrets, []);
    },
  };
}

export type WebhookEndpointsRepository = ReturnType<typeof createWebhookEndpointsRepository>;
