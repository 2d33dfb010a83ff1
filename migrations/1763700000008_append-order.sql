-- Up Migration
-- One mechanism for "every row exactly once, in id order", for every table whose rows are
-- appended with ids the database assigns and paged by id (pets, orders, and the tables to
-- come). Writers never wait for each other's transactions; a transaction left open delays
-- only when its rows, and the rows after them, appear in pages.
-- docs/decisions/0001-append-order.md states the problem, the choice, the alternatives and
-- the invariants; this migration installs it and moves pets and orders onto it.
--
-- A table joins with: an `id bigint` primary key drawn from `<table>_id_seq`, a
-- `visible_after xid8 NOT NULL` column, a `<table>_newest_writer_seq` sequence
-- (MINVALUE 0 START 0), and the trigger
--   BEFORE INSERT ON <table> FOR EACH ROW EXECUTE FUNCTION append_order_assign(['<partition column>'])
-- Its pages read `visible_after` and ask `append_order_frontier` (src/db/append-order.ts).

-- The advisory-lock key of a table's writers (of one partition: orders are paged per API key).
CREATE FUNCTION append_order_key(tbl text, part bigint) RETURNS int
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT hashtext(tbl || ':' || part) $$;

-- Invariants (the decision record proves them):
-- 1. A writer holds its mark (an advisory lock on its table/partition and its own
--    transaction id: no other writer ever takes it) from before it draws its first id until
--    its transaction ends.
-- 2. Before its first draw, the writer has made `<table>_newest_writer_seq` at least its own
--    transaction id. setval is never rolled back, and the raise below only max-updates it.
-- 3. `visible_after` of a row is that register read after the row's id was drawn, so it is
--    at least the transaction id of every writer that drew a lower id.
CREATE FUNCTION append_order_assign() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me bigint;
  part bigint := 0;
  marked text;
  registered text := 'append_order.' || TG_TABLE_NAME;
BEGIN
  IF TG_NARGS > 0 THEN
    part := (to_jsonb(NEW) ->> TG_ARGV[0])::bigint;
  END IF;
  -- Once per transaction (and partition): the flags are transaction-local settings, undone
  -- with the (sub)transaction that set them, as the lock taken with them is.
  marked := registered || '_' || part;
  IF current_setting(marked, true) IS DISTINCT FROM 'y' THEN
    me := pg_current_xact_id()::text::bigint;
    PERFORM pg_advisory_xact_lock(append_order_key(TG_TABLE_NAME, part), (me % 2147483648)::int);
    IF current_setting(registered, true) IS DISTINCT FROM 'y' THEN
      -- The register's max-update is a critical section of a few microseconds, once per
      -- transaction and table. Its lock is transaction-scoped and taken in a sub-block that
      -- always ends by raising: the sub-transaction rolls back, which releases the lock at
      -- once, while setval (never rolled back) keeps its value. A cancel anywhere rolls back
      -- the sub-block or the whole transaction, and the lock with it: nothing outlives it.
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('append_order:' || TG_TABLE_NAME)::bigint);
        PERFORM setval((TG_TABLE_NAME || '_newest_writer_seq')::regclass, greatest(me, coalesce(pg_sequence_last_value((TG_TABLE_NAME || '_newest_writer_seq')::regclass), 0)));
        RAISE SQLSTATE 'AO000';
      EXCEPTION WHEN SQLSTATE 'AO000' THEN
        NULL;
      END;
      PERFORM set_config(registered, 'y', true);
    END IF;
    PERFORM set_config(marked, 'y', true);
  END IF;
  NEW.id := nextval((TG_TABLE_NAME || '_id_seq')::regclass);
  NEW.visible_after := pg_sequence_last_value((TG_TABLE_NAME || '_newest_writer_seq')::regclass)::text::xid8;
  RETURN NEW;
END;
$$;

-- For a reader whose snapshot is `snap`, the transaction id from which `tbl`'s rows (of
-- partition `part`) are not yet final: a row whose `visible_after` is below it has every
-- lower id settled (visible to `snap`, or never to appear). NULL: every row is final.
-- `upto` is the largest `visible_after` the reader holds; transactions above it are not asked.
-- - On the primary: the oldest transaction of the snapshot, up to `upto`, that holds its
--   mark (it is writing this table), or that committed since the snapshot was taken (its rows
--   are committed and not seen). The mark is tried in shared mode, which never waits and
--   never conflicts with another reader's try; a writer that has not marked yet then waits
--   for this statement before it draws.
--   Transactions at or above the snapshot's xmax are not listed in it: from there on, every
--   row waits.
-- - On a standby, where the primary's locks cannot be seen: the snapshot's xmin (every
--   running transaction counts). src/catalogue/pets.ts asks the primary for a page cut short there.
CREATE FUNCTION append_order_frontier(tbl text, part bigint, snap pg_snapshot, upto xid8) RETURNS xid8 LANGUAGE plpgsql AS $$
DECLARE
  x xid8;
  k int := append_order_key(tbl, part);
