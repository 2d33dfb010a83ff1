// The webhook_deliveries table: every delivery attempt, written by the engine
// (src/events/webhooks/messages.ts, `finish`), listed per endpoint by id. Rows join the append
// order partitioned by endpoint (docs/decisions/0001-append-order.md), so a page never
// skips an attempt that another instance is still committing.
import type { components } from '../../../generated/v1.js';
import { appendOrdered, finalPage } from '../../db/append-order.js';
import { equalPrefixPage } from '../../db/keyset.js';
import { columns, execute, query, statement, type Queryable } from '../../db/query.js';

/** Deliveries are paged per endpoint (migration 1763700000015). */
const DELIVERIES = appendOrdered('webhook_deliveries', 'endpoint_id');

export type WebhookDelivery = components['schemas']['WebhookDelivery'];

const { list: C } = columns(['id', 'event_id', 'attempt', 'status_code', 'error', 'duration_ms', 'attempted_at']);
interface DeliveryRow {
  id: number;
  event_id: number;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: Date;
}

function toDelivery(row: DeliveryRow): WebhookDelivery {
  const delivery: WebhookDelivery = { id: row.id, eventId: row.event_id, attempt: row.attempt, durationMs: row.duration_ms, attemptedAt: row.attempted_at.toISOString() };
  if (row.status_code !== null) delivery.statusCode = row.status_code;
  if (row.error !== null) delivery.error = row.error;
  return delivery;
}

const OF_ENDPOINT = equalPrefixPage([['endpoint_id', '$1']], '$2');
export const DELIVERY_STATEMENTS = {
  // A page of one endpoint's attempts ($1 endpoint, $2 after, $3 size), by its index
  // (src/db/keyset.ts, `equalPrefixPage`).
  list: statement<DeliveryRow & { final: boolean }>(
    'webhook-deliveries-list',
    `SELECT ${C}, ${DELIVERIES.isFinal('$1')} AS final FROM webhook_deliveries WHERE ${OF_ENDPOINT.where} ORDER BY ${OF_ENDPOINT.order} LIMIT $3::int + 1`,
  ),
  // Attempts older than $1 days (they are kept as long as events are).
  purge: statement<Record<string, never>>('webhook-deliveries-purge', `DELETE FROM webhook_deliveries WHERE attempted_at < now() - $1::int * interval '1 day'`),
};

export function createWebhookDeliveriesRepository(primary: Queryable) {
  return {
    /** At most `limit` attempts of the endpoint after `after`, up to where every one is final, and where the next page starts. */
    async list(endpointId: number, after: number, limit: number): Promise<{ deliveries: WebhookDelivery[]; next: number | undefined }> {
      const page = finalPage(await query(primary, DELIVERY_STATEMENTS.list, [endpointId, after, limit]), limit, after);
      return { deliveries: page.rows.map(toDelivery), next: page.next };
    },

    /** Removes attempts older than `days`; how many. */
    async purge(days: number): Promise<number> {
      return execute(primary, DELIVERY_STATEMENTS.purge, [days]);
    },
  };
}

export type WebhookDeliveriesRepository = ReturnType<typeof createWebhookDeliveriesRepository>;
