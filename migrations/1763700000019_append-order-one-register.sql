-- Up Migration
-- One register for every append-ordered table (docs/decisions/0001-append-order.md): a
-- transaction that writes pets and their events, or an order, its pet and their events,
-- raises one register once, not one per table. The marks stay per table and partition.
--
-- The invariants are those of migration 1763700000011, with "the register" now
-- `append_order_newest_writer_seq`:
-- 1. A writer holds its mark (table and partition) from before it draws its first id until
--    its transaction ends.
-- 2. Before a statement draws, the register is at least its transaction id.
-- 3. `visible_after` of a row is the register read after the row's id was drawn.
-- A register that is larger than a table's own writers need only makes a reader ask the
-- marks of more transactions; it never makes a row final early.
--
-- Upgrading: an instance of the earlier version reads `<table>_newest_writer_seq`, which
-- this drops; its pages of pets, orders, events, keys and webhooks fail from then on. Stop
-- the earlier instances before this migration runs.
SET LOCAL lock_timeout = '1s';

-- No writer of an append-ordered table raises or reads a register while this runs.
LOCK TABLE pets, orders, events, api_keys, webhook_endpoints, webhook_deliveries IN SHARE ROW EXCLUSIVE MODE;

CREATE SEQUENCE append_order_newest_writer_seq MINVALUE 0 START 0;
SELECT setval('append_order_newest_writer_seq', max(coalesce(pg_sequence_last_value(c.oid), 0)))
FROM pg_class c WHERE c.relkind = 'S' AND c.relname LIKE '%\_newest\_writer\_seq' AND c.relname <> 'append_order_newest_writer_seq';

