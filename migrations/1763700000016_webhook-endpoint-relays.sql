-- Up Migration
-- One relay of the events feed per webhook endpoint, `webhook-<id>` in event_relays, in
-- place of the one relay `webhooks` that fanned every event out to every endpoint
-- (src/db/webhook-dispatch.ts, docs/decisions/0006-webhook-delivery.md): an endpoint takes
-- events only while it has room for them, so one that is slow or failing costs what its
-- attempts cost, not a row for every event. Each endpoint's relay starts where `webhooks`
-- was; events already fanned out stay in webhook_messages.
--
-- The name `webhooks` is refused from now on: an instance of the earlier service still
-- running (a rolling upgrade) would make the row again, from the oldest event kept, and fan
-- out every event kept once more. Its attempt fails instead (it logs "webhooks: dispatching
-- events failed" once); it goes on delivering the messages there are, and the instances of
-- this version fan out for every endpoint.
INSERT INTO event_relays (name, position)
SELECT 'webhook-' || ep.id, coalesce((SELECT position FROM event_relays WHERE name = 'webhooks'), (SELECT coalesce(max(id), 0) FROM events))
FROM webhook_endpoints ep
ON CONFLICT (name) DO NOTHING;
DELETE FROM event_relays WHERE name = 'webhooks';
ALTER TABLE event_relays ADD CONSTRAINT event_relays_not_webhooks CHECK (name <> 'webhooks');

-- Down Migration
-- The single relay again, from the endpoint furthest behind (endpoints ahead of it may get
-- some events twice).
ALTER TABLE event_relays DROP CONSTRAINT event_relays_not_webhooks;
INSERT INTO event_relays (name, position)
SELECT 'webhooks', coalesce(min(position), (SELECT coalesce(max(id), 0) FROM events)) FROM event_relays WHERE name ~ '^webhook-[0-9]+$';
DELETE FROM event_relays WHERE name ~ '^webhook-[0-9]+$';
