-- Up Migration
-- The append order's writer side, once per statement instead of once per row (decision record
-- docs/decisions/0001-append-order.md, "What a write costs"; the invariants and their proof are
-- there and unchanged): a table paged whole marks and registers in a statement-level trigger,
-- and its row trigger only draws the id and reads the register. Before, every row asked two
-- transaction-local settings whether its transaction had marked yet.
--
-- A table joins with `SELECT append_order_join('<table>')`, or
-- `SELECT append_order_join('<table>', '<partition column>')` when each caller pages only its
-- own rows (orders, by api_key_id). The table brings an `id bigint` primary key, a
-- `visible_after xid8 NOT NULL` column, and the sequences `<table>_id_seq` and
-- `<table>_newest_writer_seq` (MINVALUE 0 START 0).
--
-- Invariants (the decision record proves them):
-- 1. A writer holds its mark from before it draws its first id until its transaction ends:
--    the statement-level trigger runs before any row of its statement (the lock is
--    transaction-scoped and re-entrant, so a later statement of the same transaction only
--    counts it again).
-- 2. Before a statement draws, the register is at least its transaction id: raised in the
--    statement-level trigger, or already there (it only ever grows).
-- 3. `visible_after` of a row is the register read after the row's id was drawn.

-- The mark, then the register raised to at least this transaction's id, once per statement,
-- for a table paged whole. The register's critical section (append_order_raise) is skipped
-- when the register is already there.
CREATE FUNCTION append_order_raise(tbl text, me bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  -- A transaction-scoped lock taken in a sub-block that always ends by raising: the
  -- sub-transaction rolls back, which releases the lock at once, while setval (never rolled
  -- back) keeps its value. A cancel anywhere rolls back the sub-block or the whole
  -- transaction, and the lock with it.
  PERFORM pg_advisory_xact_lock(hashtext('append_order:' || tbl)::bigint);
  PERFORM setval((tbl || '_newest_writer_seq')::regclass, greatest(me, coalesce(pg_sequence_last_value((tbl || '_newest_writer_seq')::regclass), 0)));
  RAISE SQLSTATE 'AO000';
EXCEPTION WHEN SQLSTATE 'AO000' THEN
  NULL;
END;
$$;

CREATE FUNCTION append_order_mark() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- Each row: its id, then `visible_after`. A partitioned table (the argument names the
-- partition column) marks and registers here, once per transaction and partition, with
-- transaction-local settings as flags (undone with the (sub)transaction that set them, as the
-- lock taken with them is). An id or visible_after given in the INSERT is overwritten.
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

-- Joins a table to the append order: its triggers.
CREATE FUNCTION append_order_join(tbl regclass, partition_column text DEFAULT NULL) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  name text := (SELECT relname FROM pg_class WHERE oid = tbl);
BEGIN
  IF partition_column IS NULL THEN
    EXECUTE format('CREATE TRIGGER %I BEFORE INSERT ON %s FOR EACH STATEMENT EXECUTE FUNCTION append_order_mark()', name || '_append_order_mark', tbl);
    EXECUTE format('CREATE TRIGGER %I BEFORE INSERT ON %s FOR EACH ROW EXECUTE FUNCTION append_order_assign()', name || '_append_order', tbl);
  ELSE
    EXECUTE format('CREATE TRIGGER %I BEFORE INSERT ON %s FOR EACH ROW EXECUTE FUNCTION append_order_assign(%L)', name || '_append_order', tbl, partition_column);
  END IF;
END;
$$;

-- pets, paged whole, gain the statement-level mark; orders keep their row trigger with the
-- partition column.
CREATE TRIGGER pets_append_order_mark BEFORE INSERT ON pets FOR EACH STATEMENT EXECUTE FUNCTION append_order_mark();

-- Down Migration
DROP TRIGGER pets_append_order_mark ON pets;
DROP FUNCTION append_order_join(regclass, text);
CREATE OR REPLACE FUNCTION append_order_assign() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me bigint;
  part bigint := 0;
  marked text;
  registered text := 'append_order.' || TG_TABLE_NAME;
BEGIN
  IF TG_NARGS > 0 THEN
    part := (to_jsonb(NEW) ->> TG_ARGV[0])::bigint;
  END IF;
  marked := registered || '_' || part;
  IF current_setting(marked, true) IS DISTINCT FROM 'y' THEN
    me := pg_current_xact_id()::text::bigint;
    PERFORM pg_advisory_xact_lock(append_order_key(TG_TABLE_NAME, part), (me % 2147483648)::int);
    IF current_setting(registered, true) IS DISTINCT FROM 'y' THEN
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
DROP FUNCTION append_order_mark();
DROP FUNCTION append_order_raise(text, bigint);
