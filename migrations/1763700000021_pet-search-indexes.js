// The indexes of listPets' filters and orders (migration 1763700000020 made their columns),
// built CONCURRENTLY: pets are read and written all along. A plain .sql migration runs in a
// transaction, where CONCURRENTLY is refused, so this one is JavaScript, outside any
// transaction, one statement each. A build that failed leaves an invalid index, which the
// next attempt drops first.
//
// - pets_search: trigram GIN over the name and tags as `q` reads them (LIKE and <%);
// - pets_tags: GIN over tags (`tags @> $tags`, every tag given);
// - pets_name_id, pets_created_id, pets_updated_id: the sorted pages, in either direction.
const INDEXES = [
  ['pets_search', 'USING gin (pet_search_text(name, tags) gin_trgm_ops) WHERE deleted_at IS NULL'],
  ['pets_tags', 'USING gin (tags) WHERE deleted_at IS NULL'],
  ['pets_name_id', '(name, id) WHERE deleted_at IS NULL'],
  ['pets_created_id', '(created_at, id) WHERE deleted_at IS NULL'],
  ['pets_updated_id', '(coalesce(changed_at, created_at), id) WHERE deleted_at IS NULL'],
];

export const up = (pgm) => {
  pgm.noTransaction();
  for (const [name, definition] of INDEXES) {
    pgm.sql(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
    pgm.sql(`CREATE INDEX CONCURRENTLY ${name} ON pets ${definition}`);
  }
};


export const down = (pgm) => {
  pgm.noTransaction();
  for (const [name] of INDEXES.reverse()) pgm.sql(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
};
