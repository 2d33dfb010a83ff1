-- Up Migration
-- Secrets every instance must share, made once by the database itself. `cursor` signs the
-- listPets pagination cursors, so that a cursor from any instance works on every other one
-- and a tampered one is recognised. gen_random_uuid() is a strong random source (PG 13+).
CREATE TABLE service_secrets (
  name  text PRIMARY KEY,
  value bytea NOT NULL CHECK (octet_length(value) >= 16)
);

INSERT INTO service_secrets (name, value)
VALUES ('cursor', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));

-- Down Migration
DROP TABLE service_secrets;
