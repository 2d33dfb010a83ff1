// The application as a plain Fastify plugin, built from injected dependencies (the pools,
// the configuration) so that tests build exactly what production runs. It composes the
// feature plugins, as fastify/demo does: each declares the plugins it needs registered
// first (fastify-plugin `dependencies`; registered out of order, the app does not start)
// and decorates the instance with what it provides, which handlers then use.
import type { Server } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyHttpOptions, type FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import { pino } from 'pino';
import { handlers } from '../generated/handlers.js';
import { bearerAuth } from './api-keys/bearer.js';
import apiKeys from './api-keys/plugin.js';
import catalogue from './catalogue/plugin.js';
import type { Config } from './config.js';
import { BODY_LIMIT } from './errors/media-type.js';
import { registerJsonBody } from './routes/json-body.js';
import contract from './routes/plugin.js';
import { validatorCompiler } from './routes/validation.js';
import { createRecentWriters } from './db/consistency.js';
import database from './db/plugin.js';
import errors, { handleFrameworkError } from './errors/plugin.js';
import { handleClientError } from './errors/raw-answers.js';
import events from './events/plugin.js';
import type { Resolver } from './events/webhooks/target.js';
import { AccessLog, logAnswerAfterClose } from './http/access-log.js';
import { requestIdOf } from './http/message.js';
import { nodeServer } from './errors/node-server.js';
import { awaitTurn } from './http/pipelining.js';
import securityHeaders from './http/security-headers.js';
import jobs from './jobs/plugin.js';
import { authentication } from './middleware/authentication.js';
import { deprecation } from './middleware/deprecation.js';
import { continueBeforeBody, expectContinue } from './middleware/expect-continue.js';
import { idempotency } from './middleware/idempotency.js';
import idempotencyKeys from './middleware/idempotency-keys.js';
import { queryParameters } from './middleware/query-parameters.js';
import rateLimits, { rateLimit } from './middleware/rate-limit.js';
import { readYourWrites } from './middleware/read-your-writes.js';
import { requiredBody } from './middleware/required-body.js';
import pagination from './pagination/plugin.js';
import cors from './plugins/cors.js';
import health from './plugins/health.js';
import metricsPlugin, { createMetrics } from './plugins/metrics.js';
import root from './plugins/root.js';
import servedContract from './plugins/served-contract.js';
import docs, { DOCS_PREFIX, REDOC_PATH } from './plugins/swagger.js';
import loadShedding from './plugins/under-pressure.js';
import store from './store/plugin.js';
import type { Tracing } from './tracing/tracing.js';

/** What the app reads; DATABASE_URL is the resolved one (the embedded server's, if any). */
export type AppConfig = Config & { DATABASE_URL: string };

declare module 'fastify' {
  interface FastifyInstance {
    /** The settings, checked once at start-up (src/config.ts). */
    config: AppConfig;
  }
}

export interface AppDeps {
  config: AppConfig;
  /** The primary. */
  pool: pg.Pool;
  /** A streaming replica for listPets/getPet (DATABASE_READ_URL). */
  readPool?: pg.Pool;
  /** Tracing, when src/server.ts started it: the server span of each request. */
  tracing?: Tracing;
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
 * of 4 KiB (or every 250 ms, whichever comes first), not one write(2) per line; pino writes
 * out what is buffered when the process exits, so no line is lost by a graceful stop.
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
    // The Node server, which answers before Fastify sees them a request without Host or
    // with two, CONNECT, a transfer coding other than chunked, an Expect it does not meet,
    // and hands over one that expects 100-continue unanswered (src/errors/node-server.ts).
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
    // Before any route (fastify/otel #12): each request's server span.
    if (deps.tracing) await fastify.register(deps.tracing.fastifyPlugin);
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
    // The access log's line for a request whose client left before its answer (src/http/access-log.ts).
    fastify.addHook('onSend', logAnswerAfterClose);
    // `100 Continue`, after the operation's checks, as the body is about to be read.
    fastify.addHook('preParsing', continueBeforeBody);

    fastify.decorate('config', deps.config);
    const pools = { primary: deps.pool, ...(deps.readPool ? { replica: deps.readPool } : {}) };
    const metrics = createMetrics(deps.config.METRICS, deps.tracing?.droppedSpans);

    // The service around the operations: errors, headers, metrics, probes, load shedding.
    await fastify.register(errors);
    await fastify.register(securityHeaders, { pagesPrefix: DOCS_PREFIX });
    await fastify.register(metricsPlugin, { metrics, access: deps.config.METRICS, ...(deps.config.METRICS_TOKEN ? { token: deps.config.METRICS_TOKEN } : {}), pools });
    await fastify.register(cors, { origins: deps.config.CORS_ORIGINS });
    await fastify.register(loadShedding, { maxEventLoopDelay: deps.config.MAX_EVENT_LOOP_DELAY_MS });
    await fastify.register(health, { pool: deps.pool, ...(deps.startedUp ? { startedUp: deps.startedUp } : {}) });

    // The features: each its repositories, and the work it does on a timer.
    await fastify.register(database, pools);
    await fastify.register(jobs, { onRun: metrics.recorder.jobRun });
    await fastify.register(apiKeys);
    await fastify.register(catalogue, { onImportRows: metrics.recorder.petImportRows, onImportFinished: metrics.recorder.petImportFinished });
    await fastify.register(store);
    await fastify.register(events, { onWebhookAttempt: metrics.recorder.webhookAttempt, ...(deps.webhookResolver ? { resolver: deps.webhookResolver } : {}) });
    metrics.watch({ jobLags: () => fastify.jobs.lags(), webhookBacklog: () => fastify.webhookBacklog(), petImports: () => fastify.petImports.open() }, fastify.log);
    await fastify.register(pagination);
    await fastify.register(idempotencyKeys);

    await fastify.register(rateLimits, {
      apiKeys: fastify.apiKeyVerifier,
      max: deps.config.RATE_LIMIT_MAX,
      anonymousMax: deps.config.RATE_LIMIT_ANONYMOUS_MAX,
      windowMs: deps.config.RATE_LIMIT_WINDOW_MS,
      onExceeded: metrics.recorder.rateLimited,
      ...(deps.config.REDIS_URL ? { redisUrl: deps.config.REDIS_URL, redisPrefix: deps.config.REDIS_PREFIX } : {}),
    });
    await fastify.register(root, { docsPrefix: DOCS_PREFIX, redocPath: REDOC_PATH });
    await fastify.register(servedContract, { publicUrl: deps.config.PUBLIC_URL });
    await fastify.register(docs, { publicUrl: deps.config.PUBLIC_URL });
    // Every operation of the contract, its handler (generated/handlers.ts) wrapped in its
    // middleware, outermost first: each middleware applies to the operations the contract
    // says it does.
    await fastify.register(contract, {
      handlers,
      middleware: [
        deprecation({ onCall: metrics.recorder.deprecatedCall }),
        rateLimit(fastify.spendRateLimit()),
        authentication({ bearerAuth: bearerAuth(fastify.apiKeyVerifier, fastify.keyUsage) }),
        expectContinue({ streamedBodyLimit: deps.config.IMPORT_MAX_BYTES }),
        queryParameters(),
        requiredBody(),
        idempotency({ keys: fastify.idempotencyKeys, pool: deps.pool, onReplay: metrics.recorder.idempotentReplay }),
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
