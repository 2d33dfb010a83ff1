-- Up Migration
-- API keys are stored as SHA-256 hashes only: a key is shown once, when it is created.
-- Keys are 256-bit random values, so a fast hash is enough (no password stretching).
CREATE TABLE api_keys (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name       text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  key_hash   bytea NOT NULL UNIQUE CHECK (octet_length(key_hash) = 32),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);

-- Every running instance caches the active keys and LISTENs on this channel, so a key
-- created or revoked anywhere (the CLI, another instance, plain SQL) is seen by all of
-- them within milliseconds.
CREATE FUNCTION api_keys_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('api_keys_changed', '');
  RETURN NULL;
END;
$$;

CREATE TRIGGER api_keys_changed
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION api_keys_notify();

-- Down Migration
DROP TABLE api_keys;
DROP FUNCTION api_keys_notify();
