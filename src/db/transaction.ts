// Transactions on the primary: what a handler writes in one, commits or rolls back together
// (an order and its pet's status; a write and its stored idempotent answer).
import type pg from 'pg';
import type { Queryable } from './query.js';

/** A connection inside BEGIN ... COMMIT; only `inTransaction` makes one. */
export interface Transaction extends Queryable {
  readonly inTransaction: true;
}

/**
 * Runs `work` in one transaction (READ COMMITTED, PostgreSQL's default) on a connection of
 * its own: COMMIT when it resolves, ROLLBACK when it throws. A connection whose ROLLBACK
 * failed is discarded, not returned to the pool.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (tx: Transaction) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A connection that dies while checked out (its backend terminated, the server restarted)
  // emits 'error' between queries; the pool listens only to idle ones, and an 'error' with
  // no listener would end the process. The statement in flight fails on its own.
  const lost = (error: Error): void => {
    broken = error;
  };
  client.on('error', lost);
  try {
    await client.query('BEGIN');
    const result = await work({ inTransaction: true, query: client.query.bind(client) as pg.PoolClient['query'] });
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollback: unknown) => {
      broken = rollback instanceof Error ? rollback : new Error(String(rollback));
    });
    throw error;
  } finally {
    client.removeListener('error', lost);
    client.release(broken);
  }
}
