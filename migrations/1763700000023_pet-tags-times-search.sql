-- Up Migration
-- Pets gain `tags`, `createdAt` and `updatedAt` (the Pet schema's new fields), and the
-- functions listPets' search reads by (docs/decisions/0010-pet-search.md). The next
-- migration makes the table that search reads, pet_search, with its indexes.
--
-- `createdAt` is the column pets always had. `updatedAt` is a function of the row,
-- updated_at(pets): `changed_at`, set by every write that changes the pet, or `created_at`
-- while none has (a column whose existing rows took their created_at would rewrite the
-- table). Each column is added in place, without rewriting the table: `tags` with a
-- constant default, `changed_at` nullable. Their CHECKs are NOT VALID: every row
-- already satisfies them, and a validating scan would hold the table's lock all along; new
-- rows and every change are checked.
--
-- Waits at most 1 s for the table (a transaction holding pets longer makes the migration
-- fail, and the next start tries again).
SET LOCAL lock_timeout = '1s';

-- Trusted extensions: the database owner installs them.
CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public;

-- A tag: 1 to 32 lowercase letters a to z, digits and single hyphens between them (the
-- contract's Tag); a pet carries at most 10, each once.
CREATE FUNCTION pet_tags_valid(tags text[]) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT cardinality(tags) <= 10
    AND NOT EXISTS (SELECT FROM unnest(tags) AS t(tag) WHERE tag IS NULL OR length(tag) > 32 OR tag !~ '^[a-z0-9]+(-[a-z0-9]+)*$')
    AND cardinality(tags) = (SELECT count(DISTINCT tag) FROM unnest(tags) AS t(tag))
$$;

-- A time as the contract writes it in JSON: a JSON string, UTC, to the millisecond. IMMUTABLE:
-- the zone is named and the format has no field that depends on the locale.
CREATE FUNCTION json_time(at timestamptz) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
  SELECT '"' || to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'
$$;

-- `created_at_json` and `updated_at_json`: the two times as a pet's JSON writes them, written
-- with the row (by its insert's defaults, and by each statement that sets `changed_at`), so
-- that reading a pet formats no time (a page of 20 read 20% slower when pet_json formatted
-- them). Null in the rows from before this migration: pet_json formats those as it reads
-- them. The CHECKs hold every row written from now on to its times.
ALTER TABLE pets
  ADD COLUMN tags text[] NOT NULL DEFAULT '{}',
  ADD COLUMN changed_at timestamptz,
  ADD COLUMN created_at_json text,
  ADD COLUMN updated_at_json text,
  ADD CONSTRAINT pets_tags_valid CHECK (tags = '{}' OR pet_tags_valid(tags)) NOT VALID,
  ADD CONSTRAINT pets_times_ordered CHECK (changed_at >= created_at) NOT VALID,
  ADD CONSTRAINT pets_created_at_json CHECK (created_at_json = json_time(created_at)) NOT VALID,
  ADD CONSTRAINT pets_updated_at_json CHECK (updated_at_json = json_time(coalesce(changed_at, created_at))) NOT VALID;
-- Set apart from ADD COLUMN, whose default the existing rows would take.
ALTER TABLE pets ALTER COLUMN created_at_json SET DEFAULT json_time(now()), ALTER COLUMN updated_at_json SET DEFAULT json_time(now());

CREATE FUNCTION updated_at(p pets) RETURNS timestamptz
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT coalesce((p).changed_at, (p).created_at) $$;

-- What `q` is matched against: the name and the tags, in lowercase, without accents.
-- unaccent() is STABLE (its dictionary could be changed); this wrapper names the dictionary
-- and is declared IMMUTABLE so that an index can be built on it. Changing the dictionary
-- would take rebuilding pets_search. Names outside pg_catalog are written with their schema:
-- PostgreSQL 17 and later build an index with search_path set to pg_catalog only.
CREATE FUNCTION search_text(t text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
  SELECT lower(public.unaccent('public.unaccent'::regdictionary, t))
$$;
CREATE FUNCTION pet_search_text(name text, tags text[]) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT public.search_text(name || ' ' || array_to_string(tags, ' '))
$$;
-- A search text as a LIKE pattern that finds it anywhere, its wildcards taken as text.
CREATE FUNCTION search_pattern(q text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
  SELECT '%' || replace(replace(replace(public.search_text(q), '\', '\\'), '%', '\%'), '_', '\_') || '%'
$$;

CREATE OR REPLACE FUNCTION pet_json(p pets) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT '{"id":' || (p).id || ',"name":' || to_json((p).name) || ',"categoryId":' || (p).category_id
    || coalesce(',"status":' || to_json((p).status), '')
    || coalesce(',"tags":' || to_json((p).tags), '')
    || coalesce(',"createdAt":' || coalesce((p).created_at_json, json_time((p).created_at)), '')
    || coalesce(',"updatedAt":' || coalesce((p).updated_at_json, json_time((p).updated_at)), '') || '}'
$$;

-- Down Migration
SET LOCAL lock_timeout = '1s';
CREATE OR REPLACE FUNCTION pet_json(p pets) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT '{"id":' || (p).id || ',"name":' || to_json((p).name) || ',"categoryId":' || (p).category_id
    || coalesce(',"status":' || to_json((p).status), '') || '}'
$$;
DROP FUNCTION search_pattern(text);
DROP FUNCTION pet_search_text(text, text[]);
DROP FUNCTION search_text(text);
DROP FUNCTION updated_at(pets);
ALTER TABLE pets DROP COLUMN updated_at_json, DROP COLUMN created_at_json, DROP COLUMN changed_at, DROP COLUMN tags;
DROP FUNCTION json_time(timestamptz);
DROP FUNCTION pet_tags_valid(text[]);
