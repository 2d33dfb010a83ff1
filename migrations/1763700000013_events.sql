-- Up Migration
-- Events (contract 1.4.0): every change to a pet, an order or a category name is an event,
-- written by triggers in the same transaction as the change, whoever made it (an operation,
-- the expiry job, or SQL around the service). A change that commits has its event; a change
-- rolled back has none. Events join the append order (docs/decisions/0001-append-order.md),
-- so that listEvents returns each exactly once while they are written on several instances.
--
-- And a sixth scope, webhooks:manage. Keys that hold every scope of 1.3.0 (the development
-- key, keys made by the CLI without --scopes, keys issued before scopes existed) get it too:
-- they were made to hold everything. Other keys are not widened.

CREATE OR REPLACE FUNCTION api_key_scopes_valid(scopes text[]) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT scopes <@ ARRAY['pets:read', 'pets:write', 'orders:read', 'orders:write', 'keys:manage', 'webhooks:manage']::text[]
     AND cardinality(scopes) = (SELECT count(DISTINCT s) FROM unnest(scopes) AS s)
$$;
ALTER TABLE api_keys ALTER COLUMN scopes SET DEFAULT ARRAY['pets:read', 'pets:write', 'orders:read', 'orders:write', 'keys:manage', 'webhooks:manage']::text[];
UPDATE api_keys SET scopes = scopes || ARRAY['webhooks:manage']
WHERE scopes @> ARRAY['pets:read', 'pets:write', 'orders:read', 'orders:write', 'keys:manage'] AND NOT scopes @> ARRAY['webhooks:manage'];

-- An instant as the service writes it in JSON (JavaScript's toISOString: UTC, milliseconds).
CREATE FUNCTION json_instant(at timestamptz) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- An Order's JSON, keys in the Order schema's order (as src/store/orders.ts answers it).
CREATE FUNCTION order_json(id bigint, pet_id bigint, status text, placed_at timestamptz, expires_at timestamptz, closed_at timestamptz) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT '{"id":' || id || ',"petId":' || pet_id || ',"status":' || to_json(status)
    || ',"placedAt":"' || json_instant(placed_at) || '","expiresAt":"' || json_instant(expires_at) || '"'
    || coalesce(',"closedAt":"' || json_instant(closed_at) || '"', '') || '}'
$$;

-- A Category's JSON.
CREATE FUNCTION category_json(id bigint, name text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT '{"id":' || id || ',"name":' || to_json(name) || '}'
$$;

CREATE TABLE events (
  id            bigint PRIMARY KEY CHECK (id BETWEEN 1 AND 9007199254740991),
  type          text NOT NULL CHECK (type IN ('pet.created', 'pet.updated', 'pet.deleted', 'order.placed', 'order.completed',
                                              'order.cancelled', 'order.expired', 'category.updated', 'category.deleted')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  -- Who may see it: NULL for a catalogue event (every key with pets:read), else the key that
  -- placed the order (with orders:read).
  api_key_id    bigint REFERENCES api_keys (id),
  -- The resource right after the change, as JSON text in the contract's key order.
  data          text NOT NULL,
  visible_after xid8 NOT NULL,
  CHECK ((api_key_id IS NULL) = (type NOT LIKE 'order.%'))
);
CREATE SEQUENCE events_id_seq MAXVALUE 9007199254740991 OWNED BY events.id;
CREATE SEQUENCE events_newest_writer_seq MINVALUE 0 START 0;
SELECT append_order_join('events');
CREATE INDEX events_of_key ON events (api_key_id, id) WHERE api_key_id IS NOT NULL;

-- Where retention has deleted up to: a cursor before it points at events that are gone (410).
CREATE TABLE events_retention (
  only_row       boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  purged_through bigint NOT NULL DEFAULT 0
);
INSERT INTO events_retention DEFAULT VALUES;

-- The writers: one INSERT per statement that changed rows, from its transition tables, in id
-- order.
CREATE FUNCTION pets_events() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER pets_events_inserts AFTER INSERT ON pets REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pets_events();
CREATE TRIGGER pets_events_updates AFTER UPDATE ON pets REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pets_events();
CREATE TRIGGER pets_events_deletes AFTER DELETE ON pets REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION pets_events();

CREATE FUNCTION orders_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO events (type, api_key_id, data)
    SELECT 'order.placed', api_key_id, order_json(id, pet_id, status, placed_at, expires_at, closed_at) FROM new_rows ORDER BY id;
  ELSE
    INSERT INTO events (type, api_key_id, data)
    SELECT 'order.' || n.status, n.api_key_id, order_json(n.id, n.pet_id, n.status, n.placed_at, n.expires_at, n.closed_at)
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE n.status IS DISTINCT FROM o.status AND n.status <> 'placed'
    ORDER BY n.id;
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER orders_events_inserts AFTER INSERT ON orders REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION orders_events();
CREATE TRIGGER orders_events_updates AFTER UPDATE ON orders REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION orders_events();

CREATE FUNCTION categories_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO events (type, data) SELECT 'category.updated', category_json(id, name) FROM new_rows ORDER BY id;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO events (type, data)
    SELECT 'category.updated', category_json(n.id, n.name) FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE n.name IS DISTINCT FROM o.name OR n.id <> o.id ORDER BY n.id;
  ELSE
    INSERT INTO events (type, data) SELECT 'category.deleted', category_json(id, name) FROM old_rows ORDER BY id;
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER categories_events_inserts AFTER INSERT ON categories REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION categories_events();
CREATE TRIGGER categories_events_updates AFTER UPDATE ON categories REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION categories_events();
CREATE TRIGGER categories_events_deletes AFTER DELETE ON categories REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION categories_events();

-- Down Migration
DROP TABLE events_retention;
DROP TABLE events;
DROP FUNCTION pets_events() CASCADE;
DROP FUNCTION orders_events() CASCADE;
DROP FUNCTION categories_events() CASCADE;
DROP FUNCTION category_json(bigint, text);
DROP FUNCTION order_json(bigint, bigint, text, timestamptz, timestamptz, timestamptz);
DROP FUNCTION json_instant(timestamptz);
UPDATE api_keys SET scopes = array_remove(scopes, 'webhooks:manage');
ALTER TABLE api_keys ALTER COLUMN scopes SET DEFAULT ARRAY['pets:read', 'pets:write', 'orders:read', 'orders:write', 'keys:manage']::text[];
CREATE OR REPLACE FUNCTION api_key_scopes_valid(scopes text[]) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT scopes <@ ARRAY['pets:read', 'pets:write', 'orders:read', 'orders:write', 'keys:manage']::text[]
     AND cardinality(scopes) = (SELECT count(DISTINCT s) FROM unnest(scopes) AS s)
$$;
