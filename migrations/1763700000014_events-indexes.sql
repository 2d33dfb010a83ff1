-- Up Migration
-- What the events feed reads by (src/db/events.ts), beside what 1763700000013 made:
--
-- * catalogue events in id order: a key with pets:read only walks them without reading past
--   every order event of every key (order events of one key use events_of_key);
-- * the relays: how far each has published the feed. One row per relay (`nats`, the NATS
--   JetStream relay of src/events/relay.ts), locked FOR UPDATE SKIP LOCKED by the one
--   instance that publishes at a time; `position` is the id of the last event published.

CREATE INDEX events_catalogue ON events (id) WHERE api_key_id IS NULL;

CREATE TABLE event_relays (
  name     text PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9-]{0,31}$'),
  position bigint NOT NULL DEFAULT 0 CHECK (position >= 0)
);

-- Down Migration
DROP TABLE event_relays;
DROP INDEX events_catalogue;
