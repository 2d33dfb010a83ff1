// pet_search: the copy of the catalogue that listPets' search, tag filter and sorted pages
// read, with their indexes (migration 1763700000024, docs/decisions/0010-pet-search.md).
// pets has none of those indexes, so that its writes cost what they cost before search.
//
// Invariants (the decision record says why they suffice):
// 1. pet_search holds every live pet whose newest event is at or below
//    `pet_search_state.indexed_through` as it stands; a pet with a later event is read from
//    pets instead (`SEARCHABLE`), in the same snapshot. So a search reads every pet as its
//    last committed write left it, on every instance: a pet is found by the search that
//    follows its 201 or 200.
// 2. `indexed_through` moves only to an event that is final in the snapshot of the statement
//    that moves it (its `visible_after` at most that snapshot's xmin: every event below it is
//    committed or rolled back there, docs/decisions/0001-append-order.md), and that statement
//    copies every pet those events name.
// 3. One catch-up runs at a time, under a transaction-level advisory lock.
import type pg from 'pg';
import { execute, query, statement } from '../db/query.js';
import { inTransaction } from '../db/transaction.js';

/**
 * The ids of the pets that pet_search may hold older than they are (those with an event
 * above `indexed_through`), as one array: each part of `SEARCHABLE` compares with it as a
 * filter of its own scan, so that each keeps its index's order (an anti-join against a set
 * made the planner sort the whole table). The events are bounded on both sides, so that the
 * generic plan reads them by the primary key as a range (a lower bound alone, estimated at a
 * third of the table, read it whole: 13 ms of a search's 22 at 210,000 events).
 */
const FRESH = `SELECT coalesce(array_agg(DISTINCT (e.data::json ->> 'id')::bigint), '{}') AS ids FROM events e
    WHERE e.id > (SELECT indexed_through FROM pet_search_state) AND e.id <= (SELECT max(id) FROM events) AND e.type LIKE 'pet.%'`;

/** A pet as search reads it: its copy in pet_search, or, for a pet in `fresh`, its row in pets. */
const COLUMNS = 'id, name, category_id, status, tags, created_at, updated_at, visible_after, document';

/** The two parts of what search reads: pet_search but for the pets in `fresh`, and those pets from pets. */
const PARTS = [
  `(SELECT ${COLUMNS} FROM pet_search WHERE id <> ALL ((SELECT ids FROM fresh)::bigint[]))`,
  `(SELECT id, name, category_id, status, tags, created_at, coalesce(changed_at, created_at) AS updated_at, visible_after,
      pet_search_text(name, tags) AS document
    FROM pets WHERE id = ANY ((SELECT ids FROM fresh)::bigint[]) AND deleted_at IS NULL)`,
];

/**
 * SQL of `SELECT select FROM <the pets search reads> rest` (`rest`: WHERE, ORDER BY and
 * LIMIT over pet_search's columns), in a statement that starts `WITH` `FRESH_CTE`: the same
 * query on each part, their rows together. Each part is ordered and limited on its own, so
 * that each reads its own index in its order and stops after a page (over their union, the
 * generic plan sorted every row that passed the filters).
 */
export const searchable = (select: string, rest: string): string => PARTS.map((part) => `(SELECT ${select} FROM ${part} AS pets ${rest})`).join('\n    UNION ALL\n    ');

/** The CTE a statement that reads `SEARCHABLE` starts with. */
export const FRESH_CTE = `fresh AS MATERIALIZED (${FRESH})`;

/** The advisory lock of the catch-up (a fixed key of this module's own). */
const CATCH_UP_LOCK = "hashtext('pet_search catch-up')";