BEGIN
  IF upto IS NULL OR upto < pg_snapshot_xmin(snap) THEN
    RETURN NULL;
  END IF;
  IF pg_is_in_recovery() THEN
    RETURN pg_snapshot_xmin(snap);
  END IF;
  FOR x IN SELECT t FROM pg_snapshot_xip(snap) AS t WHERE t <= upto ORDER BY t LOOP
    IF NOT pg_try_advisory_xact_lock_shared(k, (x::text::bigint % 2147483648)::int) THEN
      RETURN x;
    END IF;
    IF pg_xact_status(x) = 'committed' THEN
      RETURN x;
    END IF;
  END LOOP;
  IF upto >= pg_snapshot_xmax(snap) THEN
    RETURN pg_snapshot_xmax(snap);
  END IF;
  RETURN NULL;
END;
$$;

-- Pets: inserts no longer take one lock until they commit (1763700000004). Their ids are
-- drawn by the trigger from the identity's sequence, continued where it stood.
LOCK TABLE pets IN ACCESS EXCLUSIVE MODE;
DROP TRIGGER pets_insert_in_id_order ON pets;
DROP FUNCTION pets_insert_in_id_order();
CREATE SEQUENCE pets_next_id MAXVALUE 9007199254740991;
SELECT setval('pets_next_id', last_value, is_called) FROM pets_id_seq;
ALTER TABLE pets ALTER COLUMN id DROP IDENTITY;
ALTER SEQUENCE pets_next_id RENAME TO pets_id_seq;
ALTER SEQUENCE pets_id_seq OWNED BY pets.id;
-- Rows already stored are final to every reader: '0' is below any transaction id.
ALTER TABLE pets ADD COLUMN visible_after xid8 NOT NULL DEFAULT '0';
ALTER TABLE pets ALTER COLUMN visible_after DROP DEFAULT;
CREATE SEQUENCE pets_newest_writer_seq MINVALUE 0 START 0;
CREATE TRIGGER pets_append_order BEFORE INSERT ON pets FOR EACH ROW EXECUTE FUNCTION append_order_assign();

-- Orders: the same mechanism, partitioned by API key (listOrders pages one key's orders).
-- orders_newest_writer_seq keeps the value it has.
LOCK TABLE orders IN ACCESS EXCLUSIVE MODE;
DROP TRIGGER orders_assign_id ON orders;
DROP FUNCTION orders_assign_id();
CREATE TRIGGER orders_append_order BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION append_order_assign('api_key_id');
-- An instance of the previous version, still running during a rolling upgrade, asks this.
CREATE OR REPLACE FUNCTION orders_frontier(api_key bigint, snap pg_snapshot, upto xid8) RETURNS xid8
  LANGUAGE sql AS $$ SELECT append_order_frontier('orders', api_key, snap, upto) $$;

-- Down Migration
DROP TRIGGER orders_append_order ON orders;
CREATE FUNCTION orders_assign_id() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me bigint := pg_current_xact_id()::text::bigint;
  newest bigint;
BEGIN
  PERFORM pg_advisory_xact_lock_shared((NEW.api_key_id % 2147483648)::int, (me % 2147483648)::int);
  BEGIN
    PERFORM pg_advisory_xact_lock(1869771891);
    NEW.id := nextval('orders_id_seq');
    newest := greatest(me, (SELECT last_value FROM orders_newest_writer_seq));
    PERFORM setval('orders_newest_writer_seq', newest);
    RAISE SQLSTATE 'OR000';
  EXCEPTION WHEN SQLSTATE 'OR000' THEN
    NULL;
  END;
  NEW.visible_after := newest::text::xid8;
  RETURN NEW;
END;
$$;
CREATE TRIGGER orders_assign_id BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION orders_assign_id();
CREATE OR REPLACE FUNCTION orders_frontier(api_key bigint, snap pg_snapshot, upto xid8) RETURNS xid8 LANGUAGE plpgsql AS $$
DECLARE
  x xid8;
BEGIN
  FOR x IN SELECT t FROM pg_snapshot_xip(snap) AS t WHERE t <= upto ORDER BY t LOOP
    IF NOT pg_try_advisory_xact_lock((api_key % 2147483648)::int, (x::text::bigint % 2147483648)::int) THEN
      RETURN x;
    END IF;
    IF pg_xact_status(x) = 'committed' THEN
      RETURN x;
    END IF;
  END LOOP;
  RETURN NULL;
END;
$$;
DROP TRIGGER pets_append_order ON pets;
DROP SEQUENCE pets_newest_writer_seq;
ALTER TABLE pets DROP COLUMN visible_after;
ALTER SEQUENCE pets_id_seq RENAME TO pets_previous_id;
ALTER TABLE pets ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (MAXVALUE 9007199254740991);
SELECT setval('pets_id_seq', last_value, is_called) FROM pets_previous_id;
DROP SEQUENCE pets_previous_id;
CREATE FUNCTION pets_insert_in_id_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(1885697139);
  RETURN NULL;
END;
$$;
CREATE TRIGGER pets_insert_in_id_order BEFORE INSERT ON pets FOR EACH STATEMENT EXECUTE FUNCTION pets_insert_in_id_order();
DROP FUNCTION append_order_frontier(text, bigint, pg_snapshot, xid8);
DROP FUNCTION append_order_assign();
DROP FUNCTION append_order_key(text, bigint);
