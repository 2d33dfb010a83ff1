-- Up Migration
-- listPets' search, tag filter and sorted pages read pet_search, a copy of the catalogue's
-- live pets with the indexes they need, instead of indexes on pets
-- (docs/decisions/0010-pet-search.md). pets keeps the indexes it had: a create writes no
-- more index entries than before, and a change that sets no indexed column of pets stays a
-- HOT update.
--
-- Invariants:
-- 1. pet_search holds, for every pet whose newest event is at or below
--    `pet_search_state.indexed_through`, the pet as it stands (a removed pet: no row). A pet
--    with an event above it may be older here: the search reads that pet from pets instead.
-- 2. Every event at or below `indexed_through` is committed (or rolled back) for every
--    snapshot that sees the state row: it only moves to an event that is final (its
--    `visible_after` at most the snapshot's xmin, docs/decisions/0001-append-order.md), in
--    the statement that brings pet_search up to it.
-- 3. One catch-up at a time (src/catalogue/pet-search-indexer.ts takes an advisory lock).
SET LOCAL lock_timeout = '1s';

CREATE TABLE pet_search (
  id            bigint PRIMARY KEY,
  name          text NOT NULL,
  category_id   bigint NOT NULL,
  status        text,
  tags          text[] NOT NULL,
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL,
  visible_after xid8 NOT NULL,
  document      text NOT NULL
);

CREATE TABLE pet_search_state (
  only_row        boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  indexed_through bigint NOT NULL
);

-- The catalogue as it stands, and the newest event that pet_search holds from then on.
WITH final AS MATERIALIZED (
  SELECT coalesce(max(id), (SELECT purged_through FROM events_retention)) AS upto
  FROM events WHERE visible_after <= pg_snapshot_xmin(pg_current_snapshot())
), state AS (
  INSERT INTO pet_search_state (indexed_through) SELECT upto FROM final
)
INSERT INTO pet_search (id, name, category_id, status, tags, created_at, updated_at, visible_after, document)
SELECT id, name, category_id, status, tags, created_at, coalesce(changed_at, created_at), visible_after, pet_search_text(name, tags)
FROM pets WHERE deleted_at IS NULL;

CREATE INDEX pet_search_document ON pet_search USING gin (document gin_trgm_ops);
CREATE INDEX pet_search_tags ON pet_search USING gin (tags);
CREATE INDEX pet_search_name_id ON pet_search (name, id);
CREATE INDEX pet_search_created_id ON pet_search (created_at, id);
CREATE INDEX pet_search_updated_id ON pet_search (updated_at, id);
ANALYZE pet_search;

-- Down Migration
DROP TABLE pet_search_state;
DROP TABLE pet_search;
