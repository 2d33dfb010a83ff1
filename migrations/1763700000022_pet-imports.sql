-- Up Migration
-- Imports of pets (contract 1.5.0; docs/decisions/0009-pet-imports.md).
--
-- pet_import_parts: an import's body as it was sent, in parts of `part_size` bytes (the last
-- shorter), stored by the request that sent it, in the same transaction as its pet_imports
-- row: an import exists whole, with every byte of its body, or not at all. Stored as sent
-- (EXTERNAL: no compression), deleted when the import ends.
-- pet_imports: one row per import, listed by id (the append order, paged whole). The worker
-- that runs it (src/catalogue/pet-import-worker.ts) holds a session advisory lock on its id;
-- each batch of rows commits the pets it adds, the counts and where the next batch starts
-- (`next_offset`, `next_line`) in one transaction, so that an import another worker resumes
-- after a crash imports each row once.
SET LOCAL lock_timeout = '1s';

CREATE SEQUENCE pet_import_uploads_seq MAXVALUE 9007199254740991;

CREATE TABLE pet_import_parts (
  upload_id  bigint NOT NULL,
  seq        int NOT NULL CHECK (seq >= 0),
  data       bytea NOT NULL,
  PRIMARY KEY (upload_id, seq)
);
ALTER TABLE pet_import_parts ALTER COLUMN data SET STORAGE EXTERNAL;

CREATE TABLE pet_imports (
  id              bigint PRIMARY KEY CHECK (id BETWEEN 1 AND 9007199254740991),
  status          text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
  format          text NOT NULL CHECK (format IN ('text/csv', 'application/x-ndjson')),
  error_policy    text NOT NULL CHECK (error_policy IN ('stop', 'skip')),
  dry_run         boolean NOT NULL,
  upload_id       bigint NOT NULL,
  part_size       int NOT NULL CHECK (part_size > 0),
  size            bigint NOT NULL CHECK (size >= 0),
  -- A CSV body's columns, from its header row, in their order (NULL for NDJSON).
  columns         text[],
  -- Where the rows start: after a CSV body's byte order mark and header row (line 2 on), after
  -- an NDJSON body's byte order mark (line 1 on).
  rows_offset     bigint NOT NULL CHECK (rows_offset >= 0),
  -- The pass under way: `validate` reads every row and writes none (a dry run, and the first
  -- pass of a `stop` import), `import` adds the valid rows.
  pass            text NOT NULL CHECK (pass IN ('validate', 'import')),
  -- Where the next batch starts: its first byte in the body, and that byte's line.
  next_offset     bigint NOT NULL CHECK (next_offset >= 0),
  next_line       bigint NOT NULL CHECK (next_line >= 1),
  rows_read       bigint NOT NULL DEFAULT 0 CHECK (rows_read >= 0),
  rows_imported   bigint NOT NULL DEFAULT 0 CHECK (rows_imported >= 0),
  rows_refused    bigint NOT NULL DEFAULT 0 CHECK (rows_refused >= 0),
  -- The first refused rows (at most 20), as the contract's PetImportRowError objects.
  errors          jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(errors) = 'array' AND jsonb_array_length(errors) <= 20),
  -- Why a failed import failed, in words for its client.
  message         text CHECK (length(message) <= 500),
  submitted_at    timestamptz NOT NULL DEFAULT now(),
  started_at      timestamptz,
  finished_at     timestamptz,
  visible_after   xid8 NOT NULL,
  CHECK ((finished_at IS NOT NULL) = (status IN ('succeeded', 'failed', 'cancelled')))
);
CREATE SEQUENCE pet_imports_id_seq MAXVALUE 9007199254740991 OWNED BY pet_imports.id;
SELECT append_order_join('pet_imports');
-- The imports a worker may take: those not ended.
CREATE INDEX pet_imports_open ON pet_imports (id) WHERE status IN ('queued', 'running');

-- A PetImport's JSON, keys in the schema's order, written compactly as every answer is.
CREATE FUNCTION pet_import_json(i pet_imports) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT '{"id":' || (i).id || ',"status":' || to_json((i).status) || ',"format":' || to_json((i).format)
    || ',"errorPolicy":' || to_json((i).error_policy) || ',"dryRun":' || (i).dry_run || ',"size":' || (i).size
    || ',"rowsRead":' || (i).rows_read || ',"rowsImported":' || (i).rows_imported || ',"rowsRefused":' || (i).rows_refused
    || ',"errors":' || (SELECT coalesce('[' || string_agg('{"line":' || (e->>'line') || ',"field":' || to_json(e->>'field') || ',"message":' || to_json(e->>'message') || '}', ',' ORDER BY n) || ']', '[]')
                       FROM jsonb_array_elements((i).errors) WITH ORDINALITY AS t(e, n))
    || coalesce(',"message":' || to_json((i).message), '')
    || ',"submittedAt":"' || json_instant((i).submitted_at) || '"'
    || coalesce(',"startedAt":"' || json_instant((i).started_at) || '"', '')
    || coalesce(',"finishedAt":"' || json_instant((i).finished_at) || '"', '') || '}'
$$;

-- An import that ends is an event, `import.finished`, seen as the catalogue's are.
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type IN ('pet.created', 'pet.updated', 'pet.deleted', 'order.placed', 'order.completed',
  'order.cancelled', 'order.expired', 'category.updated', 'category.deleted', 'import.finished')) NOT VALID;
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_event_types_check;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_event_types_check CHECK (cardinality(event_types) BETWEEN 1 AND 10 AND event_types <@ ARRAY[
  'pet.created', 'pet.updated', 'pet.deleted', 'order.placed', 'order.completed',
  'order.cancelled', 'order.expired', 'category.updated', 'category.deleted', 'import.finished']::text[]) NOT VALID;

CREATE FUNCTION pet_imports_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (type, data) VALUES ('import.finished', pet_import_json(NEW));
  RETURN NULL;
END;
$$;
CREATE TRIGGER pet_imports_finished AFTER UPDATE OF status ON pet_imports FOR EACH ROW
  WHEN (OLD.status IN ('queued', 'running') AND NEW.status IN ('succeeded', 'failed', 'cancelled'))
  EXECUTE FUNCTION pet_imports_events();

-- Down Migration
SET LOCAL lock_timeout = '1s';
DELETE FROM events WHERE type = 'import.finished';
UPDATE webhook_endpoints SET event_types = array_remove(event_types, 'import.finished') WHERE 'import.finished' = ANY (event_types);
DELETE FROM webhook_endpoints WHERE cardinality(event_types) = 0;
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_event_types_check;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_event_types_check CHECK (cardinality(event_types) BETWEEN 1 AND 9 AND event_types <@ ARRAY[
  'pet.created', 'pet.updated', 'pet.deleted', 'order.placed', 'order.completed',
  'order.cancelled', 'order.expired', 'category.updated', 'category.deleted']::text[]);
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type IN ('pet.created', 'pet.updated', 'pet.deleted', 'order.placed', 'order.completed',
  'order.cancelled', 'order.expired', 'category.updated', 'category.deleted'));
DROP TRIGGER pet_imports_finished ON pet_imports;
DROP FUNCTION pet_imports_events();
DROP FUNCTION pet_import_json(pet_imports);
DROP TABLE pet_imports;
DROP TABLE pet_import_parts;
DROP SEQUENCE pet_import_uploads_seq;
