// The service runs every statement with its generic plan (src/db/pool.ts), made once per
// connection from the statistics of that moment. A statement that acts on one pet must
// therefore reach it by its key whatever those statistics say: closing an order once walked
// the (status, id) index over every pending pet when the plan was made while few were
// pending (~2 ms of PostgreSQL's CPU per close at 3,000 pending). There is no public
// surface for a plan short of timing it, so these run the service's own statements the way
// the pool runs them and read how many pet rows each plan touched.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATEGORY_STATEMENTS } from '../../src/catalogue/categories.js';
import { EVENT_STATEMENTS } from '../../src/events/feed.js';
import { DELIVERY_STATEMENTS } from '../../src/events/webhooks/deliveries.js';
import { ORDER_STATEMENTS } from '../../src/store/orders.js';
import { PET_STATEMENTS } from '../../src/catalogue/pets.js';
import { FILTERED_WALK, orderedPage, PET_ORDERS, type OrderedPage } from '../../src/catalogue/pet-orders.js';
import type { Key } from '../../src/db/keyset.js';
import { closePool, createPool, PLAN_CACHE_MODE } from '../../src/db/pool.js';
import { createTestDatabase } from '../helper.js';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** Every scan of `relation` in the plan, with the rows it read (returned and filtered out). */
function scansOf(node: PlanNode, relation: string): { node: string; read: number }[] {
  const own = node['Relation Name'] === relation && /Scan/.test(node['Node Type'])
    ? [{ node: node['Node Type'], read: (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0)) * node['Actual Loops'] }]
    : [];
  return [...own, ...(node.Plans ?? []).flatMap((child) => scansOf(child, relation))];
}

const PENDING = 1000;
let db: { url: string; drop: () => Promise<void> };
let client: pg.Client;
let keyId: number;
let orderIds: number[];

