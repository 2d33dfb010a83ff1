-- Up Migration
-- The append order without the register (docs/decisions/0001-append-order.md). Before, each
-- writer raised one register shared by every table to its own transaction id, under one
-- advisory lock that every writer of the cluster's database queued for. Now a writer makes
-- its own transaction id fall below every later snapshot's xmax before it draws (the
-- horizon), and each row records the xmax of a snapshot taken after its id was drawn.
--
-- Invariants (the decision record proves them):
-- 1. A writer holds its mark (table and partition) from before it draws its first id until
--    its transaction ends.
-- 2. Before a writer draws, a transaction id above its own has ended: every snapshot taken
--    from then on lists the writer among its running transactions while it runs.
-- 3. `visible_after` of a row is above the transaction id of every writer that drew an id
--    before it, and at most the xmax of any snapshot that sees the row: in READ COMMITTED,
--    the xmax of a snapshot taken after the row's id was drawn; in a transaction that keeps
--    one snapshot (REPEATABLE READ, SERIALIZABLE), a sub-transaction id drawn after it.
-- A row is final for a snapshot when `visible_after` is at most its xmin, or at most its
-- oldest running transaction that holds the table's mark or has committed since.
--
-- Upgrading: an instance of the earlier version reads the register this drops; its pages
-- fail from then on. Stop the earlier instances before this migration runs. Rows written
-- before keep their `visible_after` (the register then): each is at least the id of every
-- writer that drew before the row, and every such writer has ended once this migration holds
-- its locks.
SET LOCAL lock_timeout = '1s';

-- No writer of an append-ordered table is running while this runs.
LOCK TABLE pets, orders, events, api_keys, webhook_endpoints, webhook_deliveries IN SHARE ROW EXCLUSIVE MODE;

-- What a writer inserts in a sub-transaction it rolls back, to end a transaction id above its
-- own (invariant 2). No row of it is ever committed or read; vacuum takes the dead ones.
-- Unlogged: no WAL, and emptied after a crash, which loses nothing. Each write transaction
-- that passes the horizon leaves one dead row (about 32 bytes): autovacuum takes them from
-- every 10,000 on (docs/production.md: with autovacuum off, vacuum it as the other tables).
-- Vacuum never truncates it: that would take a lock every writer's insert waits for.
CREATE UNLOGGED TABLE append_order_horizon ();
ALTER TABLE append_order_horizon SET (autovacuum_vacuum_threshold = 10000, autovacuum_vacuum_scale_factor = 0, vacuum_truncate = false);

-- Ends a sub-transaction id drawn now, above every transaction id drawn before, and returns
-- it. The insert draws the id; the raise rolls the sub-block back, which ends it.
CREATE FUNCTION append_order_end_id() RETURNS xid8 LANGUAGE plpgsql AS $$
DECLARE
  top xid8 := pg_current_xact_id();
  sub bigint;
BEGIN
  BEGIN
    INSERT INTO append_order_horizon DEFAULT VALUES RETURNING xmin::text::bigint INTO sub;
    RAISE SQLSTATE 'AO000';
  EXCEPTION WHEN SQLSTATE 'AO000' THEN
    NULL;
  END;
  -- xmin is the sub-transaction's 32-bit id; it follows the top one, within one wrap of it.
  RETURN (top::text::bigint + ((sub - top::text::bigint % 4294967296) + 4294967296) % 4294967296)::text::xid8;
END;
$$;

-- Invariant 2, for the running transaction: skipped when a later transaction has already
-- ended (a fresh snapshot's xmax is above this one's id; in READ COMMITTED every statement
-- of a function takes a fresh snapshot, in the other levels the check fails and it ends one).
-- The insert draws a sub-transaction id, above this one; the raise rolls the sub-block back,
-- which ends it. It is append_order_end_id's sub-block without reading the id back, written
-- out here because every writer that is the newest transaction runs it.
CREATE FUNCTION append_order_advance(me xid8) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF pg_snapshot_xmax(pg_current_snapshot()) <= me THEN
    BEGIN
      INSERT INTO append_order_horizon DEFAULT VALUES;
      RAISE SQLSTATE 'AO000';
    EXCEPTION WHEN SQLSTATE 'AO000' THEN
      NULL;
    END;
  END IF;
END;
$$;

-- Statement-level, for a table paged whole: the mark, then the horizon.
CREATE OR REPLACE FUNCTION append_order_mark() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me xid8 := pg_current_xact_id();
BEGIN
  PERFORM pg_advisory_xact_lock(append_order_key(TG_TABLE_NAME, 0), (me::text::bigint % 2147483648)::int);
  PERFORM append_order_advance(me);
  RETURN NULL;
