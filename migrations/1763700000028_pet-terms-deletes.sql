-- Up Migration
-- pet_terms follows every statement that removes or renumbers pets, as the status counts do
-- (migrations/1763700000006): no service statement deletes a pet row or changes its id, an
-- operator's may (a DELETE, a TRUNCATE, an UPDATE of id).
--
-- Invariant (migrations/1763700000025's 2, docs/decisions/0011-pet-search.md): pet_terms holds
-- (term, pet_id) exactly for the terms of live pets, written in the statement that writes the
-- pet. Before, a deleted row's terms stayed, and an id changed by an UPDATE kept its terms
-- under the old id and none under the new one (a side missing from the update's transition
-- tables read as NULL, and `= ANY (NULL)` matches nothing): a search walked terms of no pet,
-- and the renumbered pet was not found.
SET LOCAL lock_timeout = '1s';

-- As migrations/1763700000026's, with a side missing from the transition tables (the id it
-- had, or the id it has) holding no terms.
CREATE OR REPLACE FUNCTION pet_terms_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT id, terms, deleted_at FROM new_rows EXCEPT ALL SELECT id, terms, deleted_at FROM old_rows) THEN
    RETURN NULL;
  END IF;
  WITH changed AS MATERIALIZED (
    SELECT id, coalesce(max(held), '{}') AS held, coalesce(max(kept), '{}') AS kept FROM (
      SELECT id, CASE WHEN deleted_at IS NULL THEN terms ELSE '{}' END AS held, NULL::text[] AS kept FROM old_rows
      UNION ALL
      SELECT id, NULL, CASE WHEN deleted_at IS NULL THEN terms ELSE '{}' END FROM new_rows
    ) AS sides GROUP BY id HAVING coalesce(max(held), '{}') IS DISTINCT FROM coalesce(max(kept), '{}')
  ), dropped AS (
    DELETE FROM pet_terms p USING changed c WHERE p.pet_id = c.id AND p.term = ANY (c.held) AND NOT p.term = ANY (c.kept)
  ), added AS (
    INSERT INTO pet_terms (term, pet_id) SELECT DISTINCT t, c.id FROM changed c CROSS JOIN unnest(c.kept) AS t
      WHERE NOT t = ANY (c.held) ON CONFLICT DO NOTHING
  )
  INSERT INTO search_vocabulary (term) SELECT DISTINCT t FROM changed c CROSS JOIN unnest(c.kept) AS t
    WHERE NOT t = ANY (c.held) AND t !~ '^[0-9]+$' AND NOT EXISTS (SELECT FROM search_vocabulary v WHERE v.term = t);
  RETURN NULL;
END;
$$;

-- A deleted row's terms, each reached by pet_terms' primary key (term, pet_id).
CREATE FUNCTION pet_terms_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM pet_terms p USING old_rows o CROSS JOIN unnest(o.terms) AS t WHERE p.term = t AND p.pet_id = o.id;
  RETURN NULL;
END;
$$;
CREATE TRIGGER pets_terms_deleted AFTER DELETE ON pets REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION pet_terms_deleted();

-- No pet is left; the vocabulary keeps its words (a word no pet has finds no pet).
CREATE FUNCTION pet_terms_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE pet_terms;
  RETURN NULL;
END;
$$;
CREATE TRIGGER pets_terms_truncated AFTER TRUNCATE ON pets FOR EACH STATEMENT EXECUTE FUNCTION pet_terms_truncated();

-- Down Migration
SET LOCAL lock_timeout = '1s';
DROP TRIGGER pets_terms_truncated ON pets;
DROP FUNCTION pet_terms_truncated();
DROP TRIGGER pets_terms_deleted ON pets;
DROP FUNCTION pet_terms_deleted();
CREATE OR REPLACE FUNCTION pet_terms_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Most updates change no terms (a status, a category): they end here, before the
  -- statement below sets up its writes.
  IF NOT EXISTS (SELECT id, terms, deleted_at FROM new_rows EXCEPT ALL SELECT id, terms, deleted_at FROM old_rows) THEN
    RETURN NULL;
  END IF;
  WITH changed AS MATERIALIZED (
    SELECT id, max(held) AS held, max(kept) AS kept FROM (
      SELECT id, CASE WHEN deleted_at IS NULL THEN terms ELSE '{}' END AS held, NULL::text[] AS kept FROM old_rows
      UNION ALL
      SELECT id, NULL, CASE WHEN deleted_at IS NULL THEN terms ELSE '{}' END FROM new_rows
    ) AS sides GROUP BY id HAVING max(held) IS DISTINCT FROM max(kept)
  ), dropped AS (
    DELETE FROM pet_terms p USING changed c WHERE p.pet_id = c.id AND p.term = ANY (c.held) AND NOT p.term = ANY (c.kept)
  ), added AS (
    INSERT INTO pet_terms (term, pet_id) SELECT DISTINCT t, c.id FROM changed c CROSS JOIN unnest(c.kept) AS t
      WHERE NOT t = ANY (c.held) ON CONFLICT DO NOTHING
  )
  INSERT INTO search_vocabulary (term) SELECT DISTINCT t FROM changed c CROSS JOIN unnest(c.kept) AS t
    WHERE NOT t = ANY (c.held) AND t !~ '^[0-9]+$' AND NOT EXISTS (SELECT FROM search_vocabulary v WHERE v.term = t);
  RETURN NULL;
END;
$$;
