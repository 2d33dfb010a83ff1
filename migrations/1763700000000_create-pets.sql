-- Up Migration
-- The catalogue. Ids stop at 2^53 - 1 so that every JSON client reads them exactly
-- (see "Numbers" in openapi/v1.yaml); the checks mirror the contract's limits so that
-- no path into the table can store what the API could not return.
CREATE TABLE pets (
  id          bigint GENERATED ALWAYS AS IDENTITY (MAXVALUE 9007199254740991) PRIMARY KEY,
  name        text   NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
  category_id bigint NOT NULL CHECK (category_id BETWEEN 1 AND 9007199254740991),
  status      text   CHECK (status IN ('available', 'pending', 'sold')),
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- listPets with `status` reads WHERE status = $1 ORDER BY id LIMIT n: this index serves
-- it in order, without a sort and without scanning other statuses.
CREATE INDEX pets_status_id_idx ON pets (status, id);

-- Down Migration
DROP TABLE pets;
