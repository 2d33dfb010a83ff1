-- Up Migration
-- listPets pages by id (keyset) and promises that a client following rel="next" gets every
-- pet exactly once, even while pets are being added. That needs pets to become visible in
-- id order. Identity values are drawn when a row is inserted, but a row becomes visible
-- when its transaction commits, and transactions on different connections (or different
-- instances) commit in any order: id 13479 could commit after 13480-13484, and a reader
-- whose page ended at 13484 would never see it.
--
-- So every statement that inserts pets first takes one transaction-scoped advisory lock,
-- before any id is drawn (a BEFORE ... FOR EACH STATEMENT trigger fires before the statement
-- produces its first row), and holds it until its transaction ends. Inserts into pets
-- therefore run one transaction at a time, and ids become visible in the order they were
-- drawn, from this service or any other writer (psql, a second service, a data load).
-- Replaced by 1763700000008 (docs/decisions/0001-append-order.md): this lock made every
-- writer wait for the slowest transaction that had inserted a pet.
CREATE FUNCTION pets_insert_in_id_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- 0x70657473 is 'pets'; the one lock key of this table's writers.
  PERFORM pg_advisory_xact_lock(1885697139);
  RETURN NULL;
END;
$$;

CREATE TRIGGER pets_insert_in_id_order
  BEFORE INSERT ON pets
  FOR EACH STATEMENT EXECUTE FUNCTION pets_insert_in_id_order();

-- Down Migration
DROP TRIGGER pets_insert_in_id_order ON pets;
DROP FUNCTION pets_insert_in_id_order();
