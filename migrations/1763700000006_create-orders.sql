-- Up Migration
-- The store's orders (contract 1.2.0). An order holds one pet: placing it moves the pet
-- from `available` to `pending` in the same transaction; completing it sells the pet,
-- cancelling or expiring it makes the pet `available` again. Orders are never deleted.
CREATE SEQUENCE orders_id_seq MAXVALUE 9007199254740991;

CREATE TABLE orders (
  id            bigint PRIMARY KEY CHECK (id BETWEEN 1 AND 9007199254740991),
  -- The API key that placed it: only that key reads it (any other gets 404).
  api_key_id    bigint NOT NULL REFERENCES api_keys (id),
  pet_id        bigint NOT NULL REFERENCES pets (id),
  status        text   NOT NULL CHECK (status IN ('placed', 'completed', 'cancelled', 'expired')),
  placed_at     timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  closed_at     timestamptz,
  -- Where listOrders may page to: see orders_assign_id and orders_frontier below.
  visible_after xid8   NOT NULL,
  CHECK (expires_at > placed_at),
  CHECK ((status = 'placed') = (closed_at IS NULL))
);

-- A pet is held by at most one placed order, whoever writes the table.
CREATE UNIQUE INDEX orders_one_placed_per_pet ON orders (pet_id) WHERE status = 'placed';
-- listOrders: one key's orders in id order, optionally of one status or one pet.
CREATE INDEX orders_key_id_idx ON orders (api_key_id, id);
CREATE INDEX orders_key_status_id_idx ON orders (api_key_id, status, id);
CREATE INDEX orders_key_pet_id_idx ON orders (api_key_id, pet_id, id);
-- The expiry job: placed orders, by when they expire.
CREATE INDEX orders_placed_expiry_idx ON orders (expires_at) WHERE status = 'placed';

-- The id section below is replaced by 1763700000008, which serves every append-ordered
-- table the same way: docs/decisions/0001-append-order.md.
--
-- listOrders pages by id and promises every order exactly once, while orders are placed
-- in parallel on any instance. Ids are drawn when rows are inserted and rows become visible
-- when their transactions commit, in any order: a reader whose page ended at id 12 never
-- asks below 12 again, so an 11 that commits later would be skipped. Pets solve this by
-- inserting one transaction at a time (1763700000004); orders must not: placements never
-- wait for each other, nor for a long transaction that holds uncommitted orders.
--
-- So every insert draws its id here, in a critical section of a few microseconds (an
-- advisory lock taken and released inside this call, never held across a transaction:
-- see below), and records in `visible_after` the largest transaction id that has drawn
-- an order id so far, its own included. `visible_after` therefore never decreases as ids
-- increase, and is at least the id of the transaction that inserted the row. Before that,
-- the transaction takes a shared advisory lock that marks it as a writer of this API key's
-- orders until it ends (key: the API key and its own transaction id). orders_frontier
-- finds, for a reader's snapshot, the oldest transaction still writing that key's orders;
-- rows whose `visible_after` is below it are final (no row with a lower id can appear
-- later), and a page stops at the first row that is not.
CREATE SEQUENCE orders_newest_writer_seq MINVALUE 0 START 0;

CREATE FUNCTION orders_assign_id() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me bigint := pg_current_xact_id()::text::bigint;
  newest bigint;
BEGIN
  -- Taken first, outside the critical section: when a reader holds it for a moment, this
  -- waits without holding up other writers.
  PERFORM pg_advisory_xact_lock_shared((NEW.api_key_id % 2147483648)::int, (me % 2147483648)::int);
  -- The critical section. Its lock is transaction-scoped and taken in a sub-block that
  -- always ends by raising: the sub-transaction rolls back, which releases the lock at
  -- once, while nextval and setval (never rolled back) and the variables keep their values.
  -- A session lock released by hand could outlive the statement: a cancel (statement_timeout)
  -- is checked between statements, outside any handler, and a lock granted as the cancel
  -- lands is kept; every later placement would then wait on it until that connection closed.
  -- Here a cancel anywhere rolls back the sub-block or the whole transaction, and the lock
  -- with it. 0x6f726473, 'ords'.
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

-- The transaction id below which `api_key`'s orders are final for a reader whose snapshot is
-- `snap` (the reader's statement passes its own pg_current_snapshot()): the oldest
-- transaction, among those running in `snap` up to `upto`, that writes this key's orders
-- or may have. NULL when there is none: every row the snapshot sees is final.
-- For each running transaction: its writer mark held means it writes this key's orders;
-- free and still running, it had drawn no order id of this key when the mark was tried (it
-- waits for this reader's transaction before it can); ended since the snapshot, it may
-- have committed rows the snapshot does not see, so it counts, unless it aborted.
CREATE FUNCTION orders_frontier(api_key bigint, snap pg_snapshot, upto xid8) RETURNS xid8 LANGUAGE plpgsql AS $$
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

-- The inventory (getInventory, docs/decisions/0004-inventory-fold.md): how many pets have each status, exact and cheap at any
-- size. A single counter row per status would make every placement wait for the one
-- before it (its row lock is held until commit); instead each statement that changes pets
-- appends what it changed, and a job folds those rows into the totals now and then.
-- Counts are the totals plus the rows not folded yet, read in one snapshot.
CREATE TABLE pet_status_totals (
  status text PRIMARY KEY CHECK (status IN ('available', 'pending', 'sold', 'none')),
  n      bigint NOT NULL
);
CREATE TABLE pet_status_changes (
  id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  status text   NOT NULL CHECK (status IN ('available', 'pending', 'sold', 'none')),
  n      bigint NOT NULL
);

-- Counted with pets' writers held off until this migration commits (it runs in one
-- transaction): a pet inserted or changed by a running instance between the count and the
-- triggers below would otherwise be in neither, and the counts off for good. The count is
-- a scan of pets: seconds at 5 million, during which creates and placements wait.
LOCK TABLE pets IN SHARE ROW EXCLUSIVE MODE;
INSERT INTO pet_status_totals (status, n)
SELECT s, (SELECT count(*) FROM pets WHERE coalesce(pets.status, 'none') = s)
FROM unnest(ARRAY['available', 'pending', 'sold', 'none']) AS s;

CREATE FUNCTION pets_count_statuses() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER pets_count_inserts AFTER INSERT ON pets REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION pets_count_statuses();
CREATE TRIGGER pets_count_updates AFTER UPDATE ON pets REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION pets_count_statuses();
CREATE TRIGGER pets_count_deletes AFTER DELETE ON pets REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION pets_count_statuses();

CREATE FUNCTION pets_count_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM pet_status_changes;
  UPDATE pet_status_totals SET n = 0;
  RETURN NULL;
END;
$$;
CREATE TRIGGER pets_count_truncate AFTER TRUNCATE ON pets FOR EACH STATEMENT EXECUTE FUNCTION pets_count_truncate();

-- Down Migration
DROP TRIGGER pets_count_truncate ON pets;
DROP TRIGGER pets_count_deletes ON pets;
DROP TRIGGER pets_count_updates ON pets;
DROP TRIGGER pets_count_inserts ON pets;
DROP FUNCTION pets_count_truncate();
DROP FUNCTION pets_count_statuses();
DROP TABLE pet_status_changes;
DROP TABLE pet_status_totals;
DROP FUNCTION orders_frontier(bigint, pg_snapshot, xid8);
DROP TABLE orders;
DROP FUNCTION orders_assign_id();
DROP SEQUENCE orders_newest_writer_seq;
DROP SEQUENCE orders_id_seq;
