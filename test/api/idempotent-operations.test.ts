// Idempotency-Key on every operation whose contract declares it (src/middleware/idempotency.ts):
// one case per such operation, and a contract operation with the header but no case here
// fails the first test, so an operation cannot be given the header without its idempotent
// path being proven:
// - a retry replays the stored answer (status, body, declared headers) and writes nothing;
// - another request under the same key is 422, and writes nothing;
// - the writes and the stored answer commit together: when storing the answer fails, the
//   writes are rolled back and the key is given back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationId } from '../../src/contract/handler.js';
import { idempotentOperations } from '../../src/contract/spec.js';
import { buildTestApp, type ApiRequest, type TestApp } from '../helper.js';

interface IdempotentCase {
  /** A request of the operation; a different `n` is a different request. */
  request: (t: TestApp, n: number) => Promise<ApiRequest>;
  /** Counts what the operation writes: one more per request it processes. */
  writes: (t: TestApp) => Promise<number>;
}

const json = { 'content-type': 'application/json' };
const count = async (t: TestApp, sql: string): Promise<number> => Number((await t.pool.query<{ n: string }>(sql)).rows[0]?.n);

/** A new available pet, stored directly. */
const availablePet = async (t: TestApp): Promise<number> =>
  Number((await t.pool.query<{ id: string }>("INSERT INTO pets (name, category_id, status) VALUES ('For sale', 1, 'available') RETURNING id")).rows[0]?.id);

/** A placed order for a new pet, through the API. */
const placedOrder = async (t: TestApp): Promise<number> => {
  const placed = await t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: JSON.stringify({ petId: await availablePet(t) }) });
  expect(placed.statusCode).toBe(201);
  return placed.json().id as number;
};

const cases: Partial<Record<OperationId, IdempotentCase>> = {
  createPet: {
    request: async (t, n) => ({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: `Idem ${n}`, categoryId: 3 }) }),
    writes: (t) => count(t, 'SELECT count(*) AS n FROM pets'),
  },
  batchCreatePets: {
    request: async (t, n) => ({ method: 'POST', url: '/v1/pets:batchCreate', headers: { ...t.auth, ...json }, payload: JSON.stringify({ requests: [{ name: `Batch ${n}a`, categoryId: 3 }, { name: `Batch ${n}b`, categoryId: 3 }] }) }),
    writes: (t) => count(t, "SELECT count(*) / 2 AS n FROM pets WHERE name LIKE 'Batch %'"),
  },
  placeOrder: {
    request: async (t) => ({ method: 'POST', url: '/v1/store/orders', headers: { ...t.auth, ...json }, payload: JSON.stringify({ petId: await availablePet(t) }) }),
    writes: (t) => count(t, "SELECT count(*) AS n FROM orders o JOIN pets p ON p.id = o.pet_id WHERE o.status = 'placed' AND p.status = 'pending'"),
  },
  cancelOrder: {
    request: async (t) => ({ method: 'POST', url: `/v1/store/orders/${await placedOrder(t)}/cancel`, headers: t.auth }),
    writes: (t) => count(t, "SELECT count(*) AS n FROM orders o JOIN pets p ON p.id = o.pet_id WHERE o.status = 'cancelled' AND p.status = 'available'"),
  },
  completeOrder: {
    request: async (t) => ({ method: 'POST', url: `/v1/store/orders/${await placedOrder(t)}/complete`, headers: t.auth }),
    writes: (t) => count(t, "SELECT count(*) AS n FROM orders o JOIN pets p ON p.id = o.pet_id WHERE o.status = 'completed' AND p.status = 'sold'"),
  },
};

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '100000' } });
});
afterAll(async () => t.close());

const withKey = (request: ApiRequest, key: string): ApiRequest => ({ ...request, headers: { ...request.headers, 'idempotency-key': key } });

describe('Idempotency-Key on every operation that declares it', () => {
  it('has a case here for every such operation of the contract', () => {
    expect(Object.keys(cases).sort()).toEqual([...idempotentOperations].sort());
  });

  it.each(idempotentOperations.slice(1).map((id, i) => [idempotentOperations[i] as OperationId, id] as const))(
    'one key sent to %s and to %s names two requests (keys are scoped by operation)',
    async (first, second) => {
      const key = `shared-${first}-${second}`;
      const a = await t.api(withKey(await (cases[first] as IdempotentCase).request(t, 10), key));
      const b = await t.api(withKey(await (cases[second] as IdempotentCase).request(t, 11), key));
      expect([a.statusCode, b.statusCode].every((s) => s < 300)).toBe(true);
      expect(b.headers['idempotent-replayed']).toBeUndefined();
    },
  );

  describe.each(idempotentOperations.map((id) => [id, cases[id] as IdempotentCase] as const))('%s', (operationId, c) => {
    it('a retry replays the stored answer and writes nothing', async () => {
      const request = await c.request(t, 1);
      const before = await c.writes(t);
      const first = await t.api(withKey(request, `${operationId}-replay`));
      expect(first.statusCode).toBeLessThan(300);
      expect(await c.writes(t)).toBe(before + 1);
      const again = await t.api(withKey(request, `${operationId}-replay`));
      expect(again.statusCode).toBe(first.statusCode);
      expect(again.body).toBe(first.body);
      expect(again.headers.location).toBe(first.headers.location);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await c.writes(t)).toBe(before + 1);
    });

    it('another request under the same key is 422 and writes nothing', async () => {
      await t.api(withKey(await c.request(t, 2), `${operationId}-other`));
      const before = await c.writes(t);
      const other = await t.api(withKey(await c.request(t, 3), `${operationId}-other`));
      expect(other.statusCode).toBe(422);
      expect(other.json()).toMatchObject({ code: 'idempotency_key_reused', status: 422 });
      expect(await c.writes(t)).toBe(before);
    });

    it('when the answer cannot be stored, the writes are rolled back and the key is given back', async () => {
      const key = `${operationId}-unstorable`;
      // PostgreSQL refuses to store this key's answer, after the handler's writes were made.
      await t.pool.query(`CREATE OR REPLACE FUNCTION refuse_answer() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.key = '${key}' AND NEW.status_code IS NOT NULL THEN RAISE EXCEPTION 'answer refused by the test'; END IF; RETURN NEW; END $$`);
      await t.pool.query('CREATE TRIGGER refuse_answer BEFORE UPDATE ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION refuse_answer()');
      const request = withKey(await c.request(t, 4), key);
      const before = await c.writes(t);
      try {
        const failed = await t.api(request);
        expect(failed.statusCode).toBe(500);
        expect(await c.writes(t)).toBe(before);
      } finally {
        await t.pool.query('DROP TRIGGER refuse_answer ON idempotency_keys');
      }
      // The key was given back: a retry is processed afresh, once.
      const retry = await t.api(request);
      expect(retry.statusCode).toBeLessThan(300);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(await c.writes(t)).toBe(before + 1);
    });
  });
});
