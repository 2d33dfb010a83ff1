-- Up Migration
-- The catalogue is managed (contract 1.3.0): pets are changed (updatePet) and removed
-- (deletePet), with entity tags for optimistic concurrency, and listed by category.
--
-- Removal is soft: `deleted_at` is set and the row stays, because orders keep naming their
-- pet (orders.pet_id REFERENCES pets) and stay readable. A removed pet is never read by the
-- service again: every statement of src/catalogue/pets.ts, and orders' placement, skip it. It is
-- never pending (deletePet refuses a pending pet, and a placement skips a removed one).
-- Operators erase removed pets no order names with the SQL in docs/production.md.
-- Nullable without a default: adding it rewrites nothing.
ALTER TABLE pets ADD COLUMN deleted_at timestamptz;

-- listPets with `categoryId`: WHERE category_id = $1 AND id > $2 ORDER BY id, served in
-- order from the right place, as (status, id) serves `status`.
CREATE INDEX pets_category_id_idx ON pets (category_id, id);

-- A pet's entity tag (RFC 9110 §8.8.3), from its JSON: `"` + base64url (unpadded) of the
-- first 16 bytes of the SHA-256 of `as_json`'s UTF-8 bytes + `"`. The service computes the
-- same in Node for its answers (src/catalogue/pets.ts, petETag); this one compares If-Match in
-- the statement that writes, under the row's lock. test/api/updatePet.test.ts holds the
-- two equal. It changes whenever the representation does (any write to name, category_id
-- or status, by the service or around it, rebuilds as_json), and only then.
-- STABLE, not IMMUTABLE: convert_to is declared STABLE.
CREATE FUNCTION pet_etag(as_json text) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT '"' || translate(encode(substr(sha256(convert_to(as_json, 'UTF8')), 1, 16), 'base64'), '+/=', '-_') || '"'
$$;

-- The inventory counts pets that are not removed (docs/decisions/0004-inventory-fold.md):
-- a removal is an UPDATE that sets deleted_at, so its statement's transition tables show
-- the pet in old_rows (counted) and new_rows (removed): it leaves its status's count. A row
-- written already removed (psql) counts nowhere. No pet is removed before this migration
-- commits (the column is new), so the totals need no recount.
CREATE OR REPLACE FUNCTION pets_count_statuses() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO pet_status_changes (status, n) SELECT coalesce(status, 'none'), count(*) FROM new_rows WHERE deleted_at IS NULL GROUP BY 1;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO pet_status_changes (status, n) SELECT coalesce(status, 'none'), -count(*) FROM old_rows WHERE deleted_at IS NULL GROUP BY 1;
  ELSE
    INSERT INTO pet_status_changes (status, n)
    SELECT s, sum(d) FROM (
      SELECT coalesce(status, 'none') AS s, 1 AS d FROM new_rows WHERE deleted_at IS NULL
      UNION ALL SELECT coalesce(status, 'none'), -1 FROM old_rows WHERE deleted_at IS NULL
    ) AS changed GROUP BY s HAVING sum(d) <> 0;
  END IF;
  RETURN NULL;
END;
$$;

-- Down Migration
-- Removed pets come back into the catalogue: the totals are counted again from every pet,
-- with writers held off (invariant 5 of docs/decisions/0004-inventory-fold.md).
LOCK TABLE pets IN SHARE ROW EXCLUSIVE MODE;
CREATE OR REPLACE FUNCTION pets_count_statuses() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO pet_status_changes (status, n) SELECT coalesce(status, 'none'), count(*) FROM new_rows GROUP BY 1;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO pet_status_changes (status, n) SELECT coalesce(status, 'none'), -count(*) FROM old_rows GROUP BY 1;
  ELSE
    INSERT INTO pet_status_changes (status, n)
    SELECT s, sum(d) FROM (
      SELECT coalesce(status, 'none') AS s, 1 AS d FROM new_rows
      UNION ALL SELECT coalesce(status, 'none'), -1 FROM old_rows
    ) AS changed GROUP BY s HAVING sum(d) <> 0;
  END IF;
  RETURN NULL;
END;
$$;
DROP FUNCTION pet_etag(text);
DROP INDEX pets_category_id_idx;
ALTER TABLE pets DROP COLUMN deleted_at;
DELETE FROM pet_status_changes;
UPDATE pet_status_totals SET n = (SELECT count(*) FROM pets WHERE coalesce(pets.status, 'none') = pet_status_totals.status);
