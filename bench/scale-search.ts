// bench:scale's search part: listPets' `q`, `tag` and `orderBy=name` on a catalogue of
// SCALE_SEARCH_SIZE pets (default 1,000,000), the first page and the page after 1,000 pages,
// each asked by 16 clients at once over real sockets (keep-alive, one connection each), and
// their p50 and p99. Names are `<given name> the <breed>` (1,600 given names of two
// syllables, 40 breeds), tags 0 to 2 of 12 (`hypoallergenic` on 5% of pets). The search
// table (pet_search) is brought up to date by the service's own copy before measuring, so
// the pages read what a running service reads; the copy's rate is reported too.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import http from 'node:http';
import { buildApp } from '../src/app.js';
import { generateApiKey, hashApiKey } from '../src/api-keys/verifier.js';
import { loadConfig } from '../src/config.js';
import { migrate } from '../src/db/migrate.js';
import { createPool, PLAN_CACHE_MODE, WORD_SIMILARITY_THRESHOLD } from '../src/db/pool.js';
import { createSearchIndexer } from '../src/catalogue/pet-search.js';
import { quantile } from './stats.js';

const SYLLABLES = ['ba', 'be', 'bi', 'bo', 'ca', 'co', 'da', 'di', 'fa', 'fe', 'ga', 'go', 'ha', 'ja', 'ka', 'ki', 'la', 'li', 'lo', 'ma', 'me', 'mi', 'mo', 'na', 'ni', 'no', 'pa', 'pe', 'po', 'ra', 're', 'ri', 'ro', 'sa', 'si', 'ta', 'te', 'ti', 'to', 'zo'];
const BREEDS = ['Labrador', 'Poodle', 'Beagle', 'Husky', 'Collie', 'Terrier', 'Spaniel', 'Boxer', 'Dachshund', 'Pug', 'Greyhound', 'Whippet', 'Corgi', 'Samoyed', 'Akita', 'Maltese', 'Bulldog', 'Rottweiler', 'Dalmatian', 'Pointer', 'Setter', 'Retriever', 'Shepherd', 'Schnauzer', 'Chihuahua', 'Pomeranian', 'Basenji', 'Vizsla', 'Weimaraner', 'Sheltie', 'Havanese', 'Papillon', 'Newfoundland', 'Mastiff', 'Bloodhound', 'Borzoi', 'Saluki', 'Keeshond', 'Leonberger', 'Komondor'];
const TAGS = ['family', 'trained', 'young', 'senior', 'calm', 'playful', 'indoor', 'outdoor', 'small', 'large', 'rescue', 'champion'];
const CONNECTIONS = 16;
const PAGE = 20;
const DEEP = 1000;

export interface SearchRow {
  query: string;
  matches: number;
  p50: number;
  p99: number;
}

