// The application as a plain Fastify plugin, built from injected dependencies (the pool,
// the configuration) so that tests build exactly what production runs.
import type { Server } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyHttpOptions, type FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import { pino } from 'pino';
import './types.js';
import { AccessLog, logAnswerAfterClose } from './access-log.js';
import { createApiKeyVerifier, createKeyUsage } from './auth/apiKeys.js';
import { bearerAuth } from './auth/bearer.js';
import type { Config } from './config.js';
import { BODY_LIMIT, registerJsonBody } from './contract/json-body.js';
import { validatorCompiler } from './contract/validation.js';
import { createApiKeysRepository } from './db/api-keys.js';
import { createCategoriesRepository } from './db/categories.js';
import { createEventsRepository } from './db/events.js';
import { createRecentWriters } from './db/consistency.js';
import { createIdempotencyKeysRepository } from './db/idempotency-keys.js';
import { createInventoryRepository } from './db/inventory.js';
import { createOrdersRepository } from './db/orders.js';
import { createPetsRepository } from './db/pets.js';
import { createServiceSecretsRepository } from './db/service-secrets.js';
import { createNatsRelay } from './events/nats-relay.js';
import { createWebhookDeliveriesRepository } from './db/webhook-deliveries.js';
import { createWebhookDispatchRepository } from './db/webhook-dispatch.js';
import { createWebhookEndpointsRepository } from './db/webhook-endpoints.js';
import { createWebhookMessagesRepository } from './db/webhook-messages.js';
import { bindHandlers } from './handlers/index.js';
import { requestIdOf } from './http-message.js';
import { authentication } from './middleware/authentication.js';
import { deprecation } from './middleware/deprecation.js';
import { idempotency } from './middleware/idempotency.js';
import { queryParameters } from './middleware/query-parameters.js';
import { rateLimit } from './middleware/rate-limit.js';
import { readYourWrites } from './middleware/read-your-writes.js';
import { requiredBody } from './middleware/required-body.js';
import { lazyCursorCodec } from './pagination/cursor.js';
import cors from './plugins/cors.js';
import { nodeServer } from './http/node-server.js';
import { awaitTurn } from './http/pipelining.js';
import { handleClientError } from './http/raw-answers.js';
import errors, { handleFrameworkError } from './plugins/errors.js';
import health from './plugins/health.js';
import jobs from './plugins/jobs.js';
import metricsPlugin, { createMetrics } from './plugins/metrics.js';
import contract from './plugins/openapi-glue.js';
import rateLimits from './plugins/rate-limit.js';
import root from './plugins/root.js';
import securityHeaders from './plugins/security-headers.js';
import servedContract from './plugins/served-contract.js';
import docs, { DOCS_PREFIX } from './plugins/swagger.js';
import loadShedding from './plugins/under-pressure.js';
import { createWebhookEngine } from './webhooks/engine.js';
import { checkUrl, systemResolver, type Resolver } from './webhooks/target.js';


/** Events deleted per statement by the retention job. */
const EVENT_PURGE_BATCH = 1000;

/** What the app reads; DATABASE_URL is the resolved one (the embedded server's, if any). */
export type AppConfig = Config & { DATABASE_URL: string };

export interface AppDeps {
  config: AppConfig;
  /** The primary. */
  pool: pg.Pool;
  /** A streaming replica for listPets/getPet (DATABASE_READ_URL). */
  readPool?: pg.Pool;
  /** A logger to use instead of one built from LOG_LEVEL (tests capture logs this way). */
  logger?: FastifyBaseLogger;
  /**
   * False while start-up work that runs after listening is unfinished (src/server.ts: the
   * development key): /readyz is 503 until then. Without it, ready as soon as listening.
   */
  startedUp?: () => boolean;
  /**
   * How webhook hosts are resolved, at save and at each delivery's connection (default: the
   * system's resolver). Tests give a fake one: they never resolve a real name.
   */
  webhookResolver?: Resolver;
}

/**
 * Log fields pino replaces with `[Redacted]`, wherever a request's headers are logged: the
 * headers that carry credentials. The test logger uses the same (test/helper.ts).
 */
export const LOG_REDACT: readonly string[] = ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie'];

