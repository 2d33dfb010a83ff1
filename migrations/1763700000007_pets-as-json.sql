-- pet_json() below is also written by the generator: `npm run generate` (scripts/generate.ts)
-- writes it from the Pet schema of openapi/v1.yaml into generated/pet-json.sql, and
-- test/db/pet-json-contract.test.ts fails when the function this database has installed
-- differs from that file. A change to the Pet schema therefore needs a new migration that
-- creates the function from generated/pet-json.sql and rebuilds as_json; this file's SQL
-- stays as it was applied.
-- Up Migration
-- Each pet's JSON, as the contract's Pet writes it, kept beside its columns: listPets'
-- pages and getPet's answer are these strings joined by PostgreSQL, sent as they are
-- (src/catalogue/pets.ts, src/db/serialized.ts). Why, and what the alternatives cost:
-- docs/decisions/0003-postgresql-built-json.md.
--
-- The keys and their order are the Pet schema's in openapi/v1.yaml, `status` left out
-- when it is null (the schema's optional property). test/wire/pet-json.test.ts holds
-- this against the contract's own serializer for names that need escaping. A change to
-- the Pet schema rebuilds the column in a new migration (drop it, add it from a new
-- function): replacing the function would not recompute the values already stored.
--
-- IMMUTABLE is true of these arguments: for text, to_json only escapes (quotes,
-- backslashes, control characters), and bigint's text form reads no setting. PostgreSQL
-- requires it of a generated column's expression; to_json itself is declared STABLE
-- because it takes any type, whose output may depend on settings (dates, for one).
CREATE FUNCTION pet_json(id bigint, name text, category_id bigint, status text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT '{"id":' || id || ',"name":' || to_json(name) || ',"categoryId":' || category_id
    || coalesce(',"status":' || to_json(status), '') || '}'
$$;

-- STORED: PostgreSQL 18 makes a generated column virtual unless told, which would build
-- the JSON on every read again. Adding it rewrites the table under an exclusive lock,
-- like any stored column with a value: on a large catalogue, run it in a quiet window.
ALTER TABLE pets ADD COLUMN as_json text NOT NULL GENERATED ALWAYS AS (pet_json(id, name, category_id, status)) STORED;

-- Down Migration
ALTER TABLE pets DROP COLUMN as_json;
DROP FUNCTION pet_json(bigint, text, bigint, text);
