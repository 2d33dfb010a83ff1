// Prometheus metrics at /metrics (prom-client): per-operation request counts and latency,
// the database pools, rate-limit refusals, idempotent replays, calls to deprecated
// operations per API key (who still calls getPet before its sunset), the timed jobs' runs
// and lag, webhook delivery attempts and the delivery queue, and imports (rows, ends, those
// waiting). The dashboard and alert
// rules that read them are in ops/ (docs/production.md). Access: METRICS=off
// (no route), open, or token (`Authorization: Bearer <METRICS_TOKEN>`, compared in constant
// time). Not under /v1: it is not part of the contract and is not rate limited.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { bearerOf, challenge, refusals } from '../api-keys/bearer.js';
import { operationOf } from '../contract/spec.js';
import { errorBody } from '../errors/catalogue.js';
import { sendError } from '../errors/answer.js';
import type { DroppedSpans } from '../tracing/tracing.js';
import { failureLog } from '../jobs/failures.js';

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
  /** A timed job's run (src/jobs/plugin.ts). */
  jobRun(job: string, outcome: 'ok' | 'failed'): void;
  /** A webhook delivery attempt (src/events/webhooks/engine.ts): delivered, failed (to be retried or given up), or gone (410). */
  webhookAttempt(outcome: WebhookOutcome): void;
  /** Rows a batch of an import added and refused (src/catalogue/pet-import-worker.ts). */
  petImportRows(imported: number, refused: number): void;
  /** An import ended: succeeded or failed by its worker, cancelled by cancelPetImport. */
  petImportFinished(status: 'succeeded' | 'failed' | 'cancelled'): void;
}

const WEBHOOK_OUTCOMES = ['delivered', 'failed', 'gone'] as const;
type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

/** What the gauges read at each scrape. */
export interface MetricsSources {
  /** Each started job's lag in seconds (src/jobs/plugin.ts). */
  jobLags(): { job: string; seconds: number }[];
  /** The webhook delivery queue, across instances (a read of the database). */
  webhookBacklog(): Promise<{ due: number; scheduled: number; oldestDueSeconds: number }>;
  /** The imports not ended, across instances (a read of the database). */
  petImports(): Promise<{ queued: number; running: number; oldestQueuedSeconds: number }>;
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
  const jobRuns = new Counter({
    name: `${PREFIX}job_runs_total`,
    // `name`, not `job`: Prometheus gives every scraped series a `job` label of its own.
    help: 'Runs of the timed jobs, by job name and outcome (ok, failed)',
    labelNames: ['name', 'outcome'] as const,
    registers: [registry],
  });
  const webhookAttempts = new Counter({
    name: `${PREFIX}webhook_attempts_total`,
    help: 'Webhook delivery attempts by this instance, by outcome: delivered (2xx), failed (any other answer or none; retried or given up), gone (410, the endpoint disabled)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  // Every outcome from zero, so that a rate over them exists before the first failure.
  if (on) for (const outcome of WEBHOOK_OUTCOMES) webhookAttempts.inc({ outcome }, 0);
  const importRows = new Counter({
    name: `${PREFIX}pet_import_rows_total`,
    help: 'Rows of imports committed by this instance, by outcome: imported (a pet added) or refused',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const importsFinished = new Counter({
    name: `${PREFIX}pet_imports_finished_total`,
    help: 'Imports ended on this instance, by status: succeeded, failed, cancelled',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  if (on) {
    for (const outcome of ['imported', 'refused']) importRows.inc({ outcome }, 0);
    for (const status of ['succeeded', 'failed', 'cancelled']) importsFinished.inc({ status }, 0);
  }
  const recorder: MetricsRecorder = {
    rateLimited: (request, by) => on && rateLimited.inc({ operation: operationOf(request), by }),
    idempotentReplay: (operation) => on && replays.inc({ operation }),
    deprecatedCall: (operation, request) => {
      if (!on) return;
      const key = request.apiKey;
      deprecated.inc({ operation, api_key_id: key ? String(key.id) : '-', api_key_name: key ? key.name : '-' });
    },
    jobRun: (job, outcome) => on && jobRuns.inc({ name: job, outcome }),
    webhookAttempt: (outcome) => on && webhookAttempts.inc({ outcome }),
    petImportRows: (imported, refused) => {
      if (!on) return;
      importRows.inc({ outcome: 'imported' }, imported);
      importRows.inc({ outcome: 'refused' }, refused);
    },
    petImportFinished: (status) => on && importsFinished.inc({ status }),
  };

  /** Registers the gauges read from the jobs, the webhook queue and the imports at each scrape (once the app has them). */
  function watch(sources: MetricsSources, log: Pick<FastifyBaseLogger, 'warn' | 'info'>): void {
    if (!on) return;
    new Gauge({
      name: `${PREFIX}job_lag_seconds`,
      help: 'How far each timed job (by name) is past its interval since the start of its last run that worked (0: on time)',
      labelNames: ['name'] as const,
      registers: [registry],
      collect() {
        for (const { job, seconds } of sources.jobLags()) this.set({ name: job }, seconds);
      },
    });
    // A scrape while the database is away still answers, with the gauges' last values; the
    // failure is logged once, and again when the database can be read again.
    const failures = failureLog(log, 'metrics: ');
    /** One read of `source` per scrape, shared by the gauges that use it (a scrape collects them at once). */
    const perScrape = <T>(what: string, source: () => Promise<T>) => {
      let reading: Promise<T> | undefined;
      return async (use: (value: T) => void): Promise<void> => {
        try {
          use(
            await (reading ??= source().finally(() => {
              reading = undefined;
            })),
          );
          failures.works(what);
        } catch (error) {
          failures.failed(what, error);
        }
      };
    };
    const read = perScrape('reading the webhook queue', () => sources.webhookBacklog());
    const readImports = perScrape('reading the imports', () => sources.petImports());
    new Gauge({
      name: `${PREFIX}pet_imports_open`,
      help: 'Imports not ended, across instances, by status: queued (stored, no worker has taken it yet) or running',
      labelNames: ['status'] as const,
      registers: [registry],
      async collect() {
        await readImports((i) => {
          this.set({ status: 'queued' }, i.queued);
          this.set({ status: 'running' }, i.running);
        });
      },
    });
    new Gauge({
      name: `${PREFIX}pet_import_oldest_queued_seconds`,
      help: 'How long the oldest queued import has waited for a worker, across instances (0: none queued)',
      registers: [registry],
      async collect() {
        await readImports((i) => this.set(i.oldestQueuedSeconds));
      },
    });
    new Gauge({
      name: `${PREFIX}webhook_messages`,
      help: 'Webhook messages waiting to be delivered, across instances: due now, or scheduled later (a retry waiting)',
      labelNames: ['state'] as const,
      registers: [registry],
      async collect() {
        await read((b) => {
          this.set({ state: 'due' }, b.due);
          this.set({ state: 'scheduled' }, b.scheduled);
        });
      },
    });
    new Gauge({
      name: `${PREFIX}webhook_oldest_due_seconds`,
      help: 'How long the oldest due webhook message has been due, across instances (0: none due)',
      registers: [registry],
      async collect() {
        await read((b) => this.set(b.oldestDueSeconds));
      },
    });
  }

  return { registry, requests, recorder, on, watch };
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
      name: `${PREFIX}db_pool_max_connections`,
      help: 'Database pool: the most connections it opens (its size); open connections over this is its saturation',
      labelNames: ['pool'] as const,
      registers: [metrics.registry],
      collect() {
        for (const [pool, client] of pools) this.set({ pool }, client.options.max ?? 10);
      },
    });
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
