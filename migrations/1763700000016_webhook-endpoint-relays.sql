-- Up Migration
-- One relay of the events feed per webhook endpoint, `webhook-<id>` in event_relays, in
-- place of the one relay `webhooks` that fanned every event out to every endpoint
-- (src/events/webhooks/dispatch.ts, docs/decisions/0006-webhook-delivery.md): an endpoint takes
-- events only while it has room for them, so one that is slow or failing costs what its
-- attempts cost, not a row for every event. Each endpoint's relay starts where `webhooks`
-- was, read as its row is deleted (after a step of it under way commits); events already
-- fanned out stay in webhook_messages.
--
-- holds_retention: whether retention waits for the relay (decision record 0005). An
-- endpoint's relay does not: an endpoint that lags behind skips what retention deletes,
-- rather than keeping the feed growing.
--
-- The name `webhooks` is refused from now on: an instance of the earlier service still
-- running (a rolling upgrade) would make the row again, from the oldest event kept, and fan
-- out every event kept once more. Its attempt fails instead (it logs "webhooks: dispatching
-- events failed" once); it goes on delivering the messages there are, and the instances of
-- this version fan out for every endpoint.
ALTER TABLE event_relays ADD COLUMN holds_retention boolean NOT NULL DEFAULT true;
WITH single AS (DELETE FROM event_relays WHERE name = 'webhooks' RETURNING position)
INSERT INTO event_relays (name, position, holds_retention)
SELECT 'webhook-' || ep.id, coalesce((SELECT position FROM single), (SELECT coalesce(max(id), 0) FROM events)), false
FROM webhook_endpoints ep
ON CONFLICT (name) DO NOTHING;
ALTER TABLE event_relays ADD CONSTRAINT event_relays_not_webhooks CHECK (name <> 'webhooks');

-- Down Migration
-- The single relay again, from the enabled endpoint furthest behind (endpoints ahead of it
-- may get some events twice).
ALTER TABLE event_relays DROP CONSTRAINT event_relays_not_webhooks;
INSERT INTO event_relays (name, position)
SELECT 'webhooks', coalesce(min(r.position), (SELECT coalesce(max(id), 0) FROM events))
FROM event_relays r JOIN webhook_endpoints ep ON r.name = 'webhook-' || ep.id AND ep.enabled;
DELETE FROM event_relays WHERE name ~ '^webhook-[0-9]+$';
ALTER TABLE event_relays DROP COLUMN holds_retention;
