// The inventory (getInventory): how many pets have each status, exact and cheap at any size.
// Triggers on pets append what each statement changed to pet_status_changes, and a job
// folds those rows into pet_status_totals; counts are the totals plus the rows not folded
// yet, read in one snapshot (docs/decisions/0004-inventory-fold.md).
import type { components } from '../../generated/v1.js';
import { execute, query, statement, type Queryable } from '../db/query.js';

export type Inventory = components['schemas']['Inventory'];

export const INVENTORY_STATEMENTS = {
  counts: statement<{ status: string; n: number }>(
    'inventory',
    `SELECT status, sum(n)::bigint AS n FROM (
      SELECT status, n FROM pet_status_totals UNION ALL SELECT status, n FROM pet_status_changes
    ) AS counted GROUP BY status`,
  ),
  // Instances share the fold: each takes rows no other is folding (SKIP LOCKED).
  fold: statement<Record<string, never>>(
    'inventory-fold',
    `WITH folded AS (
      DELETE FROM pet_status_changes WHERE id IN (SELECT id FROM pet_status_changes ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING status, n
    )
    UPDATE pet_status_totals SET n = pet_status_totals.n + f.n
    FROM (SELECT status, sum(n) AS n FROM folded GROUP BY status) AS f WHERE pet_status_totals.status = f.status`,
  ),
};

export function createInventoryRepository(primary: Queryable) {
  return {
    /** How many pets have each status, and none. */
    async counts(): Promise<Inventory> {
      const counts = new Map((await query(primary, INVENTORY_STATEMENTS.counts)).map((row) => [row.status, row.n]));
      return { available: counts.get('available') ?? 0, pending: counts.get('pending') ?? 0, sold: counts.get('sold') ?? 0, noStatus: counts.get('none') ?? 0 };
    },

    /** Folds recorded status changes into the totals (a job); returns how many statuses changed. */
    fold(batch = 50_000): Promise<number> {
      return execute(primary, INVENTORY_STATEMENTS.fold, [batch]);
    },
  };
}

export type InventoryRepository = ReturnType<typeof createInventoryRepository>;
