// getPet, listPets and the pet events send each pet's JSON as pet_json(pets) builds it from
// the row (migration 1763700000018): SQL the compiler cannot see.
// `npm run generate` writes that function from the Pet schema (generated/pet-json.sql,
// scripts/generate.ts); these hold the migrated database to it, so a change to the Pet
// schema fails here until a migration installs the function generated from it.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase } from '../helper.js';

const SCHEMA_CHANGED =
  "the Pet schema changed: add a migration that adds the new field (a column of pets, or a function of a pets row) and installs pet_json from generated/pet-json.sql (docs/contract.md, 'Adding a field to Pet')";

const generated = readFileSync(new URL('../../generated/pet-json.sql', import.meta.url), 'utf8');
const normalised = (sql: string): string => sql.replace(/\s+/g, ' ').trim();

let db: { url: string; drop: () => Promise<void> };
let client: pg.Client;
beforeAll(async () => {
  db = await createTestDatabase();
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

interface Definition {
  /** pg_get_functiondef, the schema left out, whitespace normalised. */
  definition: string;
  /** Its arguments' names, in order. */
  argumentNames: string[];
}

/** Every function named pet_json in the schema, as PostgreSQL writes it back. */
async function petJsonIn(schema: string): Promise<Definition[]> {
  const { rows } = await client.query<{ definition: string; argument_names: string[] | null }>(
    `SELECT pg_get_functiondef(p.oid) AS definition, p.proargnames AS argument_names
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = $1 AND p.proname = 'pet_json'`,
    [schema],
  );
  return rows.map((row) => ({
    definition: normalised(row.definition.replace(`FUNCTION ${schema}.pet_json(`, 'FUNCTION pet_json(')),
    argumentNames: row.argument_names ?? [],
  }));
}

/** The generated function as PostgreSQL writes it back, created in a schema of its own and rolled back. */
async function generatedPetJson(): Promise<Definition[]> {
  await client.query('BEGIN');
  try {
    await client.query('CREATE SCHEMA pet_json_generated');
    await client.query('SET LOCAL search_path = pet_json_generated, public');
    await client.query(generated);
    return await petJsonIn('pet_json_generated');
  } finally {
    await client.query('ROLLBACK');
  }
}

it('the migrated pet_json is the function generated from the Pet schema', async () => {
  const wanted = await generatedPetJson();
  expect(wanted).toHaveLength(1);
  expect(await petJsonIn('public'), SCHEMA_CHANGED).toEqual(wanted);
});

it('pets keeps no JSON of its own: nothing to rebuild when the Pet schema changes', async () => {
  const { rows } = await client.query("SELECT attname FROM pg_attribute WHERE attrelid = 'public.pets'::regclass AND attname = 'as_json' AND NOT attisdropped");
  expect(rows).toEqual([]);
});