beforeAll(async () => {
  db = await createTestDatabase();
  client = new pg.Client({ connectionString: db.url, options: `-c plan_cache_mode=${PLAN_CACHE_MODE}` });
  await client.connect();
  // Statistics taken while no pet is pending, and kept so: then 1,000 pets become pending.
  await client.query('ALTER TABLE pets SET (autovacuum_enabled = false)');
  await client.query("INSERT INTO pets (name, category_id, status) SELECT 'Stock ' || i, 1, 'available' FROM generate_series(1, $1) AS i", [PENDING * 3]);
  keyId = Number((await client.query<{ id: string }>("INSERT INTO api_keys (name, key_hash) VALUES ('plans', sha256('plans')) RETURNING id")).rows[0]?.id);
  await client.query('ANALYZE pets');
  await client.query('ANALYZE orders');
  const placed = await client.query<{ id: string }>(
    "WITH held AS (UPDATE pets SET status = 'pending' WHERE id <= $2 RETURNING id) INSERT INTO orders (api_key_id, pet_id, status, expires_at) SELECT $1, id, 'placed', now() + interval '1 hour' FROM held ORDER BY id RETURNING id",
    [keyId, PENDING],
  );
  orderIds = placed.rows.map((r) => Number(r.id)).sort((a, b) => a - b);
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

/** The plan `sql` ran with these values (after `before`), as a prepared statement of the pool runs it (rolled back; PREPARE is not). */
async function generic(sql: string, values: (string | number | boolean | null)[], before?: string): Promise<PlanNode> {
  await client.query('BEGIN');
  try {
    if (before) await client.query(before);
    await client.query(`PREPARE s AS ${sql}`);
    const args = values.map((v) => (v === null ? 'NULL' : typeof v === 'string' ? client.escapeLiteral(v) : String(v))).join(', ');
    const result = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE s(${args})`);
    return result.rows[0]?.['QUERY PLAN'][0]?.Plan as PlanNode;
  } finally {
    await client.query('ROLLBACK');
    await client.query('DEALLOCATE s');
  }
}

describe("statements on some pets read those pets' rows only, with statistics from before 1,000 pets became pending", () => {
  // `want`: the most pet rows any one scan of the plan may read (its pets, once each).
  it.each([
    ['completing an order', { given: () => [ORDER_STATEMENTS.close.text, [orderIds[500] as number, keyId, 'completed']] as const, want: 1 }],
    ['cancelling an order', { given: () => [ORDER_STATEMENTS.close.text, [orderIds[999] as number, keyId, 'cancelled']] as const, want: 1 }],
    ['placing an order', { given: () => [ORDER_STATEMENTS.place.text, [keyId, PENDING + 1, 900]] as const, want: 1 }],
    ['placing an order for a pending pet', { given: () => [ORDER_STATEMENTS.place.text, [keyId, 7, 900]] as const, want: 1 }],
    [
      'closing three orders together (coalesced)',
      { given: () => [ORDER_STATEMENTS.closeMany.text, [`{${orderIds[10]},${orderIds[500]},${orderIds[999]}}`, `{${keyId},${keyId},${keyId}}`, '{completed,cancelled,completed}']] as const, want: 3 },
    ],
    ['placing three orders together, one for a pending pet (coalesced)', { given: () => [ORDER_STATEMENTS.placeMany.text, [`{${keyId},${keyId},${keyId}}`, `{${PENDING + 1},${PENDING + 2},7}`, '{900,900,900}']] as const, want: 3 }],
    // A page reads its pets and one more (whether a next page exists); pages are built as
    // JSON around the scan (src/catalogue/pets.ts, pageOf), which must not change what it reads.
    ['a page of 20 pets, deep in the table', { given: () => [PET_STATEMENTS.list.text, [2500, 20]] as const, want: 21 }],
    ['a page of 20 pending pets, a status that was rare', { given: () => [PET_STATEMENTS.listByStatus.text, ['pending', 300, 20]] as const, want: 21 }],
    ['a page of 20 pets of one category, deep in the table', { given: () => [PET_STATEMENTS.listByCategory.text, [1, null, 2500, 20]] as const, want: 21 }],
    ['changing a pet (updatePet)', { given: () => [PET_STATEMENTS.update.text, [PENDING + 3, null, 'Max', 2, true, 'sold', true, '{calm}']] as const, want: 1 }],
    ['changing a pending pet\'s status (refused)', { given: () => [PET_STATEMENTS.update.text, [7, null, null, null, true, null, false, null]] as const, want: 1 }],
    ['removing a pet (deletePet)', { given: () => [PET_STATEMENTS.remove.text, [PENDING + 4, null]] as const, want: 1 }],
    [
      'changing three pets together, one pending (coalesced)',
      { given: () => [PET_STATEMENTS.updateMany.text, ['{1,2,3}', `{${PENDING + 6},${PENDING + 7},7}`, '{NULL,NULL,NULL}', '{Max,NULL,NULL}', '{NULL,2,NULL}', '{false,false,true}', '{NULL,NULL,sold}', '{true,true,false}', '{"[\\"calm\\"]",NULL,NULL}']] as const, want: 3 },
    ],
    ['removing three pets together, one pending (coalesced)', { given: () => [PET_STATEMENTS.removeMany.text, ['{1,2,3}', `{${PENDING + 8},${PENDING + 9},8}`, '{NULL,NULL,NULL}']] as const, want: 3 }],
    [
      'a lookup and two pages together (coalesced, every kind)',
      { given: () => [PET_STATEMENTS.readMany.text, [`{${PENDING + 5}}`, '{1}', '{2000}', '{20}', '{2}', '{pending}', '{600}', '{20}']] as const, want: 21 },
    ],
  ])('%s', async (_title, { given, want }) => {
    const [sql, values] = given();
    const scans = scansOf(await generic(sql, [...values]), 'pets');
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) expect(scan, JSON.stringify(scans)).toMatchObject({ read: expect.toSatisfy((n: number) => n <= want) });
  });

  it.each(PET_ORDERS)('a page of 20 pets in orderBy=%s, first and deep in the table, reads 21 pets; of one status, walks the index; among 100 ids, those 100', async (order) => {
    // The key of the 2,000th pet in that order, by following pages of 100.
    let key: Key | undefined;
    for (let i = 0; i < 20; i++) {
      const page = orderedPage({ order, limit: 100, key });
      key = page.cut((await client.query(page.statement.text, page.values)).rows).next;
    }
    const literal = (v: unknown) => (Array.isArray(v) ? `{${v.join(',')}}` : (v as string | number));
    const reads = async (p: OrderedPage) => {
      const { statement, values } = orderedPage(p);
      const scans = scansOf(await generic(statement.text, values.map(literal)), 'pets');
      expect(scans.length).toBeGreaterThan(0);
      return Math.max(...scans.map((s) => s.read));
    };
    expect(await reads({ order, limit: 20, key })).toBeLessThanOrEqual(21);
    expect(await reads({ order, limit: 20, key: undefined })).toBeLessThanOrEqual(21);
    // With a filter, the order's index is walked and the others skipped: no sort of the table.
    const filtered = orderedPage({ order, limit: 20, key, status: 'pending' });
    const plan = await generic(filtered.statement.text, filtered.values.map(literal));
    const sorts = (node: PlanNode): number => (node['Node Type'] === 'Sort' ? 1 : 0) + (node.Plans ?? []).reduce((n, child) => n + sorts(child), 0);
    expect(sorts(plan), JSON.stringify(plan)).toBe(0);
    expect(await reads({ order, limit: 20, key, ids: Array.from({ length: 100 }, (_, i) => 1 + i * 29) })).toBeLessThanOrEqual(100);
  });

  it('a page of two tags walks the rarer one by the statistics, whichever comes first: one pet carries both, among 1,500 of the other', async () => {
    const tagged = "UPDATE pets SET tags = CASE WHEN id = 2998 THEN '{common,rare}'::text[] ELSE '{common}'::text[] END WHERE id % 2 = 0; ANALYZE pet_tags";
    const plan = await generic(PET_STATEMENTS.listByTags.text, ['{common,rare}', null, null, 0, 20], tagged);
    const scans = scansOf(plan, 'pets');
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) expect(scan, JSON.stringify(scans)).toMatchObject({ read: expect.toSatisfy((n: number) => n <= 1) });
    // The choice reads no row of pet_tags: the walk reads the rare tag's and the bound.
    const walkedTags = scansOf(plan, 'pet_tags');
    expect(walkedTags.reduce((n, scan) => n + scan.read, 0), JSON.stringify(walkedTags)).toBeLessThanOrEqual(2);
  });

  it('a page of 20 pets of one tag, deep among them, reads its pets only (pet_tags had no row when analyzed)', async () => {
    const tagged = "UPDATE pets SET tags = '{calm,young}' WHERE id % 3 = 0";
    const scans = scansOf(await generic(PET_STATEMENTS.listByTags.text, ['{calm,young}', null, null, 1500, 20], tagged), 'pets');
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) expect(scan, JSON.stringify(scans)).toMatchObject({ read: expect.toSatisfy((n: number) => n <= 21) });
  });

  // pet_search_page runs its statements inside PL/pgSQL, so its plan shows a Function Scan
  // only; the buffers it touched include its statements': a page that walked the table would
  // touch every pet's page (about 12,000 buffer hits here, a pet's index and heap each).
  it('a page of 20 by relevance, first or deep among 3,000 matches, touches about its own rows only', async () => {
    const buffers = async (after: [number, string, number] | [null, null, null]) => {
      const explained = await client.query<{ 'QUERY PLAN': [{ Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number } }] }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${PET_STATEMENTS.search.text}`,
        ['stock', ...after, null, null, null, null, 20, FILTERED_WALK],
      );
      const plan = explained.rows[0]?.['QUERY PLAN'][0].Plan;
      return (plan?.['Shared Hit Blocks'] ?? 0) + (plan?.['Shared Read Blocks'] ?? 0);
    };
    // Past PL/pgSQL's first five, planned, executions: the plans the pool's connections keep.
    for (let i = 0; i < 6; i++) {
      await buffers([null, null, null]);
      await buffers([3, 'stock', 2500]);
    }
    // 126 and 86 when written: an index entry and a heap page per pet, and their index pages.
    expect(await buffers([null, null, null])).toBeLessThan(200);
    expect(await buffers([3, 'stock', 2500])).toBeLessThan(200);
  });

  // A typo's words come from the vocabulary's trigram index, which only a bitmap scan reads:
  // search_typos must keep it although pet_search_page, which calls it, turns bitmap scans off.
  // Those it misses, by the b-tree (a letter left out, two swapped) and, for a word of 3, the
  // partial index of the words of 3 (migration 1763700000029): never by reading the vocabulary.
  it("a typo's words are read from the vocabulary's indexes, inside the relevance walk too", async () => {
    const plans: string[] = [];
    const onNotice = (notice: { message?: string }) => plans.push(notice.message ?? '');
    client.on('notice', onNotice);
    try {
      await client.query("LOAD 'auto_explain'");
      await client.query("SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET client_min_messages = log");
      for (const q of ['stcok', 'tmo']) await client.query(PET_STATEMENTS.search.text, [q, null, null, null, null, null, null, null, 20, FILTERED_WALK]);
    } finally {
      await client.query('RESET auto_explain.log_min_duration; RESET auto_explain.log_nested_statements; RESET client_min_messages');
      client.off('notice', onNotice);
    }
    const typos = plans.filter((plan) => plan.includes('FROM search_vocabulary v'));
    expect(typos.length, plans.join('\n')).toBeGreaterThan(0);
    for (const plan of typos) {
      for (const index of ['search_vocabulary_trigrams', 'search_vocabulary_terms', 'search_vocabulary_three']) expect(plan).toMatch(new RegExp(`(on|using) ${index} `));
      expect(plan).not.toContain('Seq Scan on search_vocabulary');
    }
  });

  it("the expiry job's batch reads its own orders' pets only", async () => {
    // Five of the placed orders are past their expiresAt; the job's batch expires them.
    const due = `UPDATE orders SET expires_at = placed_at + interval '1 microsecond' WHERE id = ANY('{${orderIds.slice(100, 105).join(',')}}'::bigint[])`;
    const scans = scansOf(await generic(ORDER_STATEMENTS.expire.text, [1000], due), 'pets');
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) expect(scan, JSON.stringify(scans)).toMatchObject({ read: expect.toSatisfy((n: number) => n <= 5) });
  });
});

