-- Up Migration
-- Each instance caches the keys in force and follows the table through api_keys_changed.
-- The notification now names the key that changed (its id as the payload), so that every
-- instance reads that key alone again, not the whole table: a key change costs the same
-- with ten keys or ten thousand. A TRUNCATE names none (an empty payload): every instance
-- reads every key, as it did for every change before. An instance of the earlier service
-- reads every key on any payload, so a rolling upgrade keeps every cache current.
--
-- Row triggers: one notification per key written. PostgreSQL folds notifications of one
-- transaction with the same payload into one; a statement that writes many keys sends one
-- per key, and an instance that receives many at once reads them all in one statement.
CREATE FUNCTION api_keys_notify_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('api_keys_changed', OLD.id::text);
  ELSE
    PERFORM pg_notify('api_keys_changed', NEW.id::text);
    -- An id rewritten by hand: the key under the old id is gone from the caches too.
    IF TG_OP = 'UPDATE' AND OLD.id <> NEW.id THEN
      PERFORM pg_notify('api_keys_changed', OLD.id::text);
    END IF;
  END IF;
  RETURN NULL;
END;
$$;

DROP TRIGGER api_keys_changed ON api_keys;
DROP TRIGGER api_keys_changed_by_update ON api_keys;
CREATE TRIGGER api_keys_changed
  AFTER INSERT OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION api_keys_notify_id();
-- The flush of last_used_at writes no column an instance caches, so it does not notify.
CREATE TRIGGER api_keys_changed_by_update
  AFTER UPDATE OF id, name, key_hash, revoked_at, scopes, expires_at, prefix, previous_key_hash, previous_expires_at ON api_keys
  FOR EACH ROW EXECUTE FUNCTION api_keys_notify_id();
CREATE TRIGGER api_keys_truncated
  AFTER TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION api_keys_notify();

-- Down Migration
DROP TRIGGER api_keys_truncated ON api_keys;
DROP TRIGGER api_keys_changed_by_update ON api_keys;
DROP TRIGGER api_keys_changed ON api_keys;
CREATE TRIGGER api_keys_changed
  AFTER INSERT OR DELETE OR TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION api_keys_notify();
CREATE TRIGGER api_keys_changed_by_update
  AFTER UPDATE OF id, name, key_hash, revoked_at, scopes, expires_at, prefix, previous_key_hash, previous_expires_at ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION api_keys_notify();
DROP FUNCTION api_keys_notify_id();
