-- Up Migration
-- Words as the contract and listPets count them (docs/decisions/0011-pet-search.md):
-- 1. A symbol that unaccent spells with letters or digits (`©` as `(C)`, `½` as `1/2`, `№` as
--    `No`, `℃` as `°C`: the 225 characters below, none a letter or digit to Unicode) is a
--    separator before accents are removed, under any locale; everything else is folded as
--    before (unaccent, lowercase, runs of what the locale calls letters and digits).
-- 2. search_query keeps the first 8 distinct words of q, the contract's bound, however the
--    locale splits them (listPets counts words by Unicode, which knows letters the locale
--    may not: each costs the walk a condition per pet).
--
-- Invariants (migrations/1763700000025's 1 and 2): pets.terms is pet_terms_of(name, tags),
-- which returns search_words(name and tags joined by spaces) under any search_path, and q is
-- folded by the same search_words. Pets whose terms these rules change are written again
-- (name = name: terms and pet_terms follow, no event, updatedAt kept) under a lock that
-- holds back every other write of pets until the new functions are in force, so that no pet
-- is written with the old ones after the UPDATE has passed it.
SET LOCAL lock_timeout = '1s';
LOCK TABLE pets IN SHARE ROW EXCLUSIVE MODE;

-- search_words and pet_terms_of split at the same symbols, written once here.
DO $do$
DECLARE
  symbols text := '[\u00A9\u00AE\u00BC-\u00BE\u20A0\u20A2-\u20A4\u20A7\u20B9-\u20BA\u2100-\u2101\u2103\u2105-\u2106\u2109\u2116-\u2118\u211E\u2121\u213B\u2150-\u215F\u2189\u2474-\u24B5\u3371-\u3377\u337A\u3380-\u3381\u3383-\u338B\u338E-\u3394\u3399-\u339A\u339C-\u339E\u33A7\u33A9-\u33AE\u33B0-\u33B1\u33B3-\u33B5\u33B7-\u33BB\u33BD-\u33BF\u33C2-\u33DF\U0001F100-\U0001F10A\U0001F110-\U0001F129]';
  ext text := (SELECT quote_ident(n.nspname) FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent');
BEGIN
  EXECUTE format($f$
    CREATE OR REPLACE FUNCTION search_words(t text) RETURNS text[]
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $b$
      SELECT array_remove(regexp_split_to_array(search_fold(regexp_replace(t, %L, ' ', 'g')), '[^[:alnum:]]+'), '')
    $b$$f$, symbols);
  EXECUTE format($f$
    CREATE OR REPLACE FUNCTION pet_terms_of(name text, tags text[]) RETURNS text[]
      LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $b$
    BEGIN
      RETURN array_remove(regexp_split_to_array(lower(%s.unaccent(%L::regdictionary,
        regexp_replace(name || ' ' || coalesce(array_to_string(tags, ' '), ''), %L, ' ', 'g'))), '[^[:alnum:]]+'), '');
    END;
    $b$$f$, ext, ext || '.unaccent', symbols);
END;
$do$;

-- The distinct words of q, in the order given, at most 8 (the contract's SearchQuery).
CREATE OR REPLACE FUNCTION search_query(q text) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(w ORDER BY i), '{}') FROM (
    SELECT w, min(i) AS i FROM unnest(search_words(q)) WITH ORDINALITY AS x(w, i) GROUP BY w ORDER BY min(i) LIMIT 8
  ) AS words
$$;

UPDATE pets SET name = name WHERE terms IS DISTINCT FROM pet_terms_of(name, tags);

-- Down Migration
SET LOCAL lock_timeout = '1s';
LOCK TABLE pets IN SHARE ROW EXCLUSIVE MODE;
CREATE OR REPLACE FUNCTION search_words(t text) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT array_remove(regexp_split_to_array(search_fold(t), '[^[:alnum:]]+'), '') $$;
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
CREATE OR REPLACE FUNCTION search_query(q text) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(w ORDER BY i), '{}') FROM (SELECT w, min(i) AS i FROM unnest(search_words(q)) WITH ORDINALITY AS x(w, i) GROUP BY w) AS words
$$;
UPDATE pets SET name = name WHERE terms IS DISTINCT FROM pet_terms_of(name, tags);