describe('statements on some categories read those categories only, with statistics from when there were 10', () => {
  beforeAll(async () => {
    await client.query('ALTER TABLE categories SET (autovacuum_enabled = false)');
    await client.query("INSERT INTO categories (id, name) SELECT i * 3, 'Category ' || i FROM generate_series(1, 10) AS i");
    await client.query('ANALYZE categories');
    await client.query("INSERT INTO categories (id, name) SELECT i * 3, 'Category ' || i FROM generate_series(11, 5000) AS i");
  });

  // `want`: the most category rows any one scan of the plan may read.
  it.each([
    ['getCategory', { given: () => [CATEGORY_STATEMENTS.get.text, [3000]] as const, want: 1 }],
    ['deleteCategory', { given: () => [CATEGORY_STATEMENTS.remove.text, [3000]] as const, want: 1 }],
    ["the holder of a name, ignoring case (putCategory's 409)", { given: () => [CATEGORY_STATEMENTS.holder.text, ['CATEGORY 4000']] as const, want: 1 }],
    ['a page of 20 categories, deep in the table', { given: () => [CATEGORY_STATEMENTS.list.text, [12_000, 20]] as const, want: 21 }],
  ])('%s', async (_title, { given, want }) => {
    const [sql, values] = given();
    const scans = scansOf(await generic(sql, [...values]), 'categories');
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) expect(scan, JSON.stringify(scans)).toMatchObject({ read: expect.toSatisfy((n: number) => n <= want) });
  });
});

