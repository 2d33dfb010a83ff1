// Where reads go when a replica is configured (DATABASE_READ_URL): listPets and getPet read
// from the replica, everything else from the primary. A replica lags a little, so:
// - an API key that has just written reads from the primary for READ_YOUR_WRITES_MS (its
//   own new pet shows up at once on the instance that created it);
// - getPet answering "not found" from the replica asks the primary too: ids come from the
//   primary, so a pet created through any instance is found immediately;
// - a replica that cannot answer (down, or a query cancelled by recovery) is skipped: the
//   primary answers instead.
import type pg from 'pg';
import { query, type Statement } from './query.js';
import { isDatabaseUnavailable } from './unavailable.js';

export type ReadFrom = 'primary' | 'replica';

// A hot standby cancels queries that conflict with replay (40001): retry on the primary.
const REPLICA_CONFLICT = '40001';

export interface Pools {
  primary: pg.Pool;
  replica?: pg.Pool;
}

export function createReader(pools: Pools) {
  const { primary, replica } = pools;
  return async function read<Row extends object>(from: ReadFrom, statement: Statement<Row>, values: readonly unknown[]): Promise<Row[]> {
    if (from === 'primary' || !replica) return query(primary, statement, values);
    try {
      return await query(replica, statement, values);
    } catch (error) {
      if (isDatabaseUnavailable(error) || (error as { code?: unknown }).code === REPLICA_CONFLICT) return query(primary, statement, values);
      throw error;
    }
  };
}

/**
 * API keys that wrote recently, so that their reads go to the primary for a while. Without
 * a replica (`enabled` false) there is nothing to route: it records nothing.
 */
export function createRecentWriters(windowMs: number, enabled: boolean) {
  // Every entry lives `windowMs`, and a key that writes again is moved to the end, so the
  // map is in expiry order: expired entries are dropped from its front, each at most once.
  const until = new Map<number, number>();
  const prune = (now: number): void => {
    for (const [id, t] of until) {
      if (t > now) return;
      until.delete(id);
    }
  };
  return {
    enabled: enabled && windowMs > 0,
    wrote(apiKeyId: number): void {
      if (!enabled || windowMs <= 0) return;
      const now = Date.now();
      prune(now);
      until.delete(apiKeyId);
      until.set(apiKeyId, now + windowMs);
    },
    readFrom(apiKeyId: number | undefined): ReadFrom {
      if (apiKeyId === undefined || until.size === 0) return 'replica';
      const t = until.get(apiKeyId);
      return t !== undefined && t > Date.now() ? 'primary' : 'replica';
    },
  };
}

export type RecentWriters = ReturnType<typeof createRecentWriters>;
