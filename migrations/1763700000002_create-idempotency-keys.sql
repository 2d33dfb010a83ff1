-- Up Migration
-- Idempotency-Key (IETF draft-ietf-httpapi-idempotency-key-header) for createPet. A row is
-- claimed (status_code NULL) before the request is processed and completed in the same
-- transaction that stores the pet, so an acknowledged create is replayed, never repeated.
-- Keys are scoped to the API key that sent them and kept for 24 hours.
CREATE TABLE idempotency_keys (
  api_key_id    bigint NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  key           text   NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
  request_hash  bytea  NOT NULL,
  status_code   integer,
  response_body jsonb,
  location      text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  -- While processing: after this, a crashed claim may be taken over by a retry.
  locked_until  timestamptz NOT NULL,
  PRIMARY KEY (api_key_id, key)
);

CREATE INDEX idempotency_keys_created_at_idx ON idempotency_keys (created_at);

-- Down Migration
DROP TABLE idempotency_keys;
