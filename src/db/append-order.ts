// Pages of append-ordered tables: every row exactly once, in id order, while rows are being
// inserted on any instance (docs/decisions/0001-append-order.md; the SQL side is
// migrations/1763700000008_append-order.sql). A page returns its rows only up to the last
// one below which every id is settled, and says what it held back; the caller's next page
// starts after the last row returned.
//
// Invariant: a page keeps its rows up to the largest id whose `visible_after` is below the
// frontier `append_order_frontier` gives for the statement's own snapshot; every lower id is
// then visible to that snapshot or never appears. Rows after it are held back, and the page
// says so (`more`), so that the client asks again from its last row.

/**
 * The SQL of one statement over pages of `table` (of partition `partition`, an SQL
 * expression; '0' for an unpartitioned table). `scanned` selects each page's rows, one
 * more than its size: `i` (the page's slot), `lim` (its size), `n` (the row's rank in
 * its page, from 1), `id`, `visible_after` and the columns the caller reads.
 *
 * Returns a WITH clause defining `kept`: the scanned rows and `keep`, true when the row is
 * on its page and final. A statement built on it selects from `kept`.
 */
export function keptRows(table: string, partition: string, scanned: string): string {
  return `WITH scanned AS MATERIALIZED (${scanned}),
  frontier AS MATERIALIZED (
    SELECT CASE WHEN upto IS NULL OR upto < pg_snapshot_xmin(snap) THEN NULL ELSE append_order_frontier('${table}', ${partition}, snap, upto) END AS f
    FROM (SELECT max(visible_after) FILTER (WHERE n <= lim) AS upto FROM scanned) AS m CROSS JOIN (SELECT pg_current_snapshot() AS snap) AS s
  ),
  kept AS (
    SELECT scanned.*, coalesce(n <= lim AND id <= max(id) FILTER (WHERE n <= lim AND (f IS NULL OR visible_after < f)) OVER (PARTITION BY i), false) AS keep
    FROM scanned CROSS JOIN frontier
  )`;
}

/**
 * The per-page columns of a page statement over `kept`: `more` (rows follow: scanned past
 * the page, or held back), `held` (rows held back: not yet final) and `last` (the page's
 * last id; null for an empty page).
 */
export const PAGE_COLUMNS = `count(*) > count(*) FILTER (WHERE keep) AS more,
  count(*) FILTER (WHERE n <= lim AND NOT keep) > 0 AS held,
  max(id) FILTER (WHERE keep) AS last`;

/** `scan` (rows in id order) with each row's rank `n`, from 1, as `scanned` wants it. */
export const ranked = (scan: string): string => `SELECT s.*, row_number() OVER (ORDER BY s.id) AS n FROM (${scan}) AS s`;

/** What a page statement says of one page, besides its rows. */
export interface PageEnd {
  more: boolean;
  held: boolean;
  last: number | null;
}

/** Where the next page starts: after the page's last row, or where it started when it is empty; none when nothing follows. */
export function nextAfter(end: PageEnd, after: number): number | undefined {
  return end.more ? (end.last ?? after) : undefined;
}
