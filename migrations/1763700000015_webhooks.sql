-- Up Migration
-- Webhook endpoints and their deliveries (contract 1.4.0; docs/decisions/0006-webhook-delivery.md).
--
-- webhook_endpoints: per API key, listed by id (the append order, partitioned by the key, as
-- orders are). `secret` is the signing key itself (`whsec_` + base64 of 24 bytes): an HMAC
-- key must be usable to sign, so it cannot be stored as a hash (docs/security.md).
-- webhook_messages: the work queue, one row per (endpoint, event) not yet delivered nor
-- given up; the endpoint row carries the lease that makes deliveries one at a time per
-- endpoint across instances.
-- webhook_deliveries: the attempt log, listed per endpoint by id (the append order).
-- event_relays row `webhooks`: how far the fan-out has walked the events feed.

CREATE TABLE webhook_endpoints (
  id                          bigint PRIMARY KEY CHECK (id BETWEEN 1 AND 9007199254740991),
  api_key_id                  bigint NOT NULL REFERENCES api_keys (id),
  url                         text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
  event_types                 text[] NOT NULL CHECK (cardinality(event_types) BETWEEN 1 AND 9 AND event_types <@ ARRAY[
                                'pet.created', 'pet.updated', 'pet.deleted', 'order.placed', 'order.completed',
                                'order.cancelled', 'order.expired', 'category.updated', 'category.deleted']::text[]),
  description                 text CHECK (length(description) <= 500),
  enabled                     boolean NOT NULL DEFAULT true,
  -- Events created from this instant on are delivered (creation, or the last enabling).
  enabled_at                  timestamptz NOT NULL DEFAULT now(),
  disabled_reason             text CHECK (length(disabled_reason) <= 500),
  disabled_at                 timestamptz,
  secret                      text NOT NULL CHECK (secret ~ '^whsec_[A-Za-z0-9+/]{32}$'),
  previous_secret             text CHECK (previous_secret ~ '^whsec_[A-Za-z0-9+/]{32}$'),
  previous_secret_expires_at  timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  -- Since when every attempt has failed (NULL: the last attempt succeeded, or none yet).
  failing_since               timestamptz,
  -- The delivery lease: the instance holding it (lease_token) delivers to this endpoint
  -- until lease_until; then any instance may take it.
  lease_token                 uuid,
  lease_until                 timestamptz,
  claimed_at                  timestamptz,
  visible_after               xid8 NOT NULL,
  CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL)),
  CHECK (enabled OR disabled_at IS NOT NULL)
);
CREATE SEQUENCE webhook_endpoints_id_seq MAXVALUE 9007199254740991 OWNED BY webhook_endpoints.id;
CREATE SEQUENCE webhook_endpoints_newest_writer_seq MINVALUE 0 START 0;
SELECT append_order_join('webhook_endpoints', 'api_key_id');
CREATE INDEX webhook_endpoints_of_key ON webhook_endpoints (api_key_id, id);

CREATE TABLE webhook_messages (
  endpoint_id         bigint NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id            bigint NOT NULL,
  -- Attempts made so far.
  attempts            int NOT NULL DEFAULT 0 CHECK (attempts BETWEEN 0 AND 100),
  due_at              timestamptz NOT NULL DEFAULT now(),
  first_attempted_at  timestamptz,
  PRIMARY KEY (endpoint_id, event_id)
);
CREATE INDEX webhook_messages_due ON webhook_messages (endpoint_id, due_at, event_id);

CREATE TABLE webhook_deliveries (
  id             bigint PRIMARY KEY CHECK (id BETWEEN 1 AND 9007199254740991),
  endpoint_id    bigint NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id       bigint NOT NULL,
  attempt        int NOT NULL CHECK (attempt BETWEEN 1 AND 100),
  status_code    int CHECK (status_code BETWEEN 100 AND 599),
  error          text CHECK (error ~ '^[a-z][a-z_]*$' AND length(error) <= 200),
  duration_ms    int NOT NULL CHECK (duration_ms BETWEEN 0 AND 600000),
  attempted_at   timestamptz NOT NULL,
  visible_after  xid8 NOT NULL,
  CHECK ((status_code IS NULL) <> (error IS NULL))
);
CREATE SEQUENCE webhook_deliveries_id_seq MAXVALUE 9007199254740991 OWNED BY webhook_deliveries.id;
CREATE SEQUENCE webhook_deliveries_newest_writer_seq MINVALUE 0 START 0;
SELECT append_order_join('webhook_deliveries', 'endpoint_id');
CREATE INDEX webhook_deliveries_of_endpoint ON webhook_deliveries (endpoint_id, id);
CREATE INDEX webhook_deliveries_attempted_at ON webhook_deliveries (attempted_at);

-- The fan-out is the events feed's relay `webhooks` (src/events/webhooks/dispatch.ts): every event
-- up to its position has its messages. It starts at the newest event now: endpoints receive
-- events written from their creation on.
INSERT INTO event_relays (name, position) SELECT 'webhooks', coalesce(max(id), 0) FROM events;

-- Down Migration
DELETE FROM event_relays WHERE name = 'webhooks';
DROP TABLE webhook_deliveries;
DROP TABLE webhook_messages;
DROP TABLE webhook_endpoints;
