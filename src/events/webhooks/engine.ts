// The delivery engine each instance runs (docs/decisions/0006-webhook-delivery.md):
// - the dispatcher walks the events feed with each endpoint's relay and makes one message
//   per event it takes, keeping at most a window of them waiting per endpoint
//   (src/events/webhooks/dispatch.ts), one instance at a time per endpoint;
// - the workers take endpoints' leases (one instance, one attempt at a time per endpoint),
//   make one attempt each (src/events/webhooks/send.ts) and write its outcome
//   (src/events/webhooks/messages.ts). At most `concurrency` attempts run at once per instance,
//   so a slow endpoint holds one slot, never the others', and at most ATTEMPTS_PER_KEY at
//   once for one API key's endpoints, across instances.
// Nothing here runs in a request: handlers only write rows, and triggers write the events.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { WebhookDispatchRepository } from './dispatch.js';
import type { Claimed, Result, WebhookMessagesRepository } from './messages.js';
import { annotateSpan, failSpan, inSpan } from '../../tracing/context.js';
import { failureLog } from '../../jobs/failures.js';
import { nextDelayMs } from './schedule.js';
import { send, type Outcome } from './send.js';
import type { Resolver } from './target.js';

export interface EngineOptions {
  dispatch: WebhookDispatchRepository;
  messages: WebhookMessagesRepository;
  resolve: Resolver;
  allowPrivate: boolean;
  /** An attempt's whole budget (10 s). */
  timeoutMs: number;
  /** Seconds between attempts (the last repeats). */
  schedule: readonly number[];
  /** A message is given up, and an endpoint whose attempts all failed disabled, this long after the first failure. */
  windowSeconds: number;
  /** Attempts in flight at once in this instance. */
  concurrency: number;
  /** How often the dispatcher and the workers look for work when idle. */
  pollMs: number;
  log: FastifyBaseLogger;
  /** Told of every attempt's outcome (the metrics). */
  onAttempt?: (outcome: Result['kind']) => void;
}

/** How long past an attempt's timeout its lease lasts: enough to write its outcome. */
const LEASE_MARGIN_MS = 15_000;
/**
 * Attempts in flight at once for one API key's endpoints, across instances: a key's
 * endpoints (at most 16) that hang cannot take every instance's slots from other keys.
 */
export const ATTEMPTS_PER_KEY = 4;

export function resultOf(outcome: Outcome, attempts: number, schedule: readonly number[]): Result {
  if ('error' in outcome) return { kind: 'failed', error: outcome.error, delayMs: nextDelayMs(attempts, undefined, schedule) };
  if (outcome.statusCode >= 200 && outcome.statusCode < 300) return { kind: 'delivered', statusCode: outcome.statusCode };
  if (outcome.statusCode === 410) return { kind: 'gone' };
  return { kind: 'failed', statusCode: outcome.statusCode, delayMs: nextDelayMs(attempts, outcome.retryAfter, schedule) };
}

export function createWebhookEngine(options: EngineOptions) {
  const token = randomUUID();
  const leaseMs = options.timeoutMs + LEASE_MARGIN_MS;
  const inFlight = new Set<Promise<void>>();
  const timers: NodeJS.Timeout[] = [];
  let stopped = false;
  let claiming = false;
  let dispatching = false;
  const warn = (what: string) => (error: unknown) => options.log.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, `webhooks: ${what} failed`);
  const { failed, works } = failureLog(options.log, 'webhooks: ');

  async function attempt(message: Claimed): Promise<void> {
    if (!message.may_see || message.payload === null) return options.messages.drop(token, message.endpoint_id, message.event_id);
    const attemptedAt = new Date();
    const secrets = message.previous_secret === null ? [message.secret] : [message.secret, message.previous_secret];
    const payload = message.payload;
    // The delivery's client span continues the trace of the change that wrote the event.
    const outcome = await inSpan(
      'webhook delivery',
      { parent: message.trace_parent, kind: 'client', attributes: { 'http.request.method': 'POST', 'webhook.endpoint_id': message.endpoint_id, 'webhook.event_id': message.event_id } },
      async (headers) => {
        const sent = await send({ url: message.url, messageId: String(message.event_id), payload, secrets, headers }, options);
        if ('error' in sent) failSpan(sent.error);
        else annotateSpan({ 'http.response.status_code': sent.statusCode });
        return sent;
      },
    );
    const attempts = message.attempts + 1;
    const result = resultOf(outcome, attempts, options.schedule);
    try {
      await options.messages.finish(
        token,
        { endpointId: message.endpoint_id, eventId: message.event_id, attempt: attempts, attemptedAt, durationMs: outcome.durationMs, result },
        options.windowSeconds,
      );
    } finally {
      // Counted once its outcome is written (or could not be): the queue reads true by then.
      options.onAttempt?.(result.kind);
    }
  }

  let claimRun: Promise<void> = Promise.resolve();
  let dispatchRun: Promise<void> = Promise.resolve();
  function claim(): Promise<void> {
    if (claiming || stopped) return claimRun;
    claiming = true;
    claimRun = claimOnce();
    return claimRun;
  }
  function dispatch(): Promise<void> {
    if (dispatching || stopped) return dispatchRun;
    dispatching = true;
    dispatchRun = dispatchOnce();
    return dispatchRun;
  }

  async function claimOnce(): Promise<void> {
    try {
      const free = options.concurrency - inFlight.size;
      if (free <= 0) return;
      const claimed = await options.messages.claim(token, leaseMs, free, ATTEMPTS_PER_KEY);
      for (const message of claimed) {
        const running: Promise<void> = attempt(message)
          .catch(warn('a delivery'))
          .finally(() => {
            inFlight.delete(running);
            // A slot is free: look for more at once rather than at the next tick.
            void claim();
          });
        inFlight.add(running);
      }
      works('claiming deliveries');
    } catch (error) {
      failed('claiming deliveries', error);
    } finally {
      claiming = false;
    }
  }

  async function dispatchOnce(): Promise<void> {
    try {
      // Endpoints whose key is revoked or expired are disabled first, saying why.
      await options.dispatch.retire();
      const done = await options.dispatch.dispatch();
      if (done.messages > 0) void claim();
      works('dispatching events');
    } catch (error) {
      failed('dispatching events', error);
    } finally {
      dispatching = false;
    }
  }

  return {
    start(): void {
      // The token marks this instance's leases in webhook_endpoints.lease_token.
      options.log.info({ leaseToken: token }, 'webhook deliveries started');
      timers.push(setInterval(() => void dispatch(), options.pollMs).unref());
      timers.push(setInterval(() => void claim(), options.pollMs).unref());
    },
    /** Stops looking for work and waits for the attempts in flight (each bounded by the timeout). */
    async stop(): Promise<void> {
      stopped = true;
      timers.forEach(clearInterval);
      // A claim under way may still start attempts: wait for it, then for them.
      await Promise.allSettled([claimRun, dispatchRun]);
      await Promise.allSettled([...inFlight]);
    },
  };
}

export type WebhookEngine = ReturnType<typeof createWebhookEngine>;
