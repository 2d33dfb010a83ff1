// Prometheus metrics at /metrics (prom-client): per-operation request counts and latency,
// the database pools, rate-limit refusals, idempotent replays, and calls to deprecated
// operations per API key (who still calls getPet before its sunset). Access: METRICS=off
// (no route), open, or token (`Authorization: Bearer <METRICS_TOKEN>`, compared in constant
// time). Not under /v1: it is not part of the contract and is not rate limited.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { bearerOf, challenge, refusals } from '../api-keys/bearer.js';
import { operationOf } from '../contract/spec.js';
import { errorBody } from '../errors/catalogue.js';
import { sendError } from '../errors/answer.js';
import type { DroppedSpans } from '../tracing/tracing.js';

export interface MetricsOptions {
  access: 'off' | 'open' | 'token';
  token?: string;
  pools: Record<string, pg.Pool>;
}

/** What other plugins and middleware count: no-ops when metrics are off. */
export interface MetricsRecorder {
  rateLimited(request: FastifyRequest, by: 'key' | 'address'): void;
  idempotentReplay(operationId: string): void;
  /** A call to a deprecated operation (src/middleware/deprecation.ts), by the caller's key. */
  deprecatedCall(operationId: string, request: FastifyRequest): void;
}

const PREFIX = 'animal_store_';

export function createMetrics(access: MetricsOptions['access'], droppedSpans?: () => DroppedSpans) {
  const registry = new Registry();
  const on = access !== 'off';
  if (on) collectDefaultMetrics({ register: registry, prefix: PREFIX });
  const requests = new Histogram({
    name: `${PREFIX}http_request_duration_seconds`,
    help: 'Time to answer, by operationId (or route) and status; its _count is the number of requests',
    labelNames: ['operation', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: `${PREFIX}rate_limited_total`,
    help: 'Requests refused with 429, by what was counted (an API key or a client address)',
    labelNames: ['operation', 'by'] as const,
    registers: [registry],
  });
  const replays = new Counter({
    name: `${PREFIX}idempotent_replays_total`,
    help: 'Answers replayed for a repeated Idempotency-Key',
    labelNames: ['operation'] as const,
    registers: [registry],
  });
  const deprecated = new Counter({
    name: `${PREFIX}deprecated_calls_total`,
    help: 'Calls to deprecated operations, by API key (id and name; "-" when none was valid)',
    labelNames: ['operation', 'api_key_id', 'api_key_name'] as const,
    registers: [registry],
  });
  if (on && droppedSpans) {
    // Counted by src/tracing/tracing.ts; read at each scrape.
    new Counter({
      name: `${PREFIX}trace_spans_dropped_total`,
      help: 'Spans not exported: the export queue was full (reason "queue_full"), or their export failed ("export_failed")',
      labelNames: ['reason'] as const,
      registers: [registry],
      collect() {
        const dropped = droppedSpans();
        this.reset();
        this.inc({ reason: 'queue_full' }, dropped.queueFull);
        this.inc({ reason: 'export_failed' }, dropped.exportFailed);
      },
    });
  }
  const recorder: MetricsRecorder = {
    rateLimited: (request, by) => on && rateLimited.inc({ operation: operationOf(request), by }),
    idempotentReplay: (operation) => on && replays.inc({ operation }),
    deprecatedCall: (operation, request) => {
      if (!on) return;
      const key = request.apiKey;
      deprecated.inc({ operation, api_key_id: key ? String(key.id) : '-', api_key_name: key ? key.name : '-' });
    },
  };
  return { registry, requests, recorder, on };
}

export type Metrics = ReturnType<typeof createMetrics>;

export default fp(
  async function metricsPlugin(fastify: FastifyInstance, options: MetricsOptions & { metrics: Metrics }) {
    const { metrics } = options;
    if (!metrics.on) return;

    // One gauge for every pool, told apart by the `pool` label (primary, replica): a name is
    // registered once per registry, so a gauge per pool stopped the start with a replica.
    const pools = Object.entries(options.pools);
    new Gauge({
      name: `${PREFIX}db_pool_connections`,
      help: 'Database pool: open connections (total), idle ones, and queries waiting for one',
      labelNames: ['pool', 'state'] as const,
      registers: [metrics.registry],
      collect() {
        for (const [pool, client] of pools) {
          this.set({ pool, state: 'total' }, client.totalCount);
          this.set({ pool, state: 'idle' }, client.idleCount);
          this.set({ pool, state: 'waiting' }, client.waitingCount);
        }
      },
    });

    fastify.addHook('onResponse', (request, reply, done) => {
      metrics.requests.observe({ operation: operationOf(request), method: request.method, status: reply.statusCode }, reply.elapsedTime / 1000);
      done();
    });

    const expected = options.token ? Buffer.from(options.token) : undefined;
    fastify.get('/metrics', async (request, reply) => {
      if (options.access === 'token') {
        // Read as /v1 reads it: two Authorization headers are refused, not the first taken.
        const token = bearerOf(request);
        const given = Buffer.from(typeof token === 'string' ? token : '');
        if (!expected || given.length !== expected.length || !timingSafeEqual(given, expected)) {
          const repeated = token === refusals.repeated;
          const body = errorBody('unauthorized', repeated ? token.message : 'Metrics need Authorization: Bearer <METRICS_TOKEN>');
          return sendError(reply, body, { 'www-authenticate': challenge('metrics', repeated ? token : undefined) });
        }
      }
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
  },
  { name: 'metrics', dependencies: ['api-security-headers'] },
);