describe("events: a page or a lookup reads its own events only, with the statistics of the table as the setup left it", () => {
  // The setup wrote 3,000 pet.created (ids 1-3000), then 1,000 pet.updated (3001-4000) and
  // 1,000 order.placed of one key (4001-5000). Statistics from then; another 2,000 catalogue
  // events after.
  beforeAll(async () => {
    await client.query('ALTER TABLE events SET (autovacuum_enabled = false)');
    await client.query('ANALYZE events');
    await client.query("UPDATE pets SET name = name || '.' WHERE id BETWEEN 1001 AND 3000");
  });

  // `want`: the most event rows any one scan of the plan may read.
  it.each([
    ['getEvent', { given: () => [EVENT_STATEMENTS.get.text, [4500, true, true, keyId]] as const, want: 1 }],
    ['a page of 20 of every event a key sees, deep in the table', { given: () => [EVENT_STATEMENTS.listBoth.text, [2500, 20, keyId]] as const, want: 21 }],
    // Past the last catalogue event before 1,000 order events: the catalogue's own index.
    ['a page of catalogue events across 1,000 order events', { given: () => [EVENT_STATEMENTS.listCatalogue.text, [3990, 20]] as const, want: 21 }],
    ["a page of one key's order events", { given: () => [EVENT_STATEMENTS.listOrders.text, [0, 20, keyId]] as const, want: 21 }],
    // The type filter: each type named is read from its own range, a page and one more of
    // each at most, never the events of other types. A full page asks nothing more.
    ['a page of 20 pet.updated among 3,000 pet.created', { given: () => [EVENT_STATEMENTS.listCatalogueOfTypes.text, [0, 20, '{pet.updated}']] as const, want: 21 }],
    ['a page of 20 of two types, every event a key sees', { given: () => [EVENT_STATEMENTS.listBothOfTypes.text, [0, 20, '{order.placed,pet.updated}', keyId]] as const, want: 21 }],
    ["a page of 20 of one key's order.placed", { given: () => [EVENT_STATEMENTS.listOrdersOfTypes.text, [0, 20, '{order.placed}', keyId]] as const, want: 21 }],
  ])('%s', async (_title, { given, want }) => {
    const [sql, values] = given();
    const scans = scansOf(await generic(sql, [...values]), 'events');
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) expect(scan, JSON.stringify(scans)).toMatchObject({ read: expect.toSatisfy((n: number) => n <= want) });
  });

  // A page that holds every event the key may see (here: none of a type that has none) reads
  // no event of that type, then at most 1,000 events after the cursor to move it to where the
  // feed is final (src/events/feed.ts, HEAD_SCAN). Without the type's index it read every event.
  it.each([
    ['category.deleted, of which there is none, every event a key sees', { given: () => [EVENT_STATEMENTS.listBothOfTypes.text, [0, 20, '{category.deleted}', keyId]] as const }],
    ['category.deleted, of which there is none, catalogue events', { given: () => [EVENT_STATEMENTS.listCatalogueOfTypes.text, [0, 20, '{category.deleted}']] as const }],
    ["order.expired, of which the key has none, its order events", { given: () => [EVENT_STATEMENTS.listOrdersOfTypes.text, [0, 20, '{order.expired}', keyId]] as const }],
  ])('a short page: %s', async (_title, { given }) => {
    const [sql, values] = given();
    const scans = scansOf(await generic(sql, [...values]), 'events');
    expect(scans.length).toBeGreaterThan(0);
    expect(scans.reduce((sum, scan) => sum + scan.read, 0), JSON.stringify(scans)).toBeLessThanOrEqual(1000);
  });
});