const STATEMENTS = {
  lock: statement<{ locked: boolean }>('pet-search-lock', `SELECT pg_try_advisory_xact_lock(${CATCH_UP_LOCK}) AS locked`),
  // Every table the catch-up reads is reached by its primary key, in any plan: its generic
  // plan is made on a connection's first catch-up, with the statistics of that moment, and
  // one made while pet_search looked empty scanned it whole for every pet of every batch.
  byKeys: statement<Record<string, never>>('pet-search-by-keys', 'SET LOCAL enable_seqscan = off'),
  // $1: at most this many events. The events after `indexed_through`, in id order; the last
  // final one is where pet_search goes up to; the pets they name are copied as they stand
  // (or removed from it), and `indexed_through` moves, all in one statement: one snapshot.
  // The pets are joined to as a set (unnest), so that any plan is linear: a generic plan made
  // while pet_search was small scanned it whole for each batch and compared every row with
  // the whole array (`id = ANY`), 8 s a batch of 10,000 at 300,000 rows.
  // Events gone to retention before they were read make pet_search start again from the
  // whole catalogue (`rebuild`).
  catchUp: statement<{ events: number; pets: number; behind: boolean }>(
    'pet-search-catch-up',
    `WITH state AS MATERIALIZED (SELECT indexed_through AS done FROM pet_search_state),
    batch AS MATERIALIZED (
      SELECT e.id, e.type, e.data, e.visible_after <= pg_snapshot_xmin(pg_current_snapshot()) AS final
      FROM events e WHERE e.id > (SELECT done FROM state) ORDER BY e.id LIMIT $1::int
    ),
    upto AS MATERIALIZED (SELECT coalesce(max(id) FILTER (WHERE final), (SELECT done FROM state)) AS upto, count(*) AS read FROM batch),
    changed AS MATERIALIZED (
      SELECT coalesce(array_agg(DISTINCT (data::json ->> 'id')::bigint), '{}') AS ids FROM batch WHERE id <= (SELECT upto FROM upto) AND type LIKE 'pet.%'
    ),
    gone AS (
      DELETE FROM pet_search s USING (SELECT unnest(ids) AS id FROM changed) AS c
      WHERE s.id = c.id AND NOT EXISTS (SELECT FROM pets p WHERE p.id = s.id AND p.deleted_at IS NULL)
    ),
    kept AS (
      INSERT INTO pet_search (${COLUMNS})
      SELECT id, name, category_id, status, tags, created_at, coalesce(changed_at, created_at), visible_after, pet_search_text(name, tags)
      FROM pets JOIN (SELECT unnest(ids) AS id FROM changed) AS c USING (id) WHERE deleted_at IS NULL
      ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, category_id = EXCLUDED.category_id, status = EXCLUDED.status, tags = EXCLUDED.tags,
        created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at, visible_after = EXCLUDED.visible_after, document = EXCLUDED.document
    ),
    moved AS (UPDATE pet_search_state SET indexed_through = (SELECT upto FROM upto))
    SELECT ((SELECT upto FROM upto) - (SELECT done FROM state))::int AS events, cardinality((SELECT ids FROM changed)) AS pets,
      (SELECT read FROM upto) = $1::int AS behind`,
  ),
  // Whether events that pet_search has not read are gone (retention deleted past indexed_through).
  gap: statement<{ gap: boolean }>(
    'pet-search-gap',
    'SELECT (SELECT purged_through FROM events_retention) > (SELECT indexed_through FROM pet_search_state) AS gap',
  ),
  // The whole catalogue again, as the migration copied it.
  rebuild: statement<Record<string, never>>(
    'pet-search-rebuild',
    `WITH final AS MATERIALIZED (
      SELECT greatest(coalesce(max(id), 0), (SELECT purged_through FROM events_retention)) AS upto
      FROM events WHERE visible_after <= pg_snapshot_xmin(pg_current_snapshot())
    ), cleared AS (DELETE FROM pet_search), moved AS (UPDATE pet_search_state SET indexed_through = (SELECT upto FROM final))
    INSERT INTO pet_search (${COLUMNS})
    SELECT id, name, category_id, status, tags, created_at, coalesce(changed_at, created_at), visible_after, pet_search_text(name, tags)
    FROM pets WHERE deleted_at IS NULL`,
  ),
};

export interface SearchIndexer {
  /**
   * Brings pet_search up to the newest final event, `batch` events per transaction; resolves
   * with the events and pets it took (0 and 0 when another catch-up was running).
   */
  catchUp(): Promise<{ events: number; pets: number }>;
}

export function createSearchIndexer(pool: pg.Pool, { batch }: { batch: number }): SearchIndexer {
  /** One transaction: undefined when another holds the lock. */
  const step = (): Promise<{ events: number; pets: number; behind: boolean } | undefined> =>
    inTransaction(pool, async (tx) => {
      const [lock] = await query(tx, STATEMENTS.lock, []);
      if (!lock?.locked) return undefined;
      await execute(tx, STATEMENTS.byKeys, []);
      // Taken after the lock: this snapshot sees what the previous catch-up committed.
      const [gap] = await query(tx, STATEMENTS.gap, []);
      if (gap?.gap) {
        await execute(tx, STATEMENTS.rebuild, []);
        return { events: 0, pets: 0, behind: true };
      }
      const [row] = await query(tx, STATEMENTS.catchUp, [batch]);
      return row;
    });
  return {
    async catchUp() {
      const total = { events: 0, pets: 0 };
      for (;;) {
        const done = await step();
        if (!done) return total;
        total.events += done.events;
        total.pets += done.pets;
        if (!done.behind || done.events === 0) return total;
      }
    },
  };
}
