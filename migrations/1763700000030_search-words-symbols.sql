-- Up Migration
-- Words as the contract and listPets count them (docs/decisions/0011-pet-search.md):
-- 1. A character that is neither a letter nor a digit separates words before accents are
--    removed, so that unaccent's expansions of symbols make no word: `©` was the word `c`,
--    `½` the words `1` and `2`, `№` the word `no` (225 such characters), and `q=rex ½` found
--    nothing. The combining marks of accents (U+0300 to U+0362, U+20DD to U+20E0, U+20E2 to
--    U+20E4) stay for unaccent to remove, inside their word.
-- 2. search_query keeps the first 8 distinct words of q. listPets refuses a q of more
--    (src/handlers/listPets.ts, counting by Unicode); a letter the database's locale does
--    not know (`ʻ`, U+02BB, with glibc) splits a word there, and a q of one word by that
--    count was 37 words here, a page 0.8 s of the database's time.
--
-- Invariants (migrations/1763700000025's 1 and 2): pets.terms is pet_terms_of(name, tags),
-- which returns search_words(name and tags joined by spaces) under any search_path, and q is
-- folded by the same search_words. Pets whose terms these rules change are written again
-- (name = name): their terms and pet_terms follow; no event (the answer a client reads is
-- unchanged), and updatedAt stays.
SET LOCAL lock_timeout = '1s';

CREATE OR REPLACE FUNCTION search_words(t text) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT array_remove(regexp_split_to_array(search_fold(regexp_replace(t, '[^[:alnum:]\u0300-\u0362\u20DD-\u20E0\u20E2-\u20E4]+', ' ', 'g')), '[^[:alnum:]]+'), '')
$$;

DO $do$
DECLARE
  ext text := (SELECT quote_ident(n.nspname) FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent');
BEGIN
  EXECUTE format($f$
    CREATE OR REPLACE FUNCTION pet_terms_of(name text, tags text[]) RETURNS text[]
      LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $b$
    BEGIN
      RETURN array_remove(regexp_split_to_array(lower(%s.unaccent(%L::regdictionary,
        regexp_replace(name || ' ' || coalesce(array_to_string(tags, ' '), ''), '[^[:alnum:]\u0300-\u0362\u20DD-\u20E0\u20E2-\u20E4]+', ' ', 'g'))), '[^[:alnum:]]+'), '');
    END;
    $b$$f$, ext, ext || '.unaccent');
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