CREATE OR REPLACE FUNCTION append_order_raise(tbl text, me bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  -- A transaction-scoped lock taken in a sub-block that always ends by raising: the
  -- sub-transaction rolls back, which releases the lock at once, while setval (never rolled
  -- back) keeps its value. A cancel anywhere rolls back the sub-block or the whole
  -- transaction, and the lock with it. (`tbl` is kept for the callers' signature.)
  PERFORM pg_advisory_xact_lock(hashtext('append_order:register')::bigint);
  PERFORM setval('append_order_newest_writer_seq', greatest(me, coalesce(pg_sequence_last_value('append_order_newest_writer_seq'), 0)));
  RAISE SQLSTATE 'AO000';
EXCEPTION WHEN SQLSTATE 'AO000' THEN
  NULL;
END;
$$;

-- Statement-level, for a table paged whole: the mark, then the register raised when it is
-- not yet at this transaction's id (another writer with a later id may have raised it).
CREATE OR REPLACE FUNCTION append_order_mark() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me bigint := pg_current_xact_id()::text::bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(append_order_key(TG_TABLE_NAME, 0), (me % 2147483648)::int);
  IF coalesce(pg_sequence_last_value('append_order_newest_writer_seq'), 0) < me THEN
    PERFORM append_order_raise(TG_TABLE_NAME, me);
  END IF;
  RETURN NULL;
END;
$$;

-- Each row: its id, then `visible_after`. A partitioned table marks here, once per
-- transaction and partition (a transaction-local setting as the flag, undone with the
-- (sub)transaction that set it, as the lock taken with it is), and raises the register when
-- it is not yet at this transaction's id.
CREATE OR REPLACE FUNCTION append_order_assign() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me bigint;
  part bigint;
  marked text;
BEGIN
  IF TG_NARGS > 0 THEN
    part := (to_jsonb(NEW) ->> TG_ARGV[0])::bigint;
    marked := 'append_order.' || TG_TABLE_NAME || '_' || part;
    IF current_setting(marked, true) IS DISTINCT FROM 'y' THEN
      me := pg_current_xact_id()::text::bigint;
      PERFORM pg_advisory_xact_lock(append_order_key(TG_TABLE_NAME, part), (me % 2147483648)::int);
      IF coalesce(pg_sequence_last_value('append_order_newest_writer_seq'), 0) < me THEN
        PERFORM append_order_raise(TG_TABLE_NAME, me);
      END IF;
      PERFORM set_config(marked, 'y', true);
    END IF;
  END IF;
  NEW.id := nextval((TG_TABLE_NAME || '_id_seq')::regclass);
  NEW.visible_after := pg_sequence_last_value('append_order_newest_writer_seq')::text::xid8;
  RETURN NEW;
END;
$$;

DROP SEQUENCE pets_newest_writer_seq, orders_newest_writer_seq, events_newest_writer_seq,
  api_keys_newest_writer_seq, webhook_endpoints_newest_writer_seq, webhook_deliveries_newest_writer_seq;

-- Down Migration
SET LOCAL lock_timeout = '1s';
LOCK TABLE pets, orders, events, api_keys, webhook_endpoints, webhook_deliveries IN SHARE ROW EXCLUSIVE MODE;
CREATE SEQUENCE pets_newest_writer_seq MINVALUE 0 START 0;
CREATE SEQUENCE orders_newest_writer_seq MINVALUE 0 START 0;
CREATE SEQUENCE events_newest_writer_seq MINVALUE 0 START 0;
CREATE SEQUENCE api_keys_newest_writer_seq MINVALUE 0 START 0;
CREATE SEQUENCE webhook_endpoints_newest_writer_seq MINVALUE 0 START 0;
CREATE SEQUENCE webhook_deliveries_newest_writer_seq MINVALUE 0 START 0;
SELECT setval(s, coalesce(pg_sequence_last_value('append_order_newest_writer_seq'), 0))
FROM unnest(ARRAY['pets_newest_writer_seq', 'orders_newest_writer_seq', 'events_newest_writer_seq', 'api_keys_newest_writer_seq', 'webhook_endpoints_newest_writer_seq', 'webhook_deliveries_newest_writer_seq']::regclass[]) AS s;
CREATE OR REPLACE FUNCTION append_order_raise(tbl text, me bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('append_order:' || tbl)::bigint);
  PERFORM setval((tbl || '_newest_writer_seq')::regclass, greatest(me, coalesce(pg_sequence_last_value((tbl || '_newest_writer_seq')::regclass), 0)));
  RAISE SQLSTATE 'AO000';
EXCEPTION WHEN SQLSTATE 'AO000' THEN
  NULL;
END;
$$;
CREATE OR REPLACE FUNCTION append_order_mark() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me bigint := pg_current_xact_id()::text::bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(append_order_key(TG_TABLE_NAME, 0), (me % 2147483648)::int);
  IF coalesce(pg_sequence_last_value((TG_TABLE_NAME || '_newest_writer_seq')::regclass), 0) < me THEN
    PERFORM append_order_raise(TG_TABLE_NAME, me);
  END IF;
  RETURN NULL;
END;
$$;
CREATE OR REPLACE FUNCTION append_order_assign() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me bigint;
  part bigint;
  marked text;
  registered text;
BEGIN
  IF TG_NARGS > 0 THEN
    part := (to_jsonb(NEW) ->> TG_ARGV[0])::bigint;
    registered := 'append_order.' || TG_TABLE_NAME;
    marked := registered || '_' || part;
    IF current_setting(marked, true) IS DISTINCT FROM 'y' THEN
      me := pg_current_xact_id()::text::bigint;
      PERFORM pg_advisory_xact_lock(append_order_key(TG_TABLE_NAME, part), (me % 2147483648)::int);
      IF current_setting(registered, true) IS DISTINCT FROM 'y' THEN
        PERFORM append_order_raise(TG_TABLE_NAME, me);
        PERFORM set_config(registered, 'y', true);
      END IF;
      PERFORM set_config(marked, 'y', true);
    END IF;
  END IF;
  NEW.id := nextval((TG_TABLE_NAME || '_id_seq')::regclass);
  NEW.visible_after := pg_sequence_last_value((TG_TABLE_NAME || '_newest_writer_seq')::regclass)::text::xid8;
  RETURN NEW;
END;
$$;
DROP SEQUENCE append_order_newest_writer_seq;
