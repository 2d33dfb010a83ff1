// Events as a feature of the app: the feed (src/events/feed.ts) and everything that delivers
// it. Every change's event is written by a trigger in the change's transaction; from there
// - listEvents and getEvent read the feed;
// - the NATS relay (EVENTS_NATS_URL) publishes every event to JetStream, one instance at a
//   time (src/events/nats.ts);
// - webhook endpoints get theirs POSTed and signed by the delivery engine every instance
//   runs, sharing the work through the database (src/events/webhooks/,
//   docs/decisions/0006-webhook-delivery.md).
// Events older than EVENT_RETENTION_DAYS are deleted, oldest first, in batches.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { counted } from '../jobs/plugin.js';
import { createEventsRepository, type EventsRepository } from './feed.js';
import { createNatsRelay, RELAY_NATS } from './nats.js';
import { createWebhookDeliveriesRepository, type WebhookDeliveriesRepository } from './webhooks/deliveries.js';
import { createWebhookDispatchRepository } from './webhooks/dispatch.js';
import { createWebhookEndpointsRepository, type WebhookEndpointsRepository } from './webhooks/endpoints.js';
import { createWebhookEngine } from './webhooks/engine.js';
import { createWebhookMessagesRepository, type Result, type WebhookBacklog } from './webhooks/messages.js';
import { checkUrl, systemResolver, type Resolver, type UrlRefusal } from './webhooks/target.js';

declare module 'fastify' {
  interface FastifyInstance {
    events: EventsRepository;
    webhookEndpoints: WebhookEndpointsRepository;
    webhookDeliveries: WebhookDeliveriesRepository;
    /** Whether a URL may be an endpoint's (with the deployment's resolver and WEBHOOK_ALLOW_PRIVATE). */
    webhookUrls: { check: (url: string) => Promise<UrlRefusal | undefined> };
    /** The webhook delivery queue now, across instances (a read of the database). */
    webhookBacklog: () => Promise<WebhookBacklog>;
  }
}

export interface EventsOptions {
  /** How webhook hosts are resolved, at save and at each delivery's connection (default: the system's). */
  resolver?: Resolver;
  /** Told of every webhook delivery attempt's outcome (the metrics). */
  onWebhookAttempt?: (outcome: Result['kind']) => void;
}

/** Events deleted per statement by the retention job. */
const EVENT_PURGE_BATCH = 1000;
const HOUR_MS = 60 * 60 * 1000;

export default fp(
  async function events(fastify: FastifyInstance, options: EventsOptions) {
    const { config } = fastify;
    const { primary } = fastify.pools;
    const feed = createEventsRepository(primary);
    fastify.decorate('events', feed);
    fastify.jobs.add({ name: 'events retention', everyMs: 60 * 1000, run: async () => counted('deleted events past retention')(await feed.purge(config.EVENT_RETENTION_DAYS, EVENT_PURGE_BATCH)) });

    if (config.EVENTS_NATS_URL) {
      const nats = createNatsRelay({ url: config.EVENTS_NATS_URL, stream: config.EVENTS_NATS_STREAM, subjectPrefix: config.EVENTS_NATS_SUBJECT_PREFIX }, feed);
      fastify.addHook('onClose', async () => nats.close());
      // The relay's start (after the newest event) is fixed before the first request is
      // served: every event a request writes is published. With the database away at
      // start, the relay's first run fixes it instead (src/events/nats.ts).
      fastify.addHook('onReady', async () => {
        await feed.join(RELAY_NATS, 'newest').catch(() => {});
      });
      fastify.jobs.add({ name: 'events to NATS', everyMs: 250, run: async () => counted('events published to NATS')(await nats.run()) });
    }

    const endpoints = createWebhookEndpointsRepository(primary);
    const deliveries = createWebhookDeliveriesRepository(primary);
    const resolve = options.resolver ?? systemResolver;
    const allowPrivate = config.WEBHOOK_ALLOW_PRIVATE;
    fastify.decorate('webhookEndpoints', endpoints);
    fastify.decorate('webhookDeliveries', deliveries);
    fastify.decorate('webhookUrls', { check: (url: string) => checkUrl(url, { allowPrivate, resolve }) });
    const messages = createWebhookMessagesRepository(primary);
    fastify.decorate('webhookBacklog', () => messages.backlog());
    const engine = createWebhookEngine({
      dispatch: createWebhookDispatchRepository(feed, primary),
      messages,
      resolve,
      allowPrivate,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      schedule: config.WEBHOOK_RETRY_SCHEDULE_SECONDS.split(',').map(Number),
      windowSeconds: config.WEBHOOK_RETRY_WINDOW_SECONDS,
      concurrency: config.WEBHOOK_CONCURRENCY,
      pollMs: config.WEBHOOK_POLL_MS,
      log: fastify.log,
      ...(options.onWebhookAttempt ? { onAttempt: options.onWebhookAttempt } : {}),
    });
    fastify.addHook('onReady', async () => engine.start());
    fastify.addHook('onClose', async () => engine.stop());
    fastify.jobs.add({ name: 'webhook attempts purge', everyMs: HOUR_MS, run: async () => counted('purged webhook delivery attempts')(await deliveries.purge(config.EVENT_RETENTION_DAYS)) });
    fastify.jobs.add({ name: 'webhook previous secrets', everyMs: HOUR_MS, run: async () => counted('forgot expired previous webhook secrets')(await endpoints.forgetExpiredSecrets()) });
  },
  { name: 'events', dependencies: ['database', 'jobs'], decorators: { fastify: ['config'] } },
);
