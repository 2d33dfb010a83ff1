-- Up Migration
-- Pets gain `updatedAt` (with `createdAt`, the column pets always had, the Pet schema's new
-- fields), and listPets' `orderBy` its indexes: one per order, each ending with the id, so
-- that a page in any order is a range of one index, at any depth (src/catalogue/pet-orders.ts,
-- docs/decisions/0010-pet-orders.md).
--
-- Invariants:
-- 1. `updatedAt` is updated_at(pets): `changed_at`, which every statement that changes a
--    pet's name, category, status or tags sets to its statement_timestamp() (src/catalogue/pets.ts,
--    the only writer), or `created_at` while none has. A write that changes nothing sets
--    nothing. statement_timestamp(), not now(): a change in a transaction that began
--    before the pet was added would otherwise predate it.
-- 2. The JSON reads each instant's text, written once by the service's
--    writers (src/catalogue/pets.ts): `created_json` by the inserts (json_instant(now()), now() being
--    `created_at`'s default) and `updated_json` with `changed_at`. Null (rows from before
--    this migration, rows written around the service, a pet never changed): then
--    created_at_json() and updated_at_json() format the instant as they read. A write
--    around the service that sets `changed_at` sets `updated_json` to null. No read formats
--    an instant it has the text of (docs/decisions/0010-pet-orders.md).
-- 3. The new columns are nullable without defaults: adding them rewrites nothing.
-- 4. The time orders sort by the instant to the millisecond, in UTC, as the JSON shows it:
--    pets whose times look equal follow in id order.
-- 5. Each order's index holds exactly the sort expression that src/catalogue/pet-orders.ts
--    reads (test/db/generic-plans.test.ts plans every order by its index).
--
-- Waits at most 1 s for the table (a transaction holding pets longer makes the migration
-- fail, and the next start tries again).
SET LOCAL lock_timeout = '1s';

ALTER TABLE pets ADD COLUMN changed_at timestamptz, ADD COLUMN created_json text, ADD COLUMN updated_json text;

CREATE FUNCTION updated_at(p pets) RETURNS timestamptz
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT coalesce((p).changed_at, (p).created_at) $$;
CREATE FUNCTION created_at_json(p pets) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE AS $$ SELECT coalesce((p).created_json, json_instant((p).created_at)) $$;
CREATE FUNCTION updated_at_json(p pets) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN (p).changed_at IS NULL THEN coalesce((p).created_json, json_instant((p).created_at)) ELSE coalesce((p).updated_json, json_instant((p).changed_at)) END
$$;

CREATE INDEX pets_name_order ON pets ((lower(name) COLLATE "C"), id);
CREATE INDEX pets_created_order ON pets ((date_trunc('milliseconds', created_at AT TIME ZONE 'UTC')), id);
CREATE INDEX pets_updated_order ON pets ((date_trunc('milliseconds', coalesce(changed_at, created_at) AT TIME ZONE 'UTC')), id);

-- generated/pet-json.sql, as it is there.
CREATE OR REPLACE FUNCTION pet_json(p pets) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT '{"id":' || (p).id || ',"name":' || to_json((p).name) || ',"categoryId":' || (p).category_id || ',"createdAt":' || '"' || (p).created_at_json || '"' || ',"updatedAt":' || '"' || (p).updated_at_json || '"'
    || coalesce(',"status":' || to_json((p).status), '')
    || coalesce(',"tags":' || to_json(NULLIF((p).tags, '{}')), '') || '}'
$$;

-- Down Migration
SET LOCAL lock_timeout = '1s';
CREATE OR REPLACE FUNCTION pet_json(p pets) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT '{"id":' || (p).id || ',"name":' || to_json((p).name) || ',"categoryId":' || (p).category_id
    || coalesce(',"status":' || to_json((p).status), '')
    || coalesce(',"tags":' || to_json(NULLIF((p).tags, '{}')), '') || '}'
$$;
DROP INDEX pets_updated_order;
DROP INDEX pets_created_order;
DROP INDEX pets_name_order;
DROP FUNCTION updated_at_json(pets);
DROP FUNCTION created_at_json(pets);
DROP FUNCTION updated_at(pets);
ALTER TABLE pets DROP COLUMN updated_json, DROP COLUMN created_json, DROP COLUMN changed_at;
