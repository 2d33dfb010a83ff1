-- Up Migration
-- A pet's JSON is built when it is read, by pet_json(pets) (generated/pet-json.sql, below as
-- it is there), no longer kept in the stored generated column as_json. So the Pet schema can
-- gain a field without rewriting the table: a nullable column (or one with a constant
-- default) is added in place, a field read from another table is a function of a pets row,
-- and pet_json is replaced; neither holds a lock that blocks reads or writes for more than
-- the moment its catalog change takes (docs/decisions/0003-postgresql-built-json.md).
--
-- Upgrading: an instance of the earlier version reads as_json, which this drops; its pet
-- reads fail from then on. Stop the earlier instances before this migration runs (or
-- accept their errors until they are replaced).
--
-- Waits at most 1 s for the table (a transaction holding pets longer makes the migration
-- fail, and the next start tries again), so that the requests queued behind the DROP wait
-- no longer than that.
SET LOCAL lock_timeout = '1s';

-- The events of a pet's changes read its JSON the same way (migration 1763700000013).
CREATE OR REPLACE FUNCTION pets_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO events (type, data) SELECT 'pet.created', pet_json(n) FROM new_rows n ORDER BY n.id;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO events (type, data)
    SELECT CASE WHEN n.deleted_at IS NULL THEN 'pet.updated' ELSE 'pet.deleted' END, pet_json(n)
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE o.deleted_at IS NULL AND (n.deleted_at IS NOT NULL OR pet_json(n) IS DISTINCT FROM pet_json(o))
    ORDER BY n.id;
  ELSE
    INSERT INTO events (type, data) SELECT 'pet.deleted', pet_json(o) FROM old_rows o WHERE o.deleted_at IS NULL ORDER BY o.id;
  END IF;
  RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION pet_json(p pets) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT '{"id":' || (p).id || ',"name":' || to_json((p).name) || ',"categoryId":' || (p).category_id
    || coalesce(',"status":' || to_json((p).status), '') || '}'
$$;

-- After pets_events no longer reads it.
ALTER TABLE pets DROP COLUMN as_json;
DROP FUNCTION pet_json(bigint, text, bigint, text);

-- Down Migration
SET LOCAL lock_timeout = '1s';
CREATE FUNCTION pet_json(id bigint, name text, category_id bigint, status text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT '{"id":' || id || ',"name":' || to_json(name) || ',"categoryId":' || category_id
    || coalesce(',"status":' || to_json(status), '') || '}'
$$;
ALTER TABLE pets ADD COLUMN as_json text NOT NULL GENERATED ALWAYS AS (pet_json(id, name, category_id, status)) STORED;
CREATE OR REPLACE FUNCTION pets_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO events (type, data) SELECT 'pet.created', as_json FROM new_rows ORDER BY id;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO events (type, data)
    SELECT CASE WHEN n.deleted_at IS NULL THEN 'pet.updated' ELSE 'pet.deleted' END, n.as_json
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE o.deleted_at IS NULL AND (n.deleted_at IS NOT NULL OR n.as_json IS DISTINCT FROM o.as_json)
    ORDER BY n.id;
  ELSE
    INSERT INTO events (type, data) SELECT 'pet.deleted', as_json FROM old_rows WHERE deleted_at IS NULL ORDER BY id;
  END IF;
  RETURN NULL;
END;
$$;
DROP FUNCTION pet_json(pets);
