// Categories against a model, with fast-check: generated sequences of putCategory,
// getCategory, deleteCategory and listCategories, valid and not, on a few ids and names
// that collide in every letter case. After every request the answer is the one the model
// predicts (201 for a first name, 200 for a rename, 409 naming the holder, 404 for an id
// without a name, 400 for bad input, never a 5xx), and at the end the table holds exactly
// the model.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helper.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '1000000' } });
});
afterAll(async () => t.close());

// 300 by default (the suite's time); FUZZ_RUNS for a deeper search, FUZZ_SEED to replay one (docs/testing.md).
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

/** Names that collide ignoring case, and some that do not. ASCII: JavaScript and every PostgreSQL locale fold them alike. */
const name = fc.oneof(
  fc.constantFrom('Dogs', 'dogs', 'DOGS', 'dOgS', 'Cats', 'CATS', 'Birds', 'Fish', 'fish '),
  fc.string({ unit: fc.constantFrom('a', 'B', 'c', ' '), minLength: 1, maxLength: 3 }),
);
const badBody = fc.constantFrom('', '{', '{}', '{"name":""}', `{"name":"${'n'.repeat(101)}"}`, '{"name":"a\\u0001"}', '{"name":null}', '{"name":3}', '{"name":"Dogs","x":1}', '[]', 'null');
const id = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 1, max: 6 }) }, { weight: 1, arbitrary: fc.constantFrom(0, -1, 2 ** 53, 1.5) });
const step = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('put' as const), id, body: fc.oneof({ weight: 6, arbitrary: name.map((n) => JSON.stringify({ name: n })) }, badBody) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('get' as const), id }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), id }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('list' as const), limit: fc.integer({ min: 1, max: 4 }) }) },
);

const validId = (n: number) => Number.isSafeInteger(n) && n >= 1;
/** The name the body gives, when the contract accepts the body. */
function nameOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const keys = Object.keys(parsed);
    const given = (parsed as { name?: unknown }).name;
    if (keys.length !== 1 || typeof given !== 'string' || given.length < 1 || given.length > 100 || /[\u0000-\u001f\u007f]/.test(given)) return undefined;
    return given;
  } catch {
    return undefined;
  }
}

describe('categories against a model', () => {
  it(`${RUNS} generated sequences: every answer as the model predicts, and the table ends as the model`, async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        await t.pool.query('DELETE FROM categories');
        const model = new Map<number, string>();
        for (const s of steps) {
          if (s.op === 'list') {
            const response = await t.api({ method: 'GET', url: `/v1/categories?limit=${s.limit}`, headers: t.auth });
            const want = [...model].sort((a, b) => a[0] - b[0]).map(([i, n]) => ({ id: i, name: n }));
            expect(response.statusCode).toBe(200);
            expect(response.json()).toEqual(want.slice(0, s.limit));
            expect(response.headers.link === undefined).toBe(want.length <= s.limit);
            continue;
          }
          const url = `/v1/categories/${s.id}`;
          const response =
            s.op === 'put'
              ? await t.api({ method: 'PUT', url, headers: { ...t.auth, 'content-type': 'application/json' }, payload: s.body })
              : await t.api({ method: s.op === 'get' ? 'GET' : 'DELETE', url, headers: t.auth });
          statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
          const said = `${s.op} ${url} ${s.op === 'put' ? s.body : ''}: ${response.body}`;
          if (!validId(s.id)) {
            expect(response.statusCode, said).toBe(400);
            continue;
          }
          const held = model.get(s.id);
          if (s.op === 'get') {
            expect(response.statusCode, said).toBe(held === undefined ? 404 : 200);
            if (held !== undefined) expect(response.json()).toEqual({ id: s.id, name: held });
          } else if (s.op === 'delete') {
            expect(response.statusCode, said).toBe(held === undefined ? 404 : 204);
            model.delete(s.id);
          } else {
            const given = nameOf(s.body);
            if (given === undefined) {
              expect(response.statusCode, said).toBe(400);
              continue;
            }
            const holder = [...model].find(([other, n]) => other !== s.id && n.toLowerCase() === given.toLowerCase());
            if (holder) {
              expect(response.statusCode, said).toBe(409);
              expect(response.json().message).toMatch(new RegExp(`^Category ${holder[0]} is already named "`));
            } else {
              expect(response.statusCode, said).toBe(held === undefined ? 201 : 200);
              expect(response.json()).toEqual({ id: s.id, name: given });
              model.set(s.id, given);
            }
          }
        }
        const rows = (await t.pool.query<{ id: string; name: string }>('SELECT id, name FROM categories ORDER BY id')).rows;
        expect(rows.map((r) => [Number(r.id), r.name])).toEqual([...model].sort((a, b) => a[0] - b[0]));
      }),
      { numRuns: RUNS, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined },
    );
    // The runs reached every kind of answer.
    for (const status of [200, 201, 204, 400, 404, 409]) expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(RUNS / 50);
    console.log(`categories fuzz: ${RUNS} sequences, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
  });
});