describe("orders: a page of one key's orders reads that key's orders only, with statistics from when another key held 1,000", () => {
  // The setup's key placed 1,000 orders (pets 1-1000); statistics from then. Another key then
  // places 20 (pets 2001-2020), after them in id order.
  let other: number;
  beforeAll(async () => {
    await client.query('ALTER TABLE orders SET (autovacuum_enabled = false)');
    await client.query('ANALYZE orders');
    other = Number((await client.query<{ id: string }>("INSERT INTO api_keys (name, key_hash) VALUES ('plans 2', sha256('plans 2')) RETURNING id")).rows[0]?.id);
    await client.query(
      "WITH held AS (UPDATE pets SET status = 'pending' WHERE id BETWEEN 2001 AND 2020 RETURNING id) INSERT INTO orders (api_key_id, pet_id, status, expires_at) SELECT $1, id, 'placed', now() + interval '1 hour' FROM held ORDER BY id",
      [other],
    );
  });

  // `want`: the most order rows any one scan of the plan may read (a page and one more).
  it.each([
    ["the first page of the other key's orders", { given: () => [ORDER_STATEMENTS.list.text, [other, 0, 20]] as const, want: 21 }],
    ["a page of the first key's orders, deep in them", { given: () => [ORDER_STATEMENTS.list.text, [keyId, orderIds[500] as number, 20]] as const, want: 21 }],
    ["the other key's placed orders", { given: () => [ORDER_STATEMENTS.listByStatus.text, [other, 0, 20, 'placed']] as const, want: 21 }],
    ["the other key's orders of one pet", { given: () => [ORDER_STATEMENTS.listByPet.text, [other, 0, 20, 2010]] as const, want: 21 }],
    ["the other key's placed orders of one pet", { given: () => [ORDER_STATEMENTS.listByStatusAndPet.text, [other, 0, 20, 'placed', 2010]] as const, want: 21 }],
  ])('%s', async (_title, { given, want }) => {
    const [sql, values] = given();
    const scans = scansOf(await generic(sql, [...values]), 'orders');
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) expect(scan, JSON.stringify(scans)).toMatchObject({ read: expect.toSatisfy((n: number) => n <= want) });
  });
});

