// Pages of append-ordered tables: every row exactly once, in id order, while rows are being
// inserted on any instance (docs/decisions/0001-append-order.md; the SQL side is
// migrations/1763700000008_append-order.sql, with the writers' horizon since
// migrations/1763700000021_append-order-horizon.sql).
//
// Invariant: a page returns its rows only up to, not including, the first one that is not
// final for the statement's own snapshot (its `visible_after` is neither at most the
// snapshot's xmin nor at most the frontier `append_order_frontier` gives): every id below a
// final row is visible to that snapshot or never appears. From the first row that is not
// final on, rows are held back, and the page says so (`more`), so that the client asks
// again from its last row.
//
// Cost: a row at most the snapshot's xmin (every row but the newest, while writes are in
// flight) is decided by one comparison; the frontier is asked at most once per statement,
// and only when a row needs it (an InitPlan is evaluated when first used).

/** SQL, true when a row (its `visible_after`) of `table` (of partition `partition`, an SQL expression; '0' for a table paged whole) is final for this statement's snapshot. */
function isFinal(table: string, partition: string): string {
  return `(visible_after <= (SELECT pg_snapshot_xmin(pg_current_snapshot()))
    OR visible_after <= (SELECT coalesce(append_order_frontier('${table}', ${partition}, pg_current_snapshot()), '18446744073709551615'::xid8)))`;
}

/** What a repository pages an append-ordered table with (`appendOrdered`). */
export interface AppendOrdered<P extends [] | [partition: string]> {
  table: string;
  /** The partition column its `append_order_join` named (none: the table is paged whole). */
  partitionColumn: string | undefined;
  /** SQL, true when the row is final for this statement's snapshot; a partitioned table takes the partition's value (an SQL expression). */
  isFinal: (...partition: P) => string;
  /**
   * An aggregate over a page's rows ranked `n` from 1 in id order, of size `lim` (an SQL
   * expression): `held_from`, the rank of the first row of the page that is not final (null:
   * none). The page is the rows ranked below it.
   */
  heldFrom: (lim: string, ...partition: P) => string;
}

/** Every table a repository declared, by name: test/db/append-order.test.ts compares them with the database's triggers. */
export const APPEND_ORDERED = new Map<string, string | undefined>();

/**
 * A table joined to the append order, as its migration joined it: `appendOrdered('events')`
 * for `append_order_join('events')`, `appendOrdered('orders', 'api_key_id')` for
 * `append_order_join('orders', 'api_key_id')`. The frontier must be asked for the marks the
 * writers take, so a table paged whole takes no partition, and a partitioned one must be
 * given the value its page is of.
 */
export function appendOrdered(table: string): AppendOrdered<[]>;
export function appendOrdered(table: string, partitionColumn: string): AppendOrdered<[partition: string]>;
export function appendOrdered(table: string, partitionColumn?: string): AppendOrdered<[]> | AppendOrdered<[partition: string]> {
  APPEND_ORDERED.set(table, partitionColumn);
  const final = (partition = '0') => isFinal(table, partition);
  return {
    table,
    partitionColumn,
    isFinal: final,
    heldFrom: (lim: string, partition?: string) => `min(n) FILTER (WHERE n <= ${lim} AND NOT ${final(partition)}) AS held_from`,
  };
}

/** Where the next page starts: after the page's last row, or where it started when it is empty; none when nothing follows. */
export function nextAfter(more: boolean, last: number | undefined, after: number): number | undefined {
  return more ? (last ?? after) : undefined;
}

/**
 * A page scanned as `limit + 1` rows in id order, each with `final` (`isFinal`): its rows up
 * to, not including, the first that is not final, and where the next page starts.
 */
export function finalPage<R extends { id: number; final: boolean }>(rows: readonly R[], limit: number, after: number): { rows: R[]; next: number | undefined } {
  const held = rows.findIndex((row, n) => n < limit && !row.final);
  const kept = rows.slice(0, held === -1 ? limit : held);
  return { rows: kept, next: nextAfter(rows.length > kept.length, kept.at(-1)?.id, after) };
}
