// Rate limiting (@fastify/rate-limit) on /v1: a budget per API key, and a smaller one per
// client address for requests without a valid key. Counts live in this process, or in
// Redis when REDIS_URL is set so that every instance spends from one budget.
//
// Every answer the limit counted carries two sets of headers: the older draft's
// RateLimit-Limit, -Remaining and -Reset, which @fastify/rate-limit writes, and the current
// draft's structured fields (draft-ietf-httpapi-ratelimit-headers), written here from the
// same counts: `RateLimit-Policy: "key";q=<max>;w=<window s>` and
// `RateLimit: "key";r=<remaining>;t=<s to reset>`, the policy named "key" for an API key's
// budget and "address" for a client address's.
//
// The plugin decorates the instance with `spendRateLimit()`, the hook that spends from a budget;
// the routes under /v1 put it in their own onRequest hooks: every operation of the contract
// (the middleware `rateLimit` below, before authentication, so that an over-budget caller
// is refused without further work) and the served contract. To count per key, it
// identifies the key itself, through the same in-memory cache authentication uses.
//
// So which routes spend is decided once, when each route is registered: what the router
// matched, never the request's spelling of the URL (`/%761/pets`, `/v%31/pets/1` and
// `GET http://host/v1/pets HTTP/1.1` all reach the /v1/pets routes, and so all spend).
import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { Redis } from 'ioredis';
import type { ApiKeyVerifier } from '../api-keys/verifier.js';
import { bearerToken } from '../api-keys/bearer.js';
import type { OperationMiddleware } from '../routes/middleware.js';
import { ApiError } from '../errors/catalogue.js';

/** The middleware: every operation spends from its caller's budget, first. */
export function rateLimit(limiter: onRequestHookHandler): OperationMiddleware {
  return { name: 'rate-limit', hooks: () => ({ onRequest: [limiter] }) };
}

/** The budget a request spent from: its API key's or its client address's. */
export type RateLimitPolicy = 'key' | 'address';

declare module 'fastify' {
  interface FastifyInstance {
    /** A hook that spends from the caller's budget and writes both sets of RateLimit headers (or answers 429). */
    spendRateLimit(): onRequestHookHandler;
  }
}

export interface RateLimitOptions {
  apiKeys: ApiKeyVerifier;
  max: number;
  anonymousMax: number;
  windowMs: number;
  redisUrl?: string;
  redisPrefix?: string;
  /** Counted when a request is refused (metrics): by an API key's budget or an address's. */
  onExceeded?: (request: FastifyRequest, by: RateLimitPolicy) => void;
}

export default fp(
  async function rateLimits(fastify: FastifyInstance, options: RateLimitOptions) {
    // No offline queue: while Redis is unreachable a count fails at once (and the request is
    // served, skipOnError) instead of waiting. So connect before serving.
    const redis = options.redisUrl
      ? new Redis(options.redisUrl, { connectTimeout: 500, maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true })
      : undefined;
    redis?.on('error', (err) => fastify.log.warn({ err: { message: err.message } }, 'rate limit: redis error'));
    await redis?.connect().catch((err: Error) => fastify.log.warn({ err: { message: err.message } }, 'rate limit: redis not reachable yet; counting resumes when it is'));
    if (redis) fastify.addHook('onClose', async () => void (await redis.quit().catch(() => redis.disconnect())));

    // Which budget each request spent from, for the policy's name (read right after).
    const policies = new WeakMap<FastifyRequest, RateLimitPolicy>();
    const windowSeconds = Math.ceil(options.windowMs / 1000);
    // The structured fields, from the counts @fastify/rate-limit has just written (on a 429
    // too: it writes them before it throws).
    // A budget's RateLimit-Policy never changes: written once per policy (its q is the max
    // that `max` below gives the same budget).
    const policyFields: Record<RateLimitPolicy, string> = {
      key: `"key";q=${options.max};w=${windowSeconds}`,
      address: `"address";q=${options.anonymousMax};w=${windowSeconds}`,
    };
    const structuredFields = (request: FastifyRequest, reply: FastifyReply): void => {
      if (!reply.hasHeader('ratelimit-limit')) return;
      const policy = policies.get(request) ?? 'address';
      reply.header('ratelimit-policy', policyFields[policy]);
      reply.header('ratelimit', `"${policy}";r=${String(reply.getHeader('ratelimit-remaining'))};t=${String(reply.getHeader('ratelimit-reset'))}`);
    };

    await fastify.register(fastifyRateLimit, {
      // Routes opt in with the `rateLimit()` hook; none is limited by default.
      global: false,
      hook: 'onRequest',
      timeWindow: options.windowMs,
      ...(redis ? { redis, nameSpace: `${options.redisPrefix ?? 'animal-store:'}rate:` } : {}),
      // If Redis is down, serve rather than refuse: the limit is protection, not a gate.
      skipOnError: true,
      enableDraftSpec: true,
      keyGenerator: async (request) => {
        // Authentication's reading of the header: a request it will refuse (two Authorization
        // headers, a malformed one) spends its address's budget, not a key's.
        const token = bearerToken(request);
        const identity = token ? await options.apiKeys.verify(token) : undefined;
        if (identity) policies.set(request, 'key');
        return identity ? `key:${identity.id}` : `ip:${request.ip}`;
      },
      max: (_request, key) => (key.startsWith('key:') ? options.max : options.anonymousMax),
      onExceeded: (request, key) => options.onExceeded?.(request, key.startsWith('key:') ? 'key' : 'address'),
      errorResponseBuilder: (_request, context) =>
        new ApiError('rate_limited', `Rate limit exceeded: at most ${context.max} requests per ${Math.round(options.windowMs / 1000)} s; retry in ${context.after}`),
    });

    fastify.decorate('spendRateLimit', () => {
      const limiter = fastify.rateLimit();
      return async function spend(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<void> {
        try {
          await limiter.call(this, request, reply);
        } finally {
          structuredFields(request, reply);
        }
      };
    });
  },
  { name: 'rate-limit' },
);