/** Loads the catalogue into a database of its own, measures, and returns the table's lines. */
export async function searchAtScale(adminUrl: string, out: string, size: number, samples: number): Promise<string[]> {
  const name = `animal_store_scale_search_${size}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
  await migrate(url, { info: () => {} });
  const db = new pg.Client({ connectionString: url, options: `-c plan_cache_mode=${PLAN_CACHE_MODE} -c pg_trgm.word_similarity_threshold=${WORD_SIMILARITY_THRESHOLD}` });
  await db.connect();
  const loadStarted = performance.now();
  // Each pet's own given name (two syllables), breed and tags, spread evenly; 100,000 a statement.
  for (let from = 1; from <= size; from += 100_000) {
    await db.query(
      `INSERT INTO pets (name, category_id, status, tags)
       SELECT initcap(($3::text[])[1 + i % 40] || ($3::text[])[1 + (i / 40) % 40]) || ' the ' || ($4::text[])[1 + (i / 1600) % 40],
         1 + i % 100, 'available',
         CASE WHEN i % 20 = 0 THEN ARRAY['hypoallergenic'] ELSE '{}'::text[] END
           || CASE WHEN i % 3 = 0 THEN ARRAY[($5::text[])[1 + (i / 7) % 12]] ELSE '{}'::text[] END
       FROM generate_series($1::bigint, $2::bigint) AS i`,
      [from, Math.min(size, from + 99_999), SYLLABLES, BREEDS, TAGS],
    );
  }
  const loadedMs = performance.now() - loadStarted;
  // As autovacuum would have by the time the job runs: its statements' generic plans are
  // made with these statistics.
  await db.query('ANALYZE pets');
  await db.query('ANALYZE events');
  const pool = createPool({ DATABASE_URL: url, DB_POOL_MAX: 4, DB_CONNECT_TIMEOUT_MS: 5000, DB_STATEMENT_TIMEOUT_MS: 600_000 });
  const copyStarted = performance.now();
  const copied = await createSearchIndexer(pool, { batch: 10_000 }).catchUp();
  const copyMs = performance.now() - copyStarted;
  await db.query('VACUUM ANALYZE pets');
  await db.query('VACUUM ANALYZE pet_search');
  await db.query('CHECKPOINT').catch(() => {});
  console.log(`search ${size}: loaded in ${Math.round(loadedMs)} ms; the search table copied ${copied.pets} pets from ${copied.events} events in ${Math.round(copyMs)} ms`);

  const key = generateApiKey();
  await db.query('INSERT INTO api_keys (name, key_hash) VALUES ($1, $2)', ['scale', hashApiKey(key)]);
  const app = await buildApp({ config: { ...loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '10000000' }), DATABASE_URL: url }, pool });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const get = (pathAndQuery: string): Promise<{ status: number; link: string | undefined; body: string }> =>
    new Promise((resolve, reject) => {
      http
        .get(`${address}${pathAndQuery}`, { agent, headers: { authorization: `Bearer ${key}` } }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, link: typeof response.headers.link === 'string' ? response.headers.link : undefined, body: Buffer.concat(chunks).toString() }));
          response.on('error', reject);
        })
        .on('error', reject);
    });
  const next = (link: string | undefined): string | undefined => /^<([^>]+)>; rel="next"$/.exec(link ?? '')?.[1];
  /** The URL of the page after `pages` pages from `first`, followed link by link as a client would. */
  const deepUrl = async (first: string, pages: number): Promise<string> => {
    let url = first;
    for (let i = 0; i < pages; i++) {
      const answer = await get(url);
      const following = next(answer.link);
      if (answer.status !== 200 || !following) throw new Error(`${first}: page ${i + 1} answered ${answer.status} without a next page`);
      url = following;
    }
    return url;
  };
  const count = async (where: string, values: unknown[]): Promise<number> => Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM pet_search WHERE ${where}`, values)).rows[0]?.n);
  const rare = 'hypoallergenic';
  const queries: { query: string; url: string; matches: number }[] = [];
  const add = async (query: string, first: string, matches: number, deep: boolean): Promise<void> => {
    queries.push({ query: `${query}, page 1`, url: first, matches });
    if (deep) queries.push({ query: `${query}, after ${DEEP} pages`, url: await deepUrl(first, DEEP), matches });
  };
  const givenName = 'Bibo';
  await add(`q=${givenName.toLowerCase()} (a given name, by relevance)`, `/v1/pets?limit=${PAGE}&q=${givenName.toLowerCase()}`, await count("document LIKE '%bibo%'", []), false);
  await add('q=bibbo (a typo of it, by relevance)', `/v1/pets?limit=${PAGE}&q=bibbo`, await count("search_text('bibbo') <% document OR document LIKE '%bibbo%'", []), false);
  await add('q=labrador&orderBy=name (a breed, by name)', `/v1/pets?limit=${PAGE}&q=labrador&orderBy=name`, await count("document LIKE '%labrador%' OR search_text('labrador') <% document", []), true);
  await add(`tag=${rare}`, `/v1/pets?limit=${PAGE}&tag=${rare}`, await count('tags @> $1', [[rare]]), true);
  await add(`tag=${rare}&orderBy=name`, `/v1/pets?limit=${PAGE}&tag=${rare}&orderBy=name`, await count('tags @> $1', [[rare]]), true);
  await add('orderBy=name', `/v1/pets?limit=${PAGE}&orderBy=name`, size, true);
  await add('orderBy=createdAt desc', `/v1/pets?limit=${PAGE}&orderBy=createdAt%20desc`, size, true);

  const rows: SearchRow[] = [];
  for (const q of queries) {
    const times: number[] = [];
    const run = async (n: number, keep: boolean): Promise<void> => {
      let left = n;
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (left-- > 0) {
            const started = performance.now();
            const answer = await get(q.url);
            const ms = performance.now() - started;
            if (answer.status !== 200) throw new Error(`${q.query}: ${answer.status} ${answer.body.slice(0, 200)}`);
            if (keep) times.push(ms);
          }
        }),
      );
    };
    await run(200, false);
    await run(samples, true);
    times.sort((a, b) => a - b);
    rows.push({ query: q.query, matches: q.matches, p50: quantile(times, 0.5), p99: quantile(times, 0.99) });
    console.log(`search ${size} ${q.query}: ${q.matches} matches, p50 ${quantile(times, 0.5).toFixed(2)} ms, p99 ${quantile(times, 0.99).toFixed(2)} ms`);
  }
  agent.destroy();
  await app.close();
  await pool.end();
  await db.end();
  const dropper = new pg.Client({ connectionString: adminUrl });
  await dropper.connect();
  await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await dropper.end();

  const lines = [
    `Search at ${size.toLocaleString('en')} pets: ${CONNECTIONS} clients at once over loopback sockets, ${samples} requests per row after 200 unmeasured; the search table copied ${copied.pets.toLocaleString('en')} pets in ${(copyMs / 1000).toFixed(1)} s (${Math.round(copied.pets / (copyMs / 1000)).toLocaleString('en')} a second).`,
    '',
    '| query | matches | p50 ms | p99 ms |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.query} | ${r.matches.toLocaleString('en')} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} |`),
  ];
  writeFileSync(path.join(out, 'search.md'), `${lines.join('\n')}\n`);
  return lines;
}
