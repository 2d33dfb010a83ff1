-- Up Migration
-- The trace context of the change that wrote an event (src/tracing/context.ts): a write made
-- while tracing is on sets `animal_store.traceparent` on its connection first, and every event
-- its triggers insert takes it here, so that the event's webhook deliveries and NATS message
-- continue the change's trace. Null when tracing is off or the change had no span.
--
-- Adding a nullable column without a default and then setting the default touches no row:
-- neither rewrites the table nor holds its lock for longer than the catalogue change.
SET LOCAL lock_timeout = '1s';
ALTER TABLE events ADD COLUMN trace_parent text;
ALTER TABLE events ALTER COLUMN trace_parent SET DEFAULT nullif(current_setting('animal_store.traceparent', true), '');

-- Down Migration
SET LOCAL lock_timeout = '1s';
ALTER TABLE events DROP COLUMN trace_parent;
