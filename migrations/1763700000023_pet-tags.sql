-- Up Migration
-- Pets gain `tags` (the Pet schema's new field), and listPets' `tag` filter its index:
-- pet_tags, a row per tag a live or removed pet carries, kept by triggers on pets in the
-- statement that writes the pet, so a pet is found by `tag` as soon as its 201 or 200 is
-- answered, on every instance.
--
-- Invariants:
-- 1. pet_tags holds (tag, pet_id) exactly for the tags of pets.tags: the two triggers below
--    write it in the statement that writes the pet (a removal keeps both: listPets skips
--    removed pets by pets.deleted_at).
-- 2. A pet without tags has NULL tags, never `{}`: its row stores nothing for them (a bit of
--    the null bitmap), the insert trigger's WHEN leaves it out, and pet_json leaves the field
--    out.
-- 3. Tags are checked by the contract (Tag, Tags: at most 10, each at most once, lowercase
--    letters, digits and single hyphens) on every way in (createPet, batchCreatePets,
--    updatePet, imports): the table holds no CHECK, whose test each insert would pay.
--
-- Waits at most 1 s for the table (a transaction holding pets longer makes the migration
-- fail, and the next start tries again).
SET LOCAL lock_timeout = '1s';

ALTER TABLE pets ADD COLUMN tags text[];

CREATE TABLE pet_tags (
  tag    text NOT NULL,
  pet_id bigint NOT NULL,
  PRIMARY KEY (tag, pet_id)
);

CREATE FUNCTION pet_tags_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO pet_tags (tag, pet_id) SELECT DISTINCT t, NEW.id FROM unnest(NEW.tags) AS t;
  RETURN NULL;
END;
$$;

CREATE FUNCTION pet_tags_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM pet_tags WHERE pet_id = NEW.id AND tag = ANY (coalesce(OLD.tags, '{}')) AND NOT tag = ANY (coalesce(NEW.tags, '{}'));
  INSERT INTO pet_tags (tag, pet_id) SELECT DISTINCT t, NEW.id FROM unnest(NEW.tags) AS t WHERE NOT t = ANY (coalesce(OLD.tags, '{}'))
    ON CONFLICT DO NOTHING;
  RETURN NULL;
END;
$$;

CREATE TRIGGER pets_tags_inserted AFTER INSERT ON pets FOR EACH ROW WHEN (NEW.tags IS NOT NULL) EXECUTE FUNCTION pet_tags_inserted();
CREATE TRIGGER pets_tags_changed AFTER UPDATE OF tags ON pets FOR EACH ROW WHEN (OLD.tags IS DISTINCT FROM NEW.tags) EXECUTE FUNCTION pet_tags_changed();

-- generated/pet-json.sql, as it is there.
CREATE OR REPLACE FUNCTION pet_json(p pets) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT '{"id":' || (p).id || ',"name":' || to_json((p).name) || ',"categoryId":' || (p).category_id
    || coalesce(',"status":' || to_json((p).status), '')
    || coalesce(',"tags":' || to_json(NULLIF((p).tags, '{}')), '') || '}'
$$;

-- Down Migration
SET LOCAL lock_timeout = '1s';
CREATE OR REPLACE FUNCTION pet_json(p pets) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT '{"id":' || (p).id || ',"name":' || to_json((p).name) || ',"categoryId":' || (p).category_id
    || coalesce(',"status":' || to_json((p).status), '') || '}'
$$;
DROP TRIGGER pets_tags_changed ON pets;
DROP TRIGGER pets_tags_inserted ON pets;
DROP FUNCTION pet_tags_changed();
DROP FUNCTION pet_tags_inserted();
DROP TABLE pet_tags;
ALTER TABLE pets DROP COLUMN tags;
