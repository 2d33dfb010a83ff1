// Transactions on the primary: what a handler writes in one, commits or rolls back together
// (an order and its pet's status; a write and its stored idempotent answer).
import type pg from 'pg';
import type { Queryable } from './query.js';

/** A connection inside BEGIN ... COMMIT; only `inTransaction` and `transactionOn` make one. */
export interface Transaction extends Queryable {
  readonly inTransaction: true;
  /** Its connection's protocol state: which statements it has prepared (src/db/traced-write.ts). */
  readonly connection: pg.Connection;
}

/** A connection checked out by `withConnection`: `broken` marks it for discarding. */
export interface HeldConnection {
  client: pg.PoolClient;
  /** Marks the connection broken: it is discarded, not returned to the pool. */
  broken(error: unknown): void;
}

/**
 * Runs `work` with a connection of the pool's, returned to it after, or discarded when it
 * broke (its backend ended, or `broken` was called).
 */
export async function withConnection<T>(pool: pg.Pool, work: (held: HeldConnection) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A connection that dies while checked out (its backend terminated, the server restarted)
  // emits 'error' between queries; the pool listens only to idle ones, and an 'error' with
  // no listener would end the process. The statement in flight fails on its own.
  const lost = (error: unknown): void => {
    broken ??= error instanceof Error ? error : new Error(String(error));
  };
  client.on('error', lost);
  try {
    return await work({ client, broken: lost });
  } finally {
    client.removeListener('error', lost);
    client.release(broken);
  }
}

/**
 * Runs `work` in one transaction (READ COMMITTED, PostgreSQL's default) on a held
 * connection: COMMIT when it resolves, ROLLBACK when it throws. A connection whose ROLLBACK
 * failed is marked broken.
 */
export async function transactionOn<T>({ client, broken }: HeldConnection, work: (tx: Transaction) => Promise<T>): Promise<T> {
  try {
    await client.query('BEGIN');
    const result = await work({ inTransaction: true, query: client.query.bind(client) as pg.PoolClient['query'], connection: (client as unknown as pg.Client).connection });
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(broken);
    throw error;
  }
}

/** Runs `work` in one transaction on a connection of its own (`transactionOn`). */
export function inTransaction<T>(pool: pg.Pool, work: (tx: Transaction) => Promise<T>): Promise<T> {
  return withConnection(pool, (held) => transactionOn(held, work));
}
