-- Up Migration
-- API keys get scopes, an expiry, a last use, a prefix and rotation (contract 1.3.0), and
-- join the append order: listApiKeys pages them by id, and the service assigns the ids.
--
-- Keys issued before this migration hold every scope (the column's default, which is also
-- what the contract's bearerAuth scheme declares in `x-scopes-of-earlier-credentials`), so
-- no client of 1.2 loses an operation. Their prefix stays NULL: only a hash of their secret
-- was ever stored, so its first characters are unknown until the key is rotated (the
-- contract's ApiKey then has no `prefix`).

-- The five scopes of the contract's `Scope` schema, each at most once (its `uniqueItems`).
-- A NULL element is never contained in the list, so it is refused too.
CREATE FUNCTION api_key_scopes_valid(scopes text[]) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT scopes <@ ARRAY['pets:read', 'pets:write', 'orders:read', 'orders:write', 'keys:manage']::text[]
     AND cardinality(scopes) = (SELECT count(DISTINCT s) FROM unnest(scopes) AS s)
$$;

LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE;

-- The contract's ApiKey.name has no control character. Names are labels an operator chose
-- (never secrets); one written with a control character before this check existed is kept
-- with a space in its place.
UPDATE api_keys SET name = regexp_replace(name, '[\x01-\x1f\x7f]', ' ', 'g') WHERE name ~ '[\x01-\x1f\x7f]';
ALTER TABLE api_keys ADD CONSTRAINT api_keys_name_printable CHECK (name !~ '[\x01-\x1f\x7f]');

ALTER TABLE api_keys
  ADD COLUMN scopes text[] NOT NULL
    DEFAULT ARRAY['pets:read', 'pets:write', 'orders:read', 'orders:write', 'keys:manage']::text[]
    CONSTRAINT api_keys_scopes_valid CHECK (api_key_scopes_valid(scopes)),
  ADD COLUMN expires_at timestamptz,
  -- Written by each instance's flush of the keys it saw used (src/api-keys/verifier.ts), never
  -- per request; only ever moved forward.
  ADD COLUMN last_used_at timestamptz,
  -- The first 8 characters of the current secret; NULL for a key issued before this migration.
  ADD COLUMN prefix text CONSTRAINT api_keys_prefix_format CHECK (prefix ~ '^ask_[A-Za-z0-9_-]{4}$'),
  -- After a rotation: the replaced secret's hash, accepted until previous_expires_at.
  ADD COLUMN previous_key_hash bytea CONSTRAINT api_keys_previous_key_hash_length CHECK (octet_length(previous_key_hash) = 32),
  ADD COLUMN previous_expires_at timestamptz,
  ADD CONSTRAINT api_keys_previous_together CHECK ((previous_key_hash IS NULL) = (previous_expires_at IS NULL));

-- The database's own check of a key while an instance's listener is down: by either hash.
CREATE UNIQUE INDEX api_keys_previous_key_hash ON api_keys (previous_key_hash);

-- The append order (docs/decisions/0001-append-order.md), as pets joined it in
-- 1763700000008: ids drawn by the trigger from the identity's sequence, continued where it
-- stood; rows already stored are final to every reader ('0' is below any transaction id).
CREATE SEQUENCE api_keys_next_id MAXVALUE 9007199254740991;
SELECT setval('api_keys_next_id', last_value, is_called) FROM api_keys_id_seq;
ALTER TABLE api_keys ALTER COLUMN id DROP IDENTITY;
ALTER SEQUENCE api_keys_next_id RENAME TO api_keys_id_seq;
ALTER SEQUENCE api_keys_id_seq OWNED BY api_keys.id;
ALTER TABLE api_keys ADD COLUMN visible_after xid8 NOT NULL DEFAULT '0';
ALTER TABLE api_keys ALTER COLUMN visible_after DROP DEFAULT;
CREATE SEQUENCE api_keys_newest_writer_seq MINVALUE 0 START 0;
SELECT append_order_join('api_keys');

-- Every instance reloads its key cache on api_keys_changed. The flush of last_used_at
-- writes no column an instance caches, so it must not notify: otherwise every flush of
-- every instance would make every instance reload every key. So an UPDATE notifies only
-- when it writes a column the cache holds (UPDATE OF: named in its SET list).
DROP TRIGGER api_keys_changed ON api_keys;
CREATE TRIGGER api_keys_changed
  AFTER INSERT OR DELETE OR TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION api_keys_notify();
CREATE TRIGGER api_keys_changed_by_update
  AFTER UPDATE OF id, name, key_hash, revoked_at, scopes, expires_at, prefix, previous_key_hash, previous_expires_at ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION api_keys_notify();

-- Down Migration
DROP TRIGGER api_keys_changed_by_update ON api_keys;
DROP TRIGGER api_keys_changed ON api_keys;
CREATE TRIGGER api_keys_changed
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION api_keys_notify();
DROP TRIGGER api_keys_append_order ON api_keys;
DROP TRIGGER api_keys_append_order_mark ON api_keys;
DROP SEQUENCE api_keys_newest_writer_seq;
ALTER TABLE api_keys DROP COLUMN visible_after;
ALTER SEQUENCE api_keys_id_seq RENAME TO api_keys_previous_id;
ALTER TABLE api_keys ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY;
SELECT setval('api_keys_id_seq', last_value, is_called) FROM api_keys_previous_id;
DROP SEQUENCE api_keys_previous_id;
DROP INDEX api_keys_previous_key_hash;
ALTER TABLE api_keys
  DROP CONSTRAINT api_keys_previous_together,
  DROP COLUMN previous_expires_at,
  DROP COLUMN previous_key_hash,
  DROP COLUMN prefix,
  DROP COLUMN last_used_at,
  DROP COLUMN expires_at,
  DROP COLUMN scopes,
  DROP CONSTRAINT api_keys_name_printable;
DROP FUNCTION api_key_scopes_valid(text[]);
