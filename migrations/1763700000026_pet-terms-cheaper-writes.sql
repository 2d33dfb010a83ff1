-- Up Migration
-- Cheaper pet writes, the same terms (docs/decisions/0011-pet-search.md, "Alternatives"):
-- 1. pets.terms' function in PL/pgSQL, one expression: as SQL it was never inlined (unaccent
--    and array_to_string are STABLE), so every statement that wrote a pet planned its body
--    and search_fold's again; PL/pgSQL plans it once a connection. It returns what
--    search_words(name and tags) returns (migrations/1763700000025's invariant 1), under
--    any search_path.
-- 2. pet_terms written once per update statement, not once per pet: a coalesced batch of
--    renames (src/db/coalesce.ts) is one statement, and its pets' terms are rewritten by one
--    statement over the batch's transition tables.
-- 3. A pet inserted removed (deleted_at set, as no service statement does) gets no terms.
--
-- Invariant (as migrations/1763700000025's 2): pet_terms holds (term, pet_id) exactly for the
-- terms of live pets, written in the statement that writes the pet. A change of name or tags
-- rewrites the terms that differ, a removal drops them all, and a pet brought back
-- (deleted_at set to null by hand) gets them all again. An update that changes neither
-- (a status, a category) finds no row here and writes nothing.
SET LOCAL lock_timeout = '1s';

-- search_words(name || ' ' || tags joined by spaces), written out: search_fold's lower(unaccent(…)),
-- split on runs of anything but letters and digits, empty strings removed. unaccent and its
-- dictionary are named with the extension's schema: pg_restore computes pets.terms while it
-- copies pets, with an empty search_path (unqualified, the copy failed and no pet was restored).
DO $do$
DECLARE
  ext text := (SELECT quote_ident(n.nspname) FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent');
BEGIN
  EXECUTE format($f$
    CREATE OR REPLACE FUNCTION pet_terms_of(name text, tags text[]) RETURNS text[]
      LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $b$
    BEGIN
      RETURN array_remove(regexp_split_to_array(lower(%s.unaccent(%L::regdictionary, name || ' ' || coalesce(array_to_string(tags, ' '), ''))), '[^[:alnum:]]+'), '');
    END;
    $b$$f$, ext, ext || '.unaccent');
END;
$do$;

-- Each side of an update keyed by id and grouped, never a join of the two transition
-- tables: they hold no statistics, and a join of them is planned as a nested loop over every
-- pair, quadratic in the pets one statement updates (docs/decisions/0011-pet-search.md).
CREATE FUNCTION pet_terms_updated() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- A pet inserted removed (deleted_at set) has no terms to hold.
CREATE OR REPLACE FUNCTION pet_terms_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO pet_terms (term, pet_id) SELECT DISTINCT t, n.id FROM new_rows n CROSS JOIN unnest(n.terms) AS t WHERE n.deleted_at IS NULL;
  INSERT INTO search_vocabulary (term) SELECT DISTINCT t FROM new_rows n CROSS JOIN unnest(n.terms) AS t
    WHERE n.deleted_at IS NULL AND t !~ '^[0-9]+$' AND NOT EXISTS (SELECT FROM search_vocabulary v WHERE v.term = t);
  RETURN NULL;
END;
$$;

-- Every update of pets (a statement trigger with transition tables takes no column list);
-- pets' other statement triggers already keep the transition tables, which they share.
CREATE TRIGGER pets_terms_updated AFTER UPDATE ON pets REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION pet_terms_updated();
DROP TRIGGER pets_terms_changed ON pets;
DROP FUNCTION pet_terms_changed();

-- Down Migration
SET LOCAL lock_timeout = '1s';
CREATE OR REPLACE FUNCTION pet_terms_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO pet_terms (term, pet_id) SELECT DISTINCT t, n.id FROM new_rows n CROSS JOIN unnest(n.terms) AS t;
  INSERT INTO search_vocabulary (term) SELECT DISTINCT t FROM new_rows n CROSS JOIN unnest(n.terms) AS t
    WHERE t !~ '^[0-9]+$' AND NOT EXISTS (SELECT FROM search_vocabulary v WHERE v.term = t);
  RETURN NULL;
END;
$$;
CREATE OR REPLACE FUNCTION pet_terms_of(name text, tags text[]) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT search_words(name || ' ' || coalesce(array_to_string(tags, ' '), '')) $$;
CREATE FUNCTION pet_terms_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  held text[] := CASE WHEN OLD.deleted_at IS NULL THEN OLD.terms ELSE '{}' END;
BEGIN
  IF NEW.deleted_at IS NOT NULL THEN
    DELETE FROM pet_terms WHERE pet_id = NEW.id AND term = ANY (held);
    RETURN NULL;
  END IF;
  DELETE FROM pet_terms WHERE pet_id = NEW.id AND term = ANY (held) AND NOT term = ANY (NEW.terms);
  INSERT INTO pet_terms (term, pet_id) SELECT DISTINCT t, NEW.id FROM unnest(NEW.terms) AS t WHERE NOT t = ANY (held) ON CONFLICT DO NOTHING;
  INSERT INTO search_vocabulary (term) SELECT DISTINCT t FROM unnest(NEW.terms) AS t
    WHERE NOT t = ANY (held) AND t !~ '^[0-9]+$' AND NOT EXISTS (SELECT FROM search_vocabulary v WHERE v.term = t);
  RETURN NULL;
END;
$$;
CREATE TRIGGER pets_terms_changed AFTER UPDATE OF name, tags, deleted_at ON pets FOR EACH ROW
  WHEN (OLD.terms IS DISTINCT FROM NEW.terms OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at) EXECUTE FUNCTION pet_terms_changed();
DROP TRIGGER pets_terms_updated ON pets;
DROP FUNCTION pet_terms_updated();
