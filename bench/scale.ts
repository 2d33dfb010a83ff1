// `npm run bench:scale`: does the cost of a request grow with the catalogue? Loads 10,000
// and then 5,000,000 pets, in two status distributions (a realistic mix, and a skewed one
// where `sold` is rare and only among the newest rows, which tempts a default-cost planner
// into walking the primary key), and measures single-client latency (p50, p99) through the
// app of: listPets page 1 and a deep page, with and without `status`, with a `tag` carried
// by 5% of pets, in `orderBy=name` and `updatedAt desc`, and searched by relevance (`q`: a
// word, its prefix, a typo, two words) (deep: after 1,000 pages of 20, or 90% of the way at
// the smaller size), getPet and getInventory, the two sizes side by
// side in alternating blocks. The `EXPLAIN (ANALYZE,
// BUFFERS)` of each query (its generic plan, as the service runs it) is saved beside the
// results, in bench/results/scale-<time>/ (git-ignored); the table also replaces the
// `npm run bench:scale` section of bench/latest.md (tracked; bench/latest.ts).
//
// Settings: DATABASE_URL (else an embedded PostgreSQL with default costs), SCALE_SIZES
// (default "10000,5000000"), SCALE_SAMPLES (default 3000 requests per measurement: a p99
// over a few hundred is the third-worst sample: one scheduling hiccup of the shared machine).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { generateApiKey, hashApiKey } from '../src/api-keys/verifier.js';
import { loadConfig } from '../src/config.js';
import { ensureDatabase, openEmbeddedPostgres } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { createPool, PLAN_CACHE_MODE } from '../src/db/pool.js';
import { INVENTORY_STATEMENTS } from '../src/catalogue/inventory.js';
import { PET_STATEMENTS } from '../src/catalogue/pets.js';
import { FILTERED_WALK, orderedPage } from '../src/catalogue/pet-orders.js';
import { createCursorCodec } from '../src/pagination/cursor.js';
import { machine } from './harness.js';
import { recordLatest } from './latest.js';
import { quantile } from './stats.js';

// A given name from a pet's number j: a syllable, a consonant, a vowel and an ending.
const GIVEN = `(ARRAY['ba','be','bo','da','di','ka','ko','la','li','ma','mi','mo','na','no','pa','ri','ro','sa','ta','to'])[1 + j % 20]
  || (ARRAY['b','d','l','m','n','r','s','t','x','z'])[1 + (j / 20) % 10] || (ARRAY['a','e','i','o','u','y','ie','ee','ai','ou'])[1 + (j / 200) % 10]
  || (ARRAY['','n','s','x','ck','lo'])[1 + (j / 2000) % 6]`;
const BREEDS = `ARRAY['Labrador','Labradoodle','Golden Retriever','Poodle','Beagle','Bulldog','Dachshund','Boxer','Husky','Collie','Terrier','Spaniel',
  'Shepherd','Pointer','Setter','Whippet','Greyhound','Maltese','Pug','Chihuahua','Corgi','Akita','Samoyed','Vizsla','Basenji','Saluki','Newfoundland',
  'Mastiff','Rottweiler','Dalmatian','Sphynx','Persian','Siamese','Bengal','Ragdoll','Birman','Burmese','Manx','Savannah','Chartreux']`;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SIZES = (process.env.SCALE_SIZES ?? '10000,5000000').split(',').map(Number);
const SAMPLES = Number(process.env.SCALE_SAMPLES ?? 3000);

const distributions = {
  // 60% available, 25% pending, 10% sold, 5% none, spread evenly.
  realistic: `(ARRAY['available','available','available','available','available','available','available','available','available','available','available','available','pending','pending','pending','pending','pending','sold','sold',NULL])[1 + (i * 7919) % 20]`,
  // Old pets available, the newest 0.1% sold: `status=sold` is rare and only at the end.
  skewed: `CASE WHEN i > $1 * 0.999 THEN 'sold' WHEN i % 10 = 0 THEN 'pending' ELSE 'available' END`,
} as const;

