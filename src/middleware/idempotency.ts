// Idempotency-Key (draft-ietf-httpapi-idempotency-key-header) for every operation whose
// contract declares the header; any other operation is not wrapped. Runs after
// authentication and validation (the contract's schema has checked the header):
// - first request with a key: claim it (scoped to the API key, the operation and the key),
//   then run the handler in a transaction and store its answer (status, body, headers) in
//   the same transaction, so that the writes and the stored answer commit together or not
//   at all;
// - same key, same request (path parameters and body), finished: replay the stored answer
//   with `Idempotent-Replayed: true`;
// - same key, same request, still running: 409 with Retry-After;
// - same key, another request: 422.
// A request that fails (an error thrown, not an answer) gives its key back, so that a
// retry is processed afresh. Keys are kept 24 hours; the jobs plugin purges older ones.
import { createHash } from 'node:crypto';
import type { preValidationHookHandler } from 'fastify';
import type pg from 'pg';
import type { OperationInput, OperationMiddleware } from '../routes/middleware.js';
import { isIdempotent } from '../contract/spec.js';
import type { IdempotencyKeysRepository } from './idempotency-keys.js';
import { inTransaction } from '../db/transaction.js';
import { ApiError } from '../errors/catalogue.js';
import { repeatsHeader } from '../http/message.js';

/** How long a claim holds before a retry may take over from a request that died. */
const LEASE_MS = 30_000;

/** The same JSON value always hashes the same, whatever the order of its keys. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * What the operation receives: its path parameters and its body. Without path parameters,
 * the body alone (the fingerprint contract 1.1.0 stored, so that keys from before keep
 * replaying).
 */
function fingerprint(input: OperationInput, hasPathParameters: boolean): Buffer {
  // No body and `{}` are one request where the body is optional (cancelOrder).
  const received = hasPathParameters ? canonical({ body: input.body ?? {}, params: input.params }) : canonical(input.body);
  return createHash('sha256').update(received).digest();
}

/** The draft sends a Structured Field string ("abc"); a bare token is accepted too. */
function unquoted(header: string): string {
  return header.length >= 2 && header.startsWith('"') && header.endsWith('"') ? header.slice(1, -1) : header;
}

export interface IdempotencyOptions {
  keys: IdempotencyKeysRepository;
  /** The primary, where each idempotent request's transaction runs. */
  pool: pg.Pool;
  /** Counted for every replayed answer (metrics). */
  onReplay?: (operationId: string) => void;
}

export function idempotency({ keys, pool, onReplay }: IdempotencyOptions): OperationMiddleware {
  // Two Idempotency-Key lines: Node joins them into one value (`a, b`), which the pattern
  // would refuse as characters, not as what it is. Before validation.
  const once: preValidationHookHandler = (request, _reply, done) => {
    if (!repeatsHeader(request.raw.rawHeaders, 'idempotency-key')) return done();
    const message = 'is sent twice: send it once';
    done(new ApiError('bad_request', `header Idempotency-Key: ${message}`, { details: [{ location: 'header', field: 'Idempotency-Key', rule: 'once', message }] }));
  };
  return {
    name: 'idempotency',
    hooks: (operation) => (isIdempotent(operation) ? { preValidation: [once] } : undefined),
    wrap(next, operation) {
      if (!isIdempotent(operation)) return next;
      const { operationId } = operation;
      const hasPathParameters = operation.parameters.some((p) => p.in === 'path');
      const reused = hasPathParameters
        ? 'This Idempotency-Key was already used with a different request (path or body)'
        : 'This Idempotency-Key was already used with a different request body';
      return async (input) => {
        const header = input.headers['Idempotency-Key'];
        const { apiKeyId } = input.context;
        if (header === undefined || apiKeyId === undefined) return next(input);
        const scope = { apiKeyId, operation: operationId, key: unquoted(header) };
        const claim = await keys.claim(scope, fingerprint(input, hasPathParameters), LEASE_MS);
        switch (claim.outcome) {
          case 'in-flight':
            throw new ApiError('idempotency_in_flight', 'A request with this Idempotency-Key is still being processed: retry after Retry-After seconds, and the first answer is replayed');
          case 'reused':
            throw new ApiError('idempotency_key_reused', reused);
          case 'replay':
            onReplay?.(operationId);
            return { status: claim.answer.status, body: claim.answer.body, headers: { ...claim.answer.headers, 'Idempotent-Replayed': 'true' } };
          case 'claimed':
            break;
        }
        try {
          return await inTransaction(pool, async (transaction) => {
            const answer = await next({ ...input, context: { ...input.context, transaction } });
            await keys.complete(transaction, scope, { status: answer.status, body: answer.body, headers: answer.headers ?? {} });
            return answer;
          });
        } catch (error) {
          await keys.release(scope).catch((err: unknown) => input.context.log.warn({ err }, 'idempotency: release failed'));
          throw error;
        }
      };
    },
  };
}
