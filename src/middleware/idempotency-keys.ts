// The idempotency_keys table (draft-ietf-httpapi-idempotency-key-header): a key is claimed
// before its request is processed, completed with the answer in the transaction that makes
// the request's writes (src/middleware/idempotency.ts), or given back when the request
// failed. Keys are scoped to (API key, operation, key) and kept 24 hours.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { columns, execute, query, statement, type Queryable } from '../db/query.js';
import { counted } from '../jobs/plugin.js';
import type { Transaction } from '../db/transaction.js';

/** How long keys are kept (the contract documents 24 hours). */
export const IDEMPOTENCY_RETENTION_HOURS = 24;

export interface IdempotencyScope {
  apiKeyId: number;
  operation: string;
  key: string;
}

/** An answer as stored and replayed: the status, the body and the declared headers. */
export interface StoredAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

export type IdempotencyClaim = { outcome: 'claimed' } | { outcome: 'in-flight' } | { outcome: 'reused' } | { outcome: 'replay'; answer: StoredAnswer };

const ANSWER_COLUMNS = columns(['request_hash', 'status_code', 'response_body', 'response_headers']);
interface AnswerRow {
  request_hash: Buffer;
  status_code: number | null;
  response_body: unknown;
  response_headers: Record<string, string> | null;
}
const SCOPE = 'api_key_id = $1 AND operation = $2 AND key = $3';
const RETAINED = `created_at >= now() - interval '${IDEMPOTENCY_RETENTION_HOURS} hours'`;

export const IDEMPOTENCY_STATEMENTS = {
  // A claim: a new key, or one past the retention (starts over), or one whose request died
  // (lease over, same fingerprint: taken over). No row: someone else holds or answered it.
  claim: statement<{ claimed: number }>(
    'idempotency-claim',
    `INSERT INTO idempotency_keys AS k (api_key_id, operation, key, request_hash, locked_until)
     VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond')
     ON CONFLICT (api_key_id, operation, key) DO UPDATE
       SET request_hash = EXCLUDED.request_hash, locked_until = EXCLUDED.locked_until, created_at = now(),
           status_code = NULL, response_body = NULL, response_headers = NULL
       WHERE NOT (k.${RETAINED})
          OR (k.status_code IS NULL AND k.locked_until < now() AND k.request_hash = EXCLUDED.request_hash)
     RETURNING 1 AS claimed`,
  ),
  read: statement<AnswerRow>('idempotency-read', `SELECT ${ANSWER_COLUMNS.list} FROM idempotency_keys WHERE ${SCOPE}`),
  complete: statement<Record<string, never>>(
    'idempotency-complete',
    `UPDATE idempotency_keys SET status_code = $4, response_body = $5, response_headers = $6 WHERE ${SCOPE} AND status_code IS NULL`,
  ),
  release: statement<Record<string, never>>('idempotency-release', `DELETE FROM idempotency_keys WHERE ${SCOPE} AND status_code IS NULL`),
  purge: statement<Record<string, never>>('idempotency-purge', `DELETE FROM idempotency_keys WHERE NOT (${RETAINED})`),
};

export function createIdempotencyKeysRepository(primary: Queryable) {
  const scoped = (scope: IdempotencyScope) => [scope.apiKeyId, scope.operation, scope.key];
  return {
    /**
     * Claims a key for a request with this fingerprint, or says why not. An expired key
     * (past the retention) starts over; a claim whose request died (lease over, same
     * fingerprint) is taken over.
     */
    async claim(scope: IdempotencyScope, hash: Buffer, leaseMs: number): Promise<IdempotencyClaim> {
      const claimed = await query(primary, IDEMPOTENCY_STATEMENTS.claim, [...scoped(scope), hash, leaseMs]);
      if (claimed.length === 1) return { outcome: 'claimed' };
      const [row] = await query(primary, IDEMPOTENCY_STATEMENTS.read, scoped(scope));
      if (!row) return this.claim(scope, hash, leaseMs); // purged in between
      if (!row.request_hash.equals(hash)) return { outcome: 'reused' };
      if (row.status_code === null) return { outcome: 'in-flight' };
      return { outcome: 'replay', answer: { status: row.status_code, body: row.response_body, headers: row.response_headers ?? {} } };
    },

    /** Stores the answer under the claimed key, in the transaction of the request's writes. */
    async complete(tx: Transaction, scope: IdempotencyScope, answer: StoredAnswer): Promise<void> {
      const completed = await execute(tx, IDEMPOTENCY_STATEMENTS.complete, [...scoped(scope), answer.status, JSON.stringify(answer.body), JSON.stringify(answer.headers)]);
      // The claim is gone (purged, or taken over after its lease ran out): storing the
      // writes without their answer would let a retry repeat them.
      if (completed !== 1) throw new Error(`idempotency key of ${scope.operation} was no longer claimed when its request completed`);
    },

    /** Gives a claim back when its request failed, so that a retry is processed afresh. */
    async release(scope: IdempotencyScope): Promise<void> {
      await execute(primary, IDEMPOTENCY_STATEMENTS.release, scoped(scope));
    },

    /** Deletes keys past the retention; returns how many. */
    purge(): Promise<number> {
      return execute(primary, IDEMPOTENCY_STATEMENTS.purge);
    },
  };
}

export type IdempotencyKeysRepository = ReturnType<typeof createIdempotencyKeysRepository>;

declare module 'fastify' {
  interface FastifyInstance {
    idempotencyKeys: IdempotencyKeysRepository;
  }
}

/** The table as a plugin of the app, with the job that deletes the keys past their 24 hours. */
export default fp(
  async function idempotencyKeys(fastify: FastifyInstance) {
    const keys = createIdempotencyKeysRepository(fastify.pools.primary);
    fastify.decorate('idempotencyKeys', keys);
    fastify.jobs.add({ name: 'idempotency keys purge', everyMs: 60 * 60 * 1000, run: async () => counted('purged expired idempotency keys')(await keys.purge()) });
  },
  { name: 'idempotency-keys', dependencies: ['database', 'jobs'] },
);
