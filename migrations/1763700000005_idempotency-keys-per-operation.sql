-- Up Migration
-- Idempotency-Key for any operation whose contract declares it (contract 1.2.0), not only
-- createPet: a key is scoped to (API key, operation, key), so the same key sent to two
-- operations names two requests; the stored answer is whatever the handler returned, its
-- status, body and the headers the contract declares for it (Location, ...).
-- Rows from before are createPet's; their Location becomes a stored header.
ALTER TABLE idempotency_keys ADD COLUMN operation text CHECK (char_length(operation) BETWEEN 1 AND 100);
UPDATE idempotency_keys SET operation = 'createPet';
ALTER TABLE idempotency_keys ALTER COLUMN operation SET NOT NULL;
ALTER TABLE idempotency_keys ADD COLUMN response_headers jsonb;
UPDATE idempotency_keys SET response_headers = jsonb_build_object('Location', location) WHERE location IS NOT NULL;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey, ADD PRIMARY KEY (api_key_id, operation, key);
ALTER TABLE idempotency_keys DROP COLUMN location;

-- Down Migration
ALTER TABLE idempotency_keys ADD COLUMN location text;
UPDATE idempotency_keys SET location = response_headers ->> 'Location';
DELETE FROM idempotency_keys WHERE operation <> 'createPet';
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey, ADD PRIMARY KEY (api_key_id, key);
ALTER TABLE idempotency_keys DROP COLUMN response_headers, DROP COLUMN operation;
