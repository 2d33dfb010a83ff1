// listPets' promises in every order, tried as clients meet them on two service processes
// that share one database. While writers create pets, rename, retag and remove others
// (through both processes), readers walk every `orderBy` (alone, with `tag`, and searched
// by `q`: by relevance a word, a typo, and a prefix in name order) from the
// first page to the last, their pages alternating between the processes. Judged by what the
// clients were answered:
// - in id order, no pet is returned twice, and every pet whose 201 had been answered before
//   the walk began and that was never removed is returned (exactly once);
// - in any other order, every pet that nobody touched during the walk (the `stable` ones,
//   created before and never changed) is returned exactly once.
// And read-your-writes across processes: a pet created (or retagged, renamed) through one
// process is found by `tag`, by `q` and on the first page of `createdAt desc` and
// `updatedAt desc` through the other in the very next request.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { keyedInstances } from '../helper.js';
import type { ServerProcess } from '../process.js';

const STABLE = 40;
const CHURN = 40;
const WRITERS = 6;
const WRITE_FOR_MS = 6_000;
const WALKS = [
  'orderBy=id',
  'orderBy=id%20desc',
  'orderBy=name',
  'orderBy=name%20desc',
  'orderBy=createdAt',
  'orderBy=createdAt%20desc',
  'orderBy=updatedAt',
  'orderBy=updatedAt%20desc',
  'tag=stable',
  'tag=stable&orderBy=name',
  'q=stable',
  'q=stble',
  'q=sta&orderBy=name',
];

let database: { url: string; drop: () => Promise<void> };
let servers: ServerProcess[] = [];
let key = '';

beforeAll(async () => {
  ({ database, key, servers } = await keyedInstances(2));
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGKILL')));
  await database?.drop();
});

const headers = () => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
const base = (n: number) => servers[n % servers.length]!.url;
/** Names that sort all over the alphabet, so that renamed pets move across pages. */
const nameFor = (n: number) => `${String.fromCharCode(65 + ((n * 7) % 26))}${String.fromCharCode(97 + ((n * 11) % 26))}-${n}`;

async function send(n: number, method: string, path: string, body?: unknown): Promise<{ status: number; json: { id: number } }> {
  const response = await fetch(`${base(n)}${path}`, { method, ...(body === undefined ? { headers: { authorization: `Bearer ${key}` } } : { headers: headers(), body: JSON.stringify(body) }) });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as { id: number }) : { id: 0 } };
}

async function create(n: number, name: string, tags: string[]): Promise<number> {
  const created = await send(n, 'POST', '/v1/pets', { name, categoryId: 1, status: 'available', tags });
  expect(created.status).toBe(201);
  return created.json.id;
}

/** Creates, renames, retags and removes pets until `until` (the ids it removed in `removed`); how many writes it made. */
async function writer(n: number, until: number, churn: number[], removed: Set<number>): Promise<number> {
  let i = 0;
  for (; performance.now() < until; i++) {
    const id = churn[(n * 7 + i) % churn.length]!;
    switch (i % 4) {
      case 0:
        await create(n + i, nameFor(n * 1000 + i), i % 8 === 0 ? ['stable'] : ['new']);
        break;
      case 1:
        expect([200, 404]).toContain((await send(n + i, 'PATCH', `/v1/pets/${id}`, { name: nameFor(n * 1000 + i) })).status);
        break;
      case 2:
        expect([200, 404]).toContain((await send(n + i, 'PATCH', `/v1/pets/${id}`, { tags: i % 3 === 0 ? ['stable'] : ['moved'] })).status);
        break;
      default:
        if (i % 12 === 3) {
          removed.add(id);
          expect([204, 404]).toContain((await send(n + i, 'DELETE', `/v1/pets/${id}`)).status);
        }
    }
  }
  return i;
}

/** One walk from the first page to the last, pages alternating between the processes. */
async function walk(n: number, query: string): Promise<number[]> {
  const ids: number[] = [];
  let next: string | undefined = `/v1/pets?limit=3&${query}`;
  for (let i = 0; next; i++) {
    const response: Response = await fetch(new URL(next, base(n + i)), { headers: headers() });
    const body = (await response.json()) as { id: number }[];
    expect(response.status, JSON.stringify(body)).toBe(200);
    ids.push(...body.map((p) => p.id));
    next = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
  }
  return ids;
}

it('every order: the pets untouched during a walk are returned exactly once; in id order, none twice', async () => {
  const stable: number[] = [];
  for (let i = 0; i < STABLE; i++) stable.push(await create(i, `${nameFor(i + 500)} stable`, ['stable']));
  const churn: number[] = [];
  for (let i = 0; i < CHURN; i++) churn.push(await create(i, nameFor(i + 700), ['stable']));
  const before = new Set([...stable, ...churn]);

  const removed = new Set<number>();
  const until = performance.now() + WRITE_FOR_MS;
  let writing = true;
  const writers = Promise.all(Array.from({ length: WRITERS }, (_, n) => writer(n, until, churn, removed))).finally(() => (writing = false));
  const walked = { during: 0 };
  const walks: { query: string; ids: number[] }[] = [];
  const readers = Promise.all(
    WALKS.map(async (query, n) => {
      // Complete walks only, at least one each.
      do {
        walks.push({ query, ids: await walk(n, query) });
        if (writing) walked.during++;
      } while (writing);
    }),
  );
  const [writes] = await Promise.all([writers, readers]);
  // The race happened: walks ended while writers were still at work, and the writers wrote.
  expect(walked.during).toBeGreaterThan(WALKS.length);
  expect(writes.reduce((a, b) => a + b, 0)).toBeGreaterThan(100);

  expect(walks.length).toBeGreaterThanOrEqual(WALKS.length);
  for (const { query, ids } of walks) {
    const counts = new Map<number, number>();
    for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
    for (const id of stable) expect(counts.get(id), `${query}: stable pet ${id}`).toBe(1);
    if (query === 'orderBy=id' || query === 'tag=stable') {
      expect([...counts.values()].every((c) => c === 1), `${query}: a pet twice`).toBe(true);
      // Churn pets keep their ids: in id order every one never removed is owed too (those
      // retagged may leave a tag walk).
      if (query === 'orderBy=id') for (const id of before) if (!removed.has(id)) expect(counts.get(id), `${query}: pet ${id}`).toBe(1);
    }
  }
}, 60_000);

const idsAt = async (n: number, query: string): Promise<number[]> => ((await (await fetch(`${base(n)}/v1/pets?${query}`, { headers: headers() })).json()) as { id: number }[]).map((p) => p.id);

it('a pet is found by tag, by q and first among the newest on the other process in the answer that follows its 201, and by its new tags and as the latest changed after its 200', async () => {
  for (let i = 0; i < 20; i++) {
    const tag = `striped-${i}`;
    const id = await create(i, `Striped ${i}`, [tag]);
    expect(await idsAt(i + 1, `tag=${tag}`)).toEqual([id]);
    expect(await idsAt(i + 1, `q=${tag}`)).toEqual([id]);
    expect((await idsAt(i + 1, 'orderBy=createdAt%20desc&limit=1'))[0]).toBe(id);
    expect((await send(i, 'PATCH', `/v1/pets/${id}`, { tags: ['spotted', tag] })).status).toBe(200);
    expect(await idsAt(i + 1, `tag=spotted&tag=${tag}`)).toEqual([id]);
    expect(await idsAt(i + 1, `q=spotted%20${tag}`)).toEqual([id]);
    expect((await idsAt(i + 1, 'orderBy=updatedAt%20desc&limit=1'))[0]).toBe(id);
  }
});
