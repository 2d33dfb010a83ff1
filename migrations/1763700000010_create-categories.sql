-- Up Migration
-- Categories (contract 1.3.0): a name given to a `categoryId`. The ids are the clients'
-- (pets carried them before categories had names), so there is no sequence and no append
-- order: pages are plain keyset pages by id. Pets do not reference this table: any valid
-- categoryId stays valid on a pet, named or not, and removing a name changes no pet.
-- The checks mirror the contract's CategoryName: 1 to 100 characters (code points, as the
-- contract counts them), no control character (U+0000 cannot be in a text value at all).
CREATE TABLE categories (
  id   bigint PRIMARY KEY CHECK (id BETWEEN 1 AND 9007199254740991),
  name text   NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100) CHECK (name !~ '[\x01-\x1f\x7f]')
);

-- Names are unique ignoring case, whoever writes the table. putCategory answers a violation
-- of this index (by its name) with 409 naming the holder, found through the same index.
CREATE UNIQUE INDEX categories_name_unique ON categories (lower(name));

-- Down Migration
DROP TABLE categories;