// A young-generation collection before each timed request (when node runs with
// --expose-gc, as `npm run bench:scale` does): scavenges do not depend on the catalogue's
// size, but at about one request in 150 they decided the p99 (0.6% of trivial /healthz
// requests took over 2 ms), so that a p99 ratio swung between 0.3 and 3 from run to run.
const gc = (globalThis as { gc?: (options: { type: 'minor'; execution: 'sync' }) => void }).gc;
const collectYoung = (): void => gc?.({ type: 'minor', execution: 'sync' });

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'animal-store-scale-'));
  let adminUrl = process.env.DATABASE_URL;
  let stop = async () => {};
  if (!adminUrl) {
    const embedded = await openEmbeddedPostgres({ dataDir, fast: true, log: () => {} });
    adminUrl = embedded.adminUrl;
    stop = () => embedded.stop();
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const out = path.join(root, 'bench/results', `scale-${stamp}`);
  mkdirSync(out, { recursive: true });
  const rows: { size: number; distribution: string; query: string; p50: number; p99: number }[] = [];
  let pgVersion = '';
  {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    pgVersion = (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '';
    await admin.end();
  }

  try {
    for (const [distribution, expression] of Object.entries(distributions)) {
      // Every size loaded first, then measured side by side.
      const loaded: { size: number; app: Awaited<ReturnType<typeof buildApp>>; key: string; queries: { query: string; url: () => string }[]; close: () => Promise<unknown> }[] = [];
      for (const size of SIZES) {
        const name = `animal_store_scale_${distribution}_${size}`;
        const admin = new pg.Client({ connectionString: adminUrl });
        await admin.connect();
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.query(`CREATE DATABASE ${name}`);
        await admin.end();
        const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
        await migrate(url, { info: () => {} });
        const db = new pg.Client({ connectionString: url });
        await db.connect();
        await db.query(`SET plan_cache_mode = ${PLAN_CACHE_MODE}`);
        const loadStarted = performance.now();
        // Names in no order of their ids, `<given> the <breed>`: 12,000 given names (words of
        // about 1 in 8,000 pets), 40 breeds (1 in 40: `labrador`, 25,000 of 1,000,000); 5% of
        // pets tagged `hypoallergenic`.
        await db.query(
          `INSERT INTO pets (name, category_id, status, tags)
          SELECT initcap(${GIVEN}) || ' the ' || (${BREEDS})[1 + (i * 31) % 40], 1 + i % 100, ${expression}, CASE WHEN i % 20 = 0 THEN '{hypoallergenic}'::text[] END
          FROM generate_series(1, $1::bigint) AS i CROSS JOIN LATERAL (SELECT (i * 7919) % $1 AS j) AS n`,
          [size],
        );
        await db.query('VACUUM ANALYZE pets, pet_terms, search_vocabulary');
        // Write out what the load dirtied now, not while latencies are being measured (needs
        // a superuser or pg_checkpoint; without, the run goes on).
        await db.query('CHECKPOINT').catch(() => {});
        console.log(`${distribution} ${size}: loaded in ${Math.round(performance.now() - loadStarted)} ms`);
        const key = generateApiKey();
        await db.query('INSERT INTO api_keys (name, key_hash) VALUES ($1, $2)', ['scale', hashApiKey(key)]);
        const secret = (await db.query<{ value: Buffer }>("SELECT value FROM service_secrets WHERE name = 'cursor'")).rows[0]?.value as Buffer;
        const cursors = createCursorCodec(secret);

        const rare = distribution === 'skewed' ? 'sold' : 'available';
        const deep = Math.floor(size * 0.9);
        // The deep status page starts 90% of the way through that status's rows, but still
        // returns a full page (so both sizes compare pages of 20).
        const deepStatus = Number(
          (
            await db.query<{ id: string }>(
              'SELECT id FROM pets WHERE status = $1 ORDER BY status, id OFFSET (SELECT GREATEST(0, LEAST(count(*) * 0.9, count(*) - 21)) FROM pets WHERE status = $1)::bigint LIMIT 1',
              [rare],
            )
          ).rows[0]?.id ?? 0,
        ) - 1;
        // A deep page of a walk: its cursor after 1,000 pages of 20 (or 90% of the way, when
        // fewer), reached by following rel="next" through the app with pages of 100.
        const deepCursor = async (query: string, count: number): Promise<{ cursor: string; after: number; values: readonly (string | number)[] }> => {
          const pages = Math.max(1, Math.min(200, Math.floor((count * 0.9) / 100)));
          let next = `/v1/pets?limit=100&${query}`;
          for (let i = 0; i < pages; i++) {
            const response = await inject(next);
            next = /^<([^>]+)>/.exec(String(response.headers.link))?.[1] ?? '';
          }
          const cursor = new URL(next, 'http://x').searchParams.get('cursor') as string;
          return { cursor, ...cursors.decode(cursor) };
        };
        const pool = createPool({ DATABASE_URL: url, DB_POOL_MAX: 2, DB_CONNECT_TIMEOUT_MS: 5000, DB_STATEMENT_TIMEOUT_MS: 60_000 });
        const app = await buildApp({ config: { ...loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '10000000' }), DATABASE_URL: url }, pool });
        const inject = (at: string) => app.inject({ method: 'GET', url: at, headers: { authorization: `Bearer ${key}` } });
        const tagged = Math.floor(size / 20);
        const deepTag = await deepCursor('tag=hypoallergenic', tagged);
        const deepName = await deepCursor('orderBy=name', size);
        const deepUpdated = await deepCursor('orderBy=updatedAt%20desc', size);
        const deepSearch = await deepCursor('q=labrador', Math.floor(size / 40));
        const searchPage = (q: string, key?: { cursor: string; after: number; values: readonly (string | number)[] }) => ({
          url: () => `/v1/pets?limit=20&q=${encodeURIComponent(q)}${key ? `&cursor=${key.cursor}` : ''}`,
          sql: PET_STATEMENTS.search.text,
          params: [q, key ? key.values[0] : null, key ? key.values[1] : null, key ? key.after : null, null, null, null, null, 20, FILTERED_WALK],
        });
        const queries: { query: string; url: () => string; sql: string; params: unknown[] }[] = [
          { query: 'listPets limit=20, page 1', url: () => '/v1/pets?limit=20', sql: PET_STATEMENTS.list.text, params: [0, 20] },
          { query: 'listPets limit=20, deep page (90%)', url: () => `/v1/pets?limit=20&cursor=${cursors.encode({ after: deep, operation: 'listPets' })}`, sql: PET_STATEMENTS.list.text, params: [deep, 20] },
          { query: `listPets limit=20 status=${rare}, page 1`, url: () => `/v1/pets?limit=20&status=${rare}`, sql: PET_STATEMENTS.listByStatus.text, params: [rare, 0, 20] },
          { query: `listPets limit=20 status=${rare}, deep page (90%)`, url: () => `/v1/pets?limit=20&status=${rare}&cursor=${cursors.encode({ after: deepStatus, operation: 'listPets', filter: `status=${rare}` })}`, sql: PET_STATEMENTS.listByStatus.text, params: [rare, deepStatus, 20] },
          { query: 'listPets limit=20 tag=hypoallergenic (5%), page 1', url: () => '/v1/pets?limit=20&tag=hypoallergenic', sql: PET_STATEMENTS.listByTags.text, params: ['{hypoallergenic}', null, null, 0, 20] },
          { query: 'listPets limit=20 tag=hypoallergenic (5%), deep page', url: () => `/v1/pets?limit=20&tag=hypoallergenic&cursor=${deepTag.cursor}`, sql: PET_STATEMENTS.listByTags.text, params: ['{hypoallergenic}', null, null, deepTag.after, 20] },
          ...(['name', 'updatedAt desc'] as const).flatMap((order) => {
            const deepKey = order === 'name' ? deepName : deepUpdated;
            const first = orderedPage({ order, limit: 20, key: undefined });
            const deep = orderedPage({ order, limit: 20, key: { values: deepKey.values, id: deepKey.after } });
            return [
              { query: `listPets limit=20 orderBy=${order}, page 1`, url: () => `/v1/pets?limit=20&orderBy=${encodeURIComponent(order)}`, sql: first.statement.text, params: first.values },
              { query: `listPets limit=20 orderBy=${order}, deep page`, url: () => `/v1/pets?limit=20&orderBy=${encodeURIComponent(order)}&cursor=${deepKey.cursor}`, sql: deep.statement.text, params: deep.values },
            ];
          }),
          { query: 'listPets limit=20 q=labrador (2.5%), page 1', ...searchPage('labrador') },
          { query: 'listPets limit=20 q=labrador (2.5%), deep page', ...searchPage('labrador', deepSearch) },
          { query: 'listPets limit=20 q=lab (a prefix: 5%), page 1', ...searchPage('lab') },
          { query: 'listPets limit=20 q=labrdor (a typo), page 1', ...searchPage('labrdor') },
          { query: 'listPets limit=20 q=retriever golden (2 words), page 1', ...searchPage('retriever golden') },
          { query: 'getPet (random ids)', url: () => `/v1/pets/${1 + Math.floor(Math.random() * size)}`, sql: PET_STATEMENTS.get.text, params: [Math.floor(size / 2)] },
          { query: 'getInventory', url: () => '/v1/store/inventory', sql: INVENTORY_STATEMENTS.counts.text, params: [] },
        ];
        // What the inventory would cost counted from the table, for comparison (its plan only).
        const counted = await db.query("EXPLAIN (ANALYZE, BUFFERS) SELECT coalesce(status, 'none'), count(*) FROM pets GROUP BY 1");
        writeFileSync(path.join(out, `${distribution}-${size}-inventory-counted-from-pets.txt`), counted.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n'));

        for (const q of queries) {
          // The plan the service runs: a prepared statement's generic plan (src/db/pool.ts).
          await db.query(`PREPARE q AS ${q.sql}`);
          const args = q.params.map((v) => (v === null ? 'NULL' : typeof v === 'number' ? String(v) : db.escapeLiteral(String(v)))).join(', ');
          const plan = await db.query(`EXPLAIN (ANALYZE, BUFFERS) EXECUTE q${args ? `(${args})` : ''}`);
          await db.query('DEALLOCATE q');
          writeFileSync(path.join(out, `${distribution}-${size}-${q.query.replace(/[^a-z0-9]+/gi, '-')}.txt`), `${q.sql}\n-- ${JSON.stringify(q.params)}\n\n${plan.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n')}\n`);
        }
        loaded.push({ size, app, key, queries, close: async () => Promise.all([app.close().then(() => pool.end()), db.end()]) });
      }

      // Both sizes are measured in alternating blocks (small, large, large, small, ...), so
      // that a stall of the shared machine lands on either as likely: a p99 is the tenth
      // worst of 1000 samples, and hiccups of a few ms would otherwise decide the ratio.
      const BLOCKS = 10;
      const WARM_UP = 300;
      for (let q = 0; q < (loaded[0]?.queries.length ?? 0); q++) {
        const times = new Map<number, number[]>(loaded.map((l) => [l.size, []]));
        const sample = async (l: (typeof loaded)[number], n: number, keep: boolean) => {
          const query = l.queries[q] as (typeof l.queries)[number];
          for (let i = 0; i < n; i++) {
            collectYoung();
            const started = performance.now();
            const response = await l.app.inject({ method: 'GET', url: query.url(), headers: { authorization: `Bearer ${l.key}` } });
            const ms = performance.now() - started;
            if (response.statusCode !== 200 && !(query.query.startsWith('getPet') && response.statusCode === 404)) throw new Error(`${query.query}: ${response.statusCode} ${response.body}`);
            if (keep) times.get(l.size)?.push(ms);
          }
        };
        // Long enough for the JIT and the database's caches to settle: the first query
        // measured after a load otherwise carried its warm-up in its p99.
        for (const l of loaded) await sample(l, WARM_UP, false);
        for (let block = 0; block < BLOCKS; block++) {
          for (const l of block % 2 === 0 ? loaded : [...loaded].reverse()) await sample(l, Math.ceil(SAMPLES / BLOCKS), true);
        }
        for (const l of loaded) {
          const sorted = (times.get(l.size) ?? []).sort((x, y) => x - y);
          const name = (l.queries[q] as { query: string }).query;
          rows.push({ size: l.size, distribution, query: name, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) });
          console.log(`${distribution} ${l.size} ${name}: p50 ${quantile(sorted, 0.5).toFixed(2)} ms, p99 ${quantile(sorted, 0.99).toFixed(2)} ms`);
        }
      }
      for (const l of loaded.splice(0)) await l.close();
    }
  } finally {
    const [small, large] = [SIZES[0], SIZES[SIZES.length - 1]];
    const lines = [
      `# Scale ${new Date().toISOString()}`,
      '',
      `Machine: ${machine(pgVersion)}.`,
      '',
      `Single client, ${SAMPLES} requests per measurement through the app (inject, no network), after 300 warm-up requests, the sizes measured alternately in 10 blocks, a young-generation GC before each timed request (${gc ? "on" : "off: run with --expose-gc"}). PostgreSQL with default planner costs. Plans: the .txt files beside this one.`,
      '',
      `| distribution | query | p50 @${small} | p50 @${large} | p50 ratio | p99 @${small} | p99 @${large} | p99 ratio |`,
      '|---|---|---|---|---|---|---|---|',
    ];
    for (const row of rows.filter((r) => r.size === small)) {
      const big = rows.find((r) => r.size === large && r.distribution === row.distribution && r.query === row.query);
      if (!big) continue;
      lines.push(`| ${row.distribution} | ${row.query} | ${row.p50.toFixed(2)} | ${big.p50.toFixed(2)} | **${(big.p50 / row.p50).toFixed(2)}** | ${row.p99.toFixed(2)} | ${big.p99.toFixed(2)} | ${(big.p99 / row.p99).toFixed(2)} |`);
    }
    writeFileSync(path.join(out, 'README.md'), `${lines.join('\n')}\n`);
    recordLatest('bench:scale', lines.join('\n'), path.join(out, 'README.md'));
    console.log(`\n${lines.join('\n')}`);
    await stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