/**
 * The service's logger: JSON lines on stdout, credentials redacted. Lines go out in batches
 * of 4 KiB (or every 250 ms, whichever comes first) instead of one write(2) per line, which
 * cost 11-13 µs per request under load; pino writes out what is buffered when the process
 * exits.
 */
export function createLogger(level: Config['LOG_LEVEL']): FastifyBaseLogger {
  return pino({ level, redact: [...LOG_REDACT] }, pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 250 }));
}

export function serverOptions(deps: AppDeps): FastifyHttpOptions<Server> {
  const logger = deps.logger ?? createLogger(deps.config.LOG_LEVEL);
  return {
    loggerInstance: logger,
    logController: new AccessLog(),
    bodyLimit: BODY_LIMIT,
    // The Node server, which answers a request without Host or with an Expect it does not
    // meet before Fastify sees it (src/http/node-server.ts).
    serverFactory: nodeServer({
      log: logger,
      requestTimeout: deps.config.REQUEST_TIMEOUT_MS,
      // Node checks request timeouts every 30 s by default, so a slow client could hold a
      // connection up to 30 s past REQUEST_TIMEOUT_MS before its 408; check four times per
      // timeout instead (a walk over open connections).
      // Node answers an HTTP/1.1 request without Host with a bare 400 of its own; the
      // server answers it instead, with the Error body.
      // headersTimeout here rather than in src/server.ts, so that tests run the server
      // production runs: with Node 20's default (60 s), a body that stalls is not cut off at
      // requestTimeout.
      http: {
        connectionsCheckingInterval: Math.min(30_000, Math.ceil(deps.config.REQUEST_TIMEOUT_MS / 4)),
        headersTimeout: Math.min(deps.config.REQUEST_TIMEOUT_MS, 20_000),
        requireHostHeader: false,
      },
      keepAliveTimeout: deps.config.KEEP_ALIVE_TIMEOUT_MS,
    }),
    // HEAD is answered wherever GET is (RFC 9110 §9.1, §9.3.2), with GET's status and headers
    // and no body: Fastify adds a HEAD route beside each GET route, with the same hooks.
    exposeHeadRoutes: true,
    // While draining on SIGTERM, Fastify would answer requests that arrive on open
    // keep-alive connections with a 503 of its own (not the contract's Error body). Serve
    // them instead: they get `Connection: close`, and the pool closes after the drain.
    return503OnClosing: false,
    requestIdHeader: false,
    genReqId: requestIdOf,
    // Deep or huge JSON is refused by the body limit; prototype pollution attempts are a 400.
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    frameworkErrors: handleFrameworkError,
    // Node's HTTP parser errors (431, 400, 408) answered with the contract's Error body.
    clientErrorHandler: handleClientError,
    // Any path segment Node accepts (URLs are bounded by its 16 KiB header limit) reaches its
    // route and is validated there (a 500-character petId is a 400, not a routing failure).
    // We have no regex parameters, which is what the default of 100 protects.
    routerOptions: { maxParamLength: 16_384 },
  };
}

