// Idempotency-Key for the operations whose contract accepts it (createPet), following
// draft-ietf-httpapi-idempotency-key-header. Runs after authentication and validation:
// - first request with a key: claim it, let the handler run (it completes the claim in the
//   same transaction that stores the pet);
// - same key, same body, finished: replay the stored answer (status, body, Location) with
//   `Idempotent-Replayed: true`;
// - same key, same body, still running: 409 with Retry-After;
// - same key, another body: 422.
// Keys are scoped to the API key and kept 24 hours; expired ones are purged hourly.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { idempotentOperations, operationIdOf, spec } from '../contract/spec.js';
import type { Store } from '../db/store.js';
import { errors } from '../errors.js';

/** How long a claim holds before a retry may take over from a request that died. */
const LEASE_MS = 30_000;
const PURGE_EVERY_MS = 60 * 60 * 1000;

/** The same JSON value always hashes the same, whatever the order of its keys. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

// Fastify lower-cases header names, so glue's header schema (`Idempotency-Key`) never
// matches and the header is checked here, against the rule the contract gives.
const KEY = new RegExp(spec.components.parameters.IdempotencyKey.schema.pattern, 'u');

function keyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  return typeof header === 'string' ? header : undefined;
}

/** The draft sends a Structured Field string ("abc"); a bare token is accepted too. */
function unquoted(header: string): string {
  return header.length >= 2 && header.startsWith('"') && header.endsWith('"') ? header.slice(1, -1) : header;
}

export interface IdempotencyOptions {
  store: Store;
  /** Counted for every replayed answer (metrics). */
  onReplay?: (request: FastifyRequest) => void;
}

export default fp(
  async function idempotency(fastify: FastifyInstance, { store, onReplay }: IdempotencyOptions) {
    fastify.decorateRequest('idempotency', null);

    /** Resolves true when it answered the request itself (a replay). */
    const claim = async (request: FastifyRequest, reply: FastifyReply, apiKeyId: number, header: string): Promise<boolean> => {
      // The header as sent is checked against the contract's pattern, so the schema is
      // exactly the rule enforced (both forms, 1 to 255 characters inside).
      if (!KEY.test(header)) {
        throw Object.assign(new Error('header Idempotency-Key: must be 1 to 255 visible ASCII characters, bare or in double quotes'), { statusCode: 400, code: 'bad_request' });
      }
      const scope = { apiKeyId, key: unquoted(header) };
      const hash = createHash('sha256').update(canonical(request.body)).digest();
      const found = await store.claimIdempotencyKey(scope, hash, LEASE_MS);
      switch (found.outcome) {
        case 'claimed':
          request.idempotency = scope;
          return false;
        case 'in-flight':
          reply.header('retry-after', '1');
          throw new errors.idempotencyInFlight();
        case 'reused':
          throw new errors.idempotencyKeyReused();
        case 'replay':
          onReplay?.(request);
          if (found.location) reply.header('location', found.location);
          reply.code(found.status).header('idempotent-replayed', 'true').send(found.body);
          return true;
      }
    };

    // Global hooks that act only on idempotent operations (route-level preHandlers are where
    // fastify-openapi-glue puts security, which src/plugins/openapi-glue.ts moves). They run
    // on every request, so the common case (no key) is synchronous: no promise, no tick.
    const applies = (request: FastifyRequest): boolean => {
      const operationId = operationIdOf(request);
      return operationId !== undefined && idempotentOperations.has(operationId);
    };
    fastify.addHook('preHandler', (request, reply, done) => {
      const apiKey = request.apiKey;
      const key = apiKey && applies(request) ? keyOf(request) : undefined;
      if (!apiKey || key === undefined) return done();
      // A replay has answered: the request ends there, without done().
      claim(request, reply, apiKey.id, key).then((answered) => answered || done(), done);
    });
    // A claimed request that did not succeed gives its key back, so a retry runs afresh.
    fastify.addHook('onResponse', (request, reply, done) => {
      if (!request.idempotency || reply.statusCode === 201) return done();
      store
        .releaseIdempotencyKey(request.idempotency)
        .catch((err: unknown) => request.log.warn({ err }, 'idempotency: release failed'))
        .finally(done);
    });

    const purge = (): void => {
      store.purgeIdempotencyKeys().then(
        (n) => n > 0 && fastify.log.info({ purged: n }, 'idempotency: purged expired keys'),
        (err: unknown) => fastify.log.warn({ err }, 'idempotency: purge failed'),
      );
    };
    const timer = setInterval(purge, PURGE_EVERY_MS).unref();
    fastify.addHook('onReady', async () => purge());
    fastify.addHook('onClose', async () => clearInterval(timer));
  },
  { name: 'idempotency' },
);
