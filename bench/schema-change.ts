// `npm run bench:schema`: what a change to the Pet schema costs a running catalogue. Loads
// SCHEMA_PETS pets (default 1,000,000) into a database migrated up to the migration before
// the one that builds a pet's JSON at read time, then, while one client reads pets by id and
// another renames them without pause, applies that migration, and then adds a field to Pet
// the way docs/contract.md's recipe does (a nullable column and pet_json replaced, in one
// transaction). It prints how long each change took and the longest any read or write
// waited meanwhile: a lock that blocks reads or writes shows there as a long wait.
//
// Settings: DATABASE_URL (a server to make a database of its own on; else an embedded
// PostgreSQL), SCHEMA_PETS.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openEmbeddedPostgres } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { migrationsDir } from '../src/paths.js';

const PETS = Number(process.env.SCHEMA_PETS ?? 1_000_000);
/** The migration whose change is measured: pets' JSON built at read time. */
const MEASURED = '1763700000018_pets-json-at-read';

interface Waits {
  reads: number;
  writes: number;
  longestRead: number;
  longestWrite: number;
}

/** Reads and renames pets in a loop until `stop`; the longest each waited. */
function load(pool: pg.Pool): { stop: () => Promise<Waits> } {
  let running = true;
  const waits: Waits = { reads: 0, writes: 0, longestRead: 0, longestWrite: 0 };
  const someId = () => 1 + Math.floor(Math.random() * PETS);
  const loop = async (sql: string, count: (ms: number) => void) => {
    while (running) {
      const started = performance.now();
      await pool.query(sql, [someId()]).catch(() => undefined);
      count(performance.now() - started);
    }
  };
  const loops = [
    loop('SELECT * FROM pets WHERE id = $1', (ms) => {
      waits.reads++;
      waits.longestRead = Math.max(waits.longestRead, ms);
    }),
    loop("UPDATE pets SET name = 'Renamed' WHERE id = $1", (ms) => {
      waits.writes++;
      waits.longestWrite = Math.max(waits.longestWrite, ms);
    }),
  ];
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return waits;
    },
  };
}

async function measured(pool: pg.Pool, change: () => Promise<unknown>): Promise<Waits & { tookMs: number }> {
  const running = load(pool);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const started = performance.now();
  await change();
  const tookMs = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 500));
  return { ...(await running.stop()), tookMs };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'animal-store-schema-'));
  let adminUrl = process.env.DATABASE_URL;
  let stopServer = async () => {};
  if (!adminUrl) {
    const embedded = await openEmbeddedPostgres({ dataDir, fast: true, log: () => {} });
    adminUrl = embedded.adminUrl;
    stopServer = () => embedded.stop();
  }
  const database = `animal_store_schema_${process.pid}`;
  const setup = new pg.Client({ connectionString: adminUrl });
  await setup.connect();
  await setup.query(`CREATE DATABASE ${database}`);
  await setup.end();
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  try {
    const before = readdirSync(migrationsDir).filter((f) => f.endsWith('.sql')).sort().indexOf(`${MEASURED}.sql`);
    await migrate(url.toString(), { info: () => {} }, { count: before });
    process.stderr.write(`loading ${PETS} pets...\n`);
    await pool.query(
      "INSERT INTO pets (name, category_id, status) SELECT 'Pet ' || i, 1 + i % 50, (ARRAY['available', 'sold', NULL])[1 + i % 3] FROM generate_series(1, $1::int) AS i",
      [PETS],
    );
    await pool.query('VACUUM ANALYZE pets');
    const rows = [
      ['idle (no change)', await measured(pool, () => new Promise((resolve) => setTimeout(resolve, 200)))],
      [`migration ${MEASURED}`, await measured(pool, () => migrate(url.toString(), { info: () => {} }, { count: 1 }))],
      [
        'a field added to Pet (nullable column, pet_json replaced)',
        await measured(pool, async () => {
          const client = await pool.connect();
          try {
            await client.query('BEGIN');
            await client.query("SET LOCAL lock_timeout = '1s'");
            await client.query('ALTER TABLE pets ADD COLUMN nickname text');
            await client.query(
              `CREATE OR REPLACE FUNCTION pet_json(p pets) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
                 SELECT '{"id":' || (p).id || ',"name":' || to_json((p).name) || ',"categoryId":' || (p).category_id
                   || coalesce(',"status":' || to_json((p).status), '') || coalesce(',"nickname":' || to_json((p).nickname), '') || '}' $$`,
            );
            await client.query('COMMIT');
          } finally {
            client.release();
          }
        }),
      ],
    ] as const;
    console.log(`\n${PETS.toLocaleString('en')} pets; one client reading pets by id and one renaming them throughout.\n`);
    console.log('| change | took | longest read | longest write | reads | writes |');
    console.log('|---|---|---|---|---|---|');
    for (const [name, w] of rows) console.log(`| ${name} | ${w.tookMs.toFixed(0)} ms | ${w.longestRead.toFixed(1)} ms | ${w.longestWrite.toFixed(1)} ms | ${w.reads} | ${w.writes} |`);
  } finally {
    await pool.end();
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
    await stopServer();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