export const app = fp(
  async function animalStore(fastify: FastifyInstance, deps: AppDeps) {
    fastify.setValidatorCompiler(validatorCompiler);
    // Only JSON bodies are accepted; anything else is 415, not a string to validate.
    fastify.removeContentTypeParser(['text/plain']);
    registerJsonBody(fastify);

    // First on every request: its id on the answer, a pipelined request's turn
    // (src/http/pipelining.ts). Synchronous (callback style): an async hook costs a promise
    // and a microtask turn per request for no benefit here.
    fastify.addHook('onRequest', (request, reply, done) => {
      reply.header('x-request-id', request.id);
      awaitTurn(request, reply, done);
    });
    // The access log's line for a request whose client left before its answer (src/access-log.ts).
    fastify.addHook('onSend', logAnswerAfterClose);

    // One repository per table (src/db/).
    const pools = { primary: deps.pool, ...(deps.readPool ? { replica: deps.readPool } : {}) };
    const pets = createPetsRepository(pools);
    const orders = createOrdersRepository(deps.pool);
    const inventory = createInventoryRepository(deps.pool);
    const categories = createCategoriesRepository(deps.pool);
    const idempotencyKeys = createIdempotencyKeysRepository(deps.pool);
    const secrets = createServiceSecretsRepository(deps.pool);
    const metrics = createMetrics(deps.config.METRICS);
    const keys = createApiKeysRepository(deps.pool);
    const events = createEventsRepository(deps.pool);
    // Every event also published to NATS JetStream, by one instance at a time (src/events/nats-relay.ts).
    const natsRelay = deps.config.EVENTS_NATS_URL ? createNatsRelay({ url: deps.config.EVENTS_NATS_URL, stream: deps.config.EVENTS_NATS_STREAM, subjectPrefix: deps.config.EVENTS_NATS_SUBJECT_PREFIX }, events) : undefined;
    if (natsRelay) fastify.addHook('onClose', async () => natsRelay.close());
    const apiKeys = await createApiKeyVerifier({ apiKeys: keys, databaseUrl: deps.config.DATABASE_URL, log: fastify.log });
    // Each key's last use, written for all keys every API_KEY_USAGE_FLUSH_MS (a job below)
    // and once more when the app closes, after its last request: never a write per request.
    const keyUsage = createKeyUsage(keys);
    // A key this instance creates, rotates or revokes is in its cache before the answer
    // leaves, so the client's next request here sees it (a new secret works at once).
    const thenRefresh =
      <A extends unknown[], R>(write: (...args: A) => Promise<R>, idOf: (result: R, ...args: A) => number | undefined) =>
      async (...args: A): Promise<R> => {
        const result = await write(...args);
        const id = idOf(result, ...args);
        if (id !== undefined) await apiKeys.refresh(id);
        return result;
      };
    // Webhooks: endpoints (handlers) and the delivery engine (every instance runs it; it
    // shares the work through the database: docs/decisions/0006-webhook-delivery.md).
    const webhookEndpoints = createWebhookEndpointsRepository(deps.pool);
    const webhookDeliveries = createWebhookDeliveriesRepository(deps.pool);
    const resolve = deps.webhookResolver ?? systemResolver;
    const allowPrivate = deps.config.WEBHOOK_ALLOW_PRIVATE;
    const webhookUrls = { check: (url: string) => checkUrl(url, { allowPrivate, resolve }) };
    const webhookEngine = createWebhookEngine({
      dispatch: createWebhookDispatchRepository(events, deps.pool),
      messages: createWebhookMessagesRepository(deps.pool),
      resolve,
      allowPrivate,
      timeoutMs: deps.config.WEBHOOK_TIMEOUT_MS,
      schedule: deps.config.WEBHOOK_RETRY_SCHEDULE_SECONDS.split(',').map(Number),
      windowSeconds: deps.config.WEBHOOK_RETRY_WINDOW_SECONDS,
      concurrency: deps.config.WEBHOOK_CONCURRENCY,
      pollMs: deps.config.WEBHOOK_POLL_MS,
      log: fastify.log,
    });
    fastify.addHook('onReady', async () => webhookEngine.start());
    fastify.addHook('onClose', async () => webhookEngine.stop());
    const keysSeenAtOnce = {
      ...keys,
      createCapped: thenRefresh(keys.createCapped, (key) => key?.id),
      rotate: thenRefresh(keys.rotate, (_, id) => id),
      revoke: thenRefresh(keys.revoke, (_, id) => id),
    };
    fastify.addHook('onClose', async () => {
      await apiKeys.close();
      await keyUsage.flush().catch((error: unknown) => fastify.log.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, 'api keys last used: not written at close'));
    });

    // Each plugin declares the plugins it needs registered first (fastify-plugin
    // `dependencies`): registered out of order, the app does not start.
    await fastify.register(errors);
    await fastify.register(securityHeaders, { pagesPrefix: DOCS_PREFIX });
    await fastify.register(metricsPlugin, {
      metrics,
      access: deps.config.METRICS,
      ...(deps.config.METRICS_TOKEN ? { token: deps.config.METRICS_TOKEN } : {}),
      pools: { primary: deps.pool, ...(deps.readPool ? { replica: deps.readPool } : {}) },
    });
    await fastify.register(cors, { origins: deps.config.CORS_ORIGINS });
    await fastify.register(loadShedding, { maxEventLoopDelay: deps.config.MAX_EVENT_LOOP_DELAY_MS });
    await fastify.register(health, { pool: deps.pool, ...(deps.startedUp ? { startedUp: deps.startedUp } : {}) });
    await fastify.register(rateLimits, {
      apiKeys,
      max: deps.config.RATE_LIMIT_MAX,
      anonymousMax: deps.config.RATE_LIMIT_ANONYMOUS_MAX,
      windowMs: deps.config.RATE_LIMIT_WINDOW_MS,
      onExceeded: metrics.recorder.rateLimited,
      ...(deps.config.REDIS_URL ? { redisUrl: deps.config.REDIS_URL, redisPrefix: deps.config.REDIS_PREFIX } : {}),
    });
    await fastify.register(root, { docsPrefix: DOCS_PREFIX });
    await fastify.register(servedContract, { publicUrl: deps.config.PUBLIC_URL });
    await fastify.register(docs, { publicUrl: deps.config.PUBLIC_URL });
    // Work each instance does with no request: the store's expiry within 2 s of expiresAt
    // (every instance runs it; each order is expired once), the inventory's totals, the
    // API keys' last use, the idempotency keys' and the events' retention, and the NATS relay
    // (one instance at a time publishes).
    const counted = (what: string) => (n: number) => (n > 0 ? `${what}: ${n}` : undefined);
    await fastify.register(jobs, {
      jobs: [
        { name: 'orders expiry', everyMs: 500, run: async () => counted('expired placed orders')(await orders.expireDue()) },
        { name: 'inventory fold', everyMs: 1000, run: async () => void (await inventory.fold()) },
        { name: 'api keys last used', everyMs: deps.config.API_KEY_USAGE_FLUSH_MS, run: async () => void (await keyUsage.flush()) },
        { name: 'webhook attempts purge', everyMs: 60 * 60 * 1000, run: async () => counted('purged webhook delivery attempts')(await webhookDeliveries.purge(deps.config.EVENT_RETENTION_DAYS)) },
        { name: 'webhook previous secrets', everyMs: 60 * 60 * 1000, run: async () => counted('forgot expired previous webhook secrets')(await webhookEndpoints.forgetExpiredSecrets()) },
        { name: 'idempotency keys purge', everyMs: 60 * 60 * 1000, run: async () => counted('purged expired idempotency keys')(await idempotencyKeys.purge()) },
        // Events older than EVENT_RETENTION_DAYS, oldest first, in batches (src/db/events.ts).
        { name: 'events retention', everyMs: 60 * 1000, run: async () => counted('deleted events past retention')(await events.purge(deps.config.EVENT_RETENTION_DAYS, EVENT_PURGE_BATCH)) },
        ...(natsRelay ? [{ name: 'events to NATS', everyMs: 250, run: async () => counted('events published to NATS')(await natsRelay.run()) }] : []),
      ],
    });
    // Every operation of the contract, its handler wrapped in its middleware, outermost
    // first: each middleware applies to the operations the contract says it does.
    await fastify.register(contract, {
      handlers: bindHandlers({ pets, orders, inventory, categories, apiKeys: keysSeenAtOnce, events, eventRetentionDays: deps.config.EVENT_RETENTION_DAYS, cursors: lazyCursorCodec(() => secrets.get('cursor')), orderHoldSeconds: deps.config.ORDER_HOLD_SECONDS, apiKeyLimit: deps.config.API_KEY_LIMIT, webhookEndpoints, webhookDeliveries, webhookUrls }),
      middleware: [
        deprecation({ onCall: metrics.recorder.deprecatedCall }),
        rateLimit(fastify.rateLimit()),
        authentication({ bearerAuth: bearerAuth(apiKeys, keyUsage) }),
        queryParameters(),
        requiredBody(),
        idempotency({ keys: idempotencyKeys, pool: deps.pool, onReplay: metrics.recorder.idempotentReplay }),
        readYourWrites(createRecentWriters(deps.config.READ_YOUR_WRITES_MS, deps.readPool !== undefined)),
      ],
    });
  },
  { name: 'animal-store' },
);

/** A ready-to-listen (or inject) instance. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const fastify = Fastify(serverOptions(deps));
  await fastify.register(app, deps);
  await fastify.ready();
  return fastify;
}
