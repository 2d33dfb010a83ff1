-- Up Migration
-- What the events feed reads by (src/events/feed.ts), beside what 1763700000013 made:
--
-- * catalogue events in id order: a key with pets:read only walks them without reading past
--   every order event of every key (order events of one key use events_of_key);
-- * the type filter (listEvents' `type`): each type named is walked in id order within its
--   own range, catalogue events by (type, id), one key's order events by (key, type, id),
--   so that a page of a rare type reads that type's events only, never every event kept;
-- * the relays: how far each has published the feed. One row per relay (`nats`, the NATS
--   JetStream relay of src/events/nats.ts; `webhooks`, the fan-out to webhook
--   endpoints of src/events/webhooks/dispatch.ts), locked FOR UPDATE SKIP LOCKED by the one
--   instance that runs it at a time; `position` is the id of the last event it handled,
--   `ran_at` when it last ran (kept to the minute). Retention does not delete past the
--   position of a relay that ran within EVENT_RETENTION_DAYS; one that has not run for that
--   long (turned off, or its NATS away all that time) holds nothing back.

CREATE INDEX events_catalogue ON events (id) WHERE api_key_id IS NULL;
CREATE INDEX events_catalogue_by_type ON events (type, id) WHERE api_key_id IS NULL;
CREATE INDEX events_of_key_by_type ON events (api_key_id, type, id) WHERE api_key_id IS NOT NULL;

CREATE TABLE event_relays (
  name     text PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9-]{0,31}$'),
  position bigint NOT NULL DEFAULT 0 CHECK (position >= 0),
  ran_at   timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE event_relays;
DROP INDEX events_of_key_by_type;
DROP INDEX events_catalogue_by_type;
DROP INDEX events_catalogue;
