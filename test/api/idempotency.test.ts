// Idempotency-Key on createPet (draft-ietf-httpapi-idempotency-key-header).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createApiKey, type TestApp } from '../helper.js';
import { within, WAIT_MS } from '../process.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '100000' } });
});
afterAll(async () => t.close());

const create = (payload: object, key?: string, auth = t.auth) =>
  t.api({ method: 'POST', url: '/v1/pets', headers: { ...auth, 'content-type': 'application/json', ...(key !== undefined ? { 'idempotency-key': key } : {}) }, payload: JSON.stringify(payload) });
const count = async () => Number((await t.pool.query<{ n: string }>('SELECT count(*) AS n FROM pets')).rows[0]?.n);

describe('Idempotency-Key', () => {
  it('a retry with the same key and body replays the answer and adds nothing', async () => {
    const before = await count();
    const first = await create({ name: 'Once', categoryId: 1 }, 'key-replay');
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await create({ categoryId: 1, name: 'Once' }, 'key-replay'); // same body, keys reordered
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await count()).toBe(before + 1);
  });

  it('accepts the draft\'s quoted form as the same key', async () => {
    const first = await create({ name: 'Quoted', categoryId: 1 }, '"key-quoted"');
    const again = await create({ name: 'Quoted', categoryId: 1 }, 'key-quoted');
    expect(again.json()).toEqual(first.json());
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('the same key with another body is 422 and adds nothing', async () => {
    await create({ name: 'First', categoryId: 1 }, 'key-reused');
    const before = await count();
    const other = await create({ name: 'Second', categoryId: 1 }, 'key-reused');
    expect(other.statusCode).toBe(422);
    expect(other.json()).toEqual({ code: 'idempotency_key_reused', message: 'This Idempotency-Key was already used with a different request body', status: 422 });
    expect(await count()).toBe(before);
  });

  it('keys are scoped to the API key that sent them', async () => {
    const { key: otherKey } = await createApiKey(t.pool, 'other client');
    // A new key reaches the cache through NOTIFY, within milliseconds.
    await within(WAIT_MS, async () => (await t.app.inject({ method: 'GET', url: '/v1/pets?limit=1', headers: { authorization: `Bearer ${otherKey}` } })).statusCode === 200);
    const mine = await create({ name: 'Mine', categoryId: 1 }, 'key-scoped');
    const theirs = await create({ name: 'Theirs', categoryId: 1 }, 'key-scoped', { authorization: `Bearer ${otherKey}` });
    expect(theirs.statusCode).toBe(201);
    expect(theirs.json().id).not.toBe(mine.json().id);
  });

  it('a request still in flight makes a retry 409 with Retry-After', async () => {
    // A claim left by a request that is still running (its lease has not expired).
    const apiKeyId = (await t.pool.query<{ id: string }>('SELECT id FROM api_keys ORDER BY id LIMIT 1')).rows[0]?.id;
    const { createHash } = await import('node:crypto');
    const hash = createHash('sha256').update('{"categoryId":1,"name":"Slow"}').digest();
    await t.pool.query("INSERT INTO idempotency_keys (api_key_id, operation, key, request_hash, locked_until) VALUES ($1, 'createPet', 'key-in-flight', $2, now() + interval '1 minute')", [apiKeyId, hash]);
    const retry = await create({ name: 'Slow', categoryId: 1 }, 'key-in-flight');
    expect(retry.statusCode).toBe(409);
    expect(retry.headers['retry-after']).toBe('1');
    expect(retry.json()).toMatchObject({ code: 'idempotency_in_flight', status: 409 });
    // Once its lease is over (the request died), a retry takes the key over.
    await t.pool.query("UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE key = 'key-in-flight'");
    expect((await create({ name: 'Slow', categoryId: 1 }, 'key-in-flight')).statusCode).toBe(201);
  });

  it('a rejected request does not use up its key', async () => {
    expect((await create({ name: '', categoryId: 1 }, 'key-after-400')).statusCode).toBe(400);
    expect((await create({ name: 'Fixed', categoryId: 1 }, 'key-after-400')).statusCode).toBe(201);
  });

  it('keys are kept 24 hours, then purged and free again', async () => {
    const first = await create({ name: 'Old', categoryId: 1 }, 'key-expired');
    await t.pool.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'key-expired'");
    const reused = await create({ name: 'New', categoryId: 1 }, 'key-expired');
    expect(reused.statusCode).toBe(201);
    expect(reused.json().id).not.toBe(first.json().id);

    await t.pool.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'key-expired'");
    const { createIdempotencyKeysRepository } = await import('../../src/middleware/idempotency-keys.js');
    expect(await createIdempotencyKeysRepository(t.pool).purge()).toBe(1);
    expect((await t.pool.query("SELECT 1 FROM idempotency_keys WHERE key = 'key-expired'")).rowCount).toBe(0);
  });

  it.each([
    ['too long', 'k'.repeat(300)],
    ['empty', ''],
    ['with a space', 'a b'],
  ])('a key that is %s is 400', async (_title, key) => {
    const response = await create({ name: 'Rex', categoryId: 1 }, key);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'bad_request', status: 400 });
  });

  it('200 concurrent creates sharing 20 keys add exactly 20 pets, and every client sees a consistent answer', async () => {
    const before = await count();
    const keys = Array.from({ length: 20 }, (_, i) => `concurrent-${i}`);
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => {
        const key = keys[i % 20] as string;
        return create({ name: `Pet ${key}`, categoryId: 7 }, key).then((r) => ({ key, status: r.statusCode, body: r.json(), replayed: r.headers['idempotent-replayed'] }));
      }),
    );
    expect(await count()).toBe(before + 20);
    for (const key of keys) {
      const mine = answers.filter((a) => a.key === key);
      expect(mine.every((a) => a.status === 201 || a.status === 409)).toBe(true);
      const created = mine.filter((a) => a.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      // Every 201 for a key is the same pet; exactly one of them is the original.
      expect(new Set(created.map((a) => a.body.id)).size).toBe(1);
      expect(created.filter((a) => a.replayed !== 'true')).toHaveLength(1);
      expect(created[0]?.body.name).toBe(`Pet ${key}`);
      for (const refused of mine.filter((a) => a.status === 409)) expect(refused.body.code).toBe('idempotency_in_flight');
    }
  });
});