describe("webhook deliveries: a page of one endpoint's attempts reads that endpoint's only, with statistics from when another held 1,000", () => {
  let quiet: number;
  beforeAll(async () => {
    const endpoint = async () =>
      Number((await client.query<{ id: string }>("INSERT INTO webhook_endpoints (api_key_id, url, event_types, secret) VALUES ($1, 'https://a.example/', '{pet.created}', 'whsec_' || repeat('A', 32)) RETURNING id", [keyId])).rows[0]?.id);
    const attempts = (endpoint: number, count: number) =>
      client.query("INSERT INTO webhook_deliveries (endpoint_id, event_id, attempt, status_code, duration_ms, attempted_at) SELECT $1, i, 1, 200, 5, now() FROM generate_series(1, $2) AS i", [endpoint, count]);
    const busy = await endpoint();
    quiet = await endpoint();
    await client.query('ALTER TABLE webhook_deliveries SET (autovacuum_enabled = false)');
    await attempts(busy, 1000);
    await client.query('ANALYZE webhook_deliveries');
    await attempts(quiet, 20);
  });

  it("the first page of the endpoint with 20 attempts, after the other's 1,000", async () => {
    const scans = scansOf(await generic(DELIVERY_STATEMENTS.list.text, [quiet, 0, 20]), 'webhook_deliveries');
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) expect(scan, JSON.stringify(scans)).toMatchObject({ read: expect.toSatisfy((n: number) => n <= 21) });
  });
});

describe("the service's pool compiles no plan (jit off)", () => {
  it("runs a statement whose estimate passes jit_above_cost without compiling it, where PostgreSQL's default would", async () => {
    // A plan estimated far above jit_above_cost (100,000 by default), explained, not run.
    const costly = 'EXPLAIN (FORMAT JSON) SELECT count(*) FROM pg_class a CROSS JOIN pg_class b CROSS JOIN pg_class c';
    const jitOf = async (on: pg.Pool | pg.Client) => (await on.query<{ 'QUERY PLAN': [{ JIT?: unknown }] }>(costly)).rows[0]?.['QUERY PLAN'][0].JIT;
    const pool = createPool({ DATABASE_URL: db.url, DB_POOL_MAX: 1, DB_CONNECT_TIMEOUT_MS: 10_000, DB_STATEMENT_TIMEOUT_MS: 60_000 });
    try {
      expect(await jitOf(pool)).toBeUndefined();
    } finally {
      await closePool(pool);
    }
    // The same statement on a connection with the server's settings is compiled (where the
    // server has JIT at all: a build without LLVM has no JIT to turn off).
    const available = (await client.query<{ available: boolean }>('SELECT pg_jit_available() AS available')).rows[0]?.available;
    if (available) expect(await jitOf(client)).toBeDefined();
  });
});