END;
$$;

-- Each row: its id, then `visible_after` (invariant 3: in READ COMMITTED, each expression of
-- a function takes a fresh snapshot). A partitioned table marks here, once per
-- transaction and partition (a transaction-local setting as the flag, undone with the
-- (sub)transaction that set it, as the lock taken with it is), and advances the horizon.
CREATE OR REPLACE FUNCTION append_order_assign() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me xid8;
  part bigint;
  marked text;
BEGIN
  IF TG_NARGS > 0 THEN
    part := (to_jsonb(NEW) ->> TG_ARGV[0])::bigint;
    marked := 'append_order.' || TG_TABLE_NAME || '_' || part;
    IF current_setting(marked, true) IS DISTINCT FROM 'y' THEN
      me := pg_current_xact_id();
      PERFORM pg_advisory_xact_lock(append_order_key(TG_TABLE_NAME, part), (me::text::bigint % 2147483648)::int);
      PERFORM append_order_advance(me);
      PERFORM set_config(marked, 'y', true);
    END IF;
  END IF;
  NEW.id := nextval((TG_TABLE_NAME || '_id_seq')::regclass);
  IF current_setting('transaction_isolation') = 'read committed' THEN
    NEW.visible_after := pg_snapshot_xmax(pg_current_snapshot());
  ELSE
    NEW.visible_after := append_order_end_id();
  END IF;
  RETURN NEW;
END;
$$;

-- For a reader whose snapshot is `snap`, the transaction id from which `tbl`'s rows (of
-- partition `part`) are not yet final: a row whose `visible_after` is at most it has every
-- lower id settled (visible to `snap`, or never to appear). NULL: every row is final.
-- - On the primary: the oldest running transaction of the snapshot that holds its mark (it
--   is writing this table), or that committed since the snapshot was taken (its rows are
--   committed and not seen). The mark is tried in shared mode, which never waits and never
--   conflicts with another reader's try; a writer that has not marked yet then waits for
--   the reader's transaction to end before it draws (a page read inside a longer
--   transaction, as a relay's, holds such a writer that long).
-- - On a standby, where the primary's locks cannot be seen: the snapshot's xmin (every
--   running transaction counts). src/catalogue/pets.ts asks the primary for a page cut short there.
CREATE FUNCTION append_order_frontier(tbl text, part bigint, snap pg_snapshot) RETURNS xid8 LANGUAGE plpgsql AS $$
DECLARE
  x xid8;
  k int := append_order_key(tbl, part);
BEGIN
  IF pg_is_in_recovery() THEN
    RETURN pg_snapshot_xmin(snap);
  END IF;
  FOR x IN SELECT t FROM pg_snapshot_xip(snap) AS t ORDER BY t LOOP
    IF NOT pg_try_advisory_xact_lock_shared(k, (x::text::bigint % 2147483648)::int) THEN
      RETURN x;
    END IF;
    IF pg_xact_status(x) = 'committed' THEN
      RETURN x;
    END IF;
  END LOOP;
  RETURN NULL;
END;
$$;

DROP FUNCTION orders_frontier(bigint, pg_snapshot, xid8);
DROP FUNCTION append_order_frontier(text, bigint, pg_snapshot, xid8);
DROP FUNCTION append_order_raise(text, bigint);
DROP SEQUENCE append_order_newest_writer_seq;

-- Down Migration
SET LOCAL lock_timeout = '1s';
LOCK TABLE pets, orders, events, api_keys, webhook_endpoints, webhook_deliveries IN SHARE ROW EXCLUSIVE MODE;
-- The register starts above every transaction id drawn so far: every row written under the
-- horizon has a `visible_after` below it, as the register's rule asks.
CREATE SEQUENCE append_order_newest_writer_seq MINVALUE 0 START 0;
SELECT setval('append_order_newest_writer_seq', pg_current_xact_id()::text::bigint);
CREATE FUNCTION append_order_raise(tbl text, me bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('append_order:register')::bigint);
  PERFORM setval('append_order_newest_writer_seq', greatest(me, coalesce(pg_sequence_last_value('append_order_newest_writer_seq'), 0)));
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
  IF coalesce(pg_sequence_last_value('append_order_newest_writer_seq'), 0) < me THEN
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
CREATE FUNCTION orders_frontier(api_key bigint, snap pg_snapshot, upto xid8) RETURNS xid8
  LANGUAGE sql AS $$ SELECT append_order_frontier('orders', api_key, snap, upto) $$;
DROP FUNCTION append_order_frontier(text, bigint, pg_snapshot);
DROP FUNCTION append_order_advance(xid8);
DROP FUNCTION append_order_end_id();
DROP TABLE append_order_horizon;
