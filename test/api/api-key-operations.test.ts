// The /api-keys operations (contract 1.3.0): createApiKey, listApiKeys, getApiKey,
// revokeApiKey, rotateApiKey; a key's expiry and a rotation's grace; lastUsedAt written in
// batches, never per request.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, keysSettled, type ApiRequest, type TestApp } from '../helper.js';
import { within, WAIT_MS } from '../process.js';

const json = { 'content-type': 'application/json' };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const SECRET = /^ask_[A-Za-z0-9_-]{43}$/;

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_ANONYMOUS_MAX: '100000', RATE_LIMIT_MAX: '100000' } });
});
afterAll(async () => t.close());

/** Every secret answered in this file. */
const issued: string[] = [];
/** Every answer of the test's key: only createApiKey's and rotateApiKey's may hold a secret, which they show once. */
const admin = async (request: ApiRequest) => {
  const response = await t.api({ ...request, headers: { ...json, ...bearer(t.key), ...request.headers } });
  const showsSecret = request.method === 'POST' && /^\/v1\/api-keys(\/\d+\/rotate)?$/.test(request.url) && response.statusCode < 300;
  if (showsSecret) issued.push(response.json().secret);
  else {
    expect(response.body).not.toMatch(/ask_[A-Za-z0-9_-]{5,}|"secret"/);
    for (const secret of issued) expect(response.body).not.toContain(secret.slice(8));
  }
  return response;
};
const create = (body: unknown) => admin({ method: 'POST', url: '/v1/api-keys', payload: JSON.stringify(body) });
/** rotateApiKey by the key itself (a key rotates only its own secret), with `secret`; the new secret is recorded as issued. */
const rotate = async (id: number, secret: string, payload?: string) => {
  const response = await t.api({ method: 'POST', url: `/v1/api-keys/${id}/rotate`, headers: { ...json, ...bearer(secret) }, ...(payload === undefined ? {} : { payload }) });
  if (response.statusCode === 200) issued.push(response.json().secret);
  return response;
};
const get = (id: number) => admin({ method: 'GET', url: `/v1/api-keys/${id}` });
/** What a key gets from listPets (pets:read): 200, or 401 once it no longer works. */
const statusWith = async (secret: string) => (await t.api({ method: 'GET', url: '/v1/pets?limit=1', headers: bearer(secret) })).statusCode;
const settled = () => keysSettled(t.pool, async (key) => (await statusWith(key)) === 200);
/** The stored keys, as they are: to show a refused request changed nothing. */
const table = async () => (await t.pool.query('SELECT id, name, key_hash, scopes, expires_at, revoked_at, previous_key_hash, previous_expires_at FROM api_keys ORDER BY id')).rows;

describe('createApiKey', () => {
  it('answers 201 with the secret once, its prefix and Location; getApiKey and listApiKeys never show the secret', async () => {
    const created = await create({ name: 'storefront', scopes: ['pets:read', 'orders:read'] });
    expect(created.statusCode).toBe(201);
    const key = created.json();
    expect(key.secret).toMatch(SECRET);
    expect(key.prefix).toBe(key.secret.slice(0, 8));
    expect(created.headers.location).toBe(`/v1/api-keys/${key.id}`);
    expect(key).toMatchObject({ name: 'storefront', scopes: ['pets:read', 'orders:read'] });
    expect(key).not.toHaveProperty('expiresAt');
    expect(key).not.toHaveProperty('lastUsedAt');

    const { secret, ...withoutSecret } = key;
    const fetched = await get(key.id);
    expect(fetched.json()).toEqual(withoutSecret);
    const listed = await admin({ method: 'GET', url: '/v1/api-keys?limit=100' });
    expect(listed.json()).toContainEqual(withoutSecret);
    for (const answer of [fetched, listed]) {
      expect(answer.body).not.toContain(secret);
      expect(answer.body).not.toMatch(/ask_[A-Za-z0-9_-]{5,}/);
    }
    await within(WAIT_MS, async () => (await statusWith(secret)) === 200);
  });

  it('stores the scopes in the contract\'s order, and an expiresAt given, kept to the millisecond', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = await create({ name: 'nightly import', scopes: ['orders:write', 'pets:read'], expiresAt });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ scopes: ['pets:read', 'orders:write'], expiresAt });
    // Kept to the millisecond, as the contract says: the digits past the third are dropped.
    const precise = await create({ name: 'precise', scopes: ['pets:read'], expiresAt: '2030-01-01T00:00:00.123999Z' });
    expect(precise.json().expiresAt).toBe('2030-01-01T00:00:00.123Z');
  });

  const bad: [string, unknown][] = [
    ['an unknown scope', { name: 'x', scopes: ['root'] }],
    ['no scope', { name: 'x', scopes: [] }],
    ['a scope twice', { name: 'x', scopes: ['pets:read', 'pets:read'] }],
    ['no name', { scopes: ['pets:read'] }],
    ['an empty name', { name: '', scopes: ['pets:read'] }],
    ['a name over 200 characters', { name: 'x'.repeat(201), scopes: ['pets:read'] }],
    ['a name with a control character', { name: 'a\u0007b', scopes: ['pets:read'] }],
    ['an unknown field', { name: 'x', scopes: ['pets:read'], admin: true }],
    ['an expiresAt in the past', { name: 'x', scopes: ['pets:read'], expiresAt: '2020-01-01T00:00:00Z' }],
    ['an expiresAt of now, a second ago', { name: 'x', scopes: ['pets:read'], expiresAt: new Date(Date.now() - 1000).toISOString() }],
    ['an expiresAt without its offset', { name: 'x', scopes: ['pets:read'], expiresAt: '2030-01-01T00:00:00' }],
    ['an expiresAt that is not a date-time', { name: 'x', scopes: ['pets:read'], expiresAt: 'tomorrow' }],
    ['a leap second long past', { name: 'x', scopes: ['pets:read'], expiresAt: '2016-12-31T23:59:60Z' }],
    ['scopes as a string', { name: 'x', scopes: 'pets:read' }],
  ];
  it.each(bad)('%s is 400 and stores nothing', async (_title, body) => {
    const before = await table();
    const response = await create(body);
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('bad_request');
    expect(await table()).toEqual(before);
  });

  it('an expiresAt in the past says what to do', async () => {
    const response = await create({ name: 'x', scopes: ['pets:read'], expiresAt: '2020-01-01T00:00:00Z' });
    expect(response.json().details).toEqual([{ location: 'body', field: '/expiresAt', rule: 'future', message: 'must be in the future; give a later time, or none for a key that never expires' }]);
  });

  it('an expiresAt past year 9999 in UTC is 400 and stores nothing (its answer could not be written as a date-time)', async () => {
    const before = await table();
    const response = await create({ name: 'x', scopes: ['pets:read'], expiresAt: '9999-12-31T23:59:59-14:00' });
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([
      { location: 'body', field: '/expiresAt', rule: 'formatMaximum', message: 'must be at most 9999-12-31T23:59:59Z in UTC (a later one cannot be written as a date-time): give an earlier time, or none for a key that never expires' },
    ]);
    expect(await table()).toEqual(before);
    expect((await create({ name: 'x', scopes: ['pets:read'], expiresAt: '9999-12-31T23:59:59.5Z' })).statusCode).toBe(400);
    const last = await create({ name: 'x', scopes: ['pets:read'], expiresAt: '9999-12-31T23:59:59Z' });
    expect(last.statusCode).toBe(201);
    expect(last.json().expiresAt).toBe('9999-12-31T23:59:59.000Z');
  });
});

describe('listApiKeys', () => {
  it('pages every key once, in id order, with Link rel="next"', async () => {
    for (let i = 0; i < 5; i++) expect((await create({ name: `paged ${i}`, scopes: ['pets:read'] })).statusCode).toBe(201);
    const all = (await t.pool.query<{ id: string }>('SELECT id FROM api_keys ORDER BY id')).rows.map((r) => Number(r.id));
    const seen: number[] = [];
    let url: string | undefined = '/v1/api-keys?limit=2';
    let pages = 0;
    while (url) {
      const page = await admin({ method: 'GET', url });
      expect(page.statusCode).toBe(200);
      const keys = page.json() as { id: number }[];
      expect(keys.length).toBeLessThanOrEqual(2);
      seen.push(...keys.map((k) => k.id));
      url = /^<([^>]+)>; rel="next"$/.exec(String(page.headers.link ?? ''))?.[1];
      pages++;
    }
    expect(seen).toEqual(all);
    expect(pages).toBeGreaterThanOrEqual(Math.ceil(all.length / 2));
  });

  it('refuses a cursor of another list', async () => {
    await t.pool.query("INSERT INTO categories (id, name) VALUES (1, 'One'), (2, 'Two'), (3, 'Three') ON CONFLICT DO NOTHING");
    const categories = await admin({ method: 'GET', url: '/v1/categories?limit=1' });
    const cursor = /cursor=([^&>]+)/.exec(String(categories.headers.link))?.[1];
    const response = await admin({ method: 'GET', url: `/v1/api-keys?cursor=${cursor}` });
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toBe('query parameter cursor: belongs to listCategories, not listApiKeys; start again without cursor');
  });
});

describe('getApiKey', () => {
  it.each([
    ['an unknown id', '/v1/api-keys/999999', 404],
    ['an id that is not a number', '/v1/api-keys/abc', 400],
    ['an id of 0', '/v1/api-keys/0', 400],
  ])('%s: %s', async (_title, url, status) => {
    expect((await admin({ method: 'GET', url })).statusCode).toBe(status);
  });
});

describe('revokeApiKey', () => {
  it('answers the key revoked; it is refused at once, and revoking it again answers it as it is', async () => {
    const key = (await create({ name: 'to revoke', scopes: ['pets:read'] })).json();
    await within(WAIT_MS, async () => (await statusWith(key.secret)) === 200);
    const revoked = await admin({ method: 'POST', url: `/v1/api-keys/${key.id}/revoke` });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revokedAt).toBeDefined();
    const took = await within(WAIT_MS, async () => (await statusWith(key.secret)) === 401);
    console.log(`revoked key refused after ${took.toFixed(0)} ms`);
    const again = await admin({ method: 'POST', url: `/v1/api-keys/${key.id}/revoke`, payload: '{}' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(revoked.json());
  });

  it.each([
    ['an unknown key', '/v1/api-keys/999999/revoke', undefined, 404],
    ['a body with a field', '/v1/api-keys/1/revoke', '{"now":true}', 400],
  ])('%s is %s and revokes nothing', async (_title, url, payload, status) => {
    const before = await table();
    expect((await admin({ method: 'POST', url, ...(payload ? { payload } : {}) })).statusCode).toBe(status);
    expect(await table()).toEqual(before);
  });
});

describe('rotateApiKey', () => {
  it('the same key gets a new secret; the old one works during the grace, then not', async () => {
    const key = (await create({ name: 'rotated', scopes: ['pets:read', 'orders:write', 'orders:read'] })).json();
    await within(WAIT_MS, async () => (await statusWith(key.secret)) === 200);
    // An order placed with the first secret stays the key's, whichever secret asks.
    const pet = (await t.pool.query<{ id: string }>("INSERT INTO pets (name, category_id, status) VALUES ('Kept', 1, 'available') RETURNING id")).rows[0]?.id;
    const order = await t.api({ method: 'POST', url: '/v1/store/orders', headers: { ...json, ...bearer(key.secret) }, payload: JSON.stringify({ petId: Number(pet) }) });
    expect(order.statusCode).toBe(201);

    const rotated = await rotate(key.id, key.secret, '{"graceSeconds":2}');
    expect(rotated.statusCode).toBe(200);
    const next = rotated.json();
    expect(next).toMatchObject({ id: key.id, name: 'rotated', scopes: key.scopes, createdAt: key.createdAt });
    expect(next.secret).toMatch(SECRET);
    expect(next.secret).not.toBe(key.secret);
    expect(next.prefix).toBe(next.secret.slice(0, 8));
    const graceEnds = Date.parse(next.previousSecretExpiresAt);
    expect(graceEnds - Date.now()).toBeGreaterThan(0);
    expect(graceEnds - Date.now()).toBeLessThanOrEqual(2000);
    expect((await get(key.id)).json().prefix).toBe(next.prefix);

    await within(WAIT_MS, async () => (await statusWith(next.secret)) === 200);
    for (const secret of [key.secret, next.secret]) {
      const orders = await t.api({ method: 'GET', url: '/v1/store/orders', headers: bearer(secret) });
      expect(orders.json().map((o: { id: number }) => o.id)).toEqual([order.json().id]);
      expect((await t.api({ method: 'GET', url: `/v1/store/orders/${order.json().id}`, headers: bearer(secret) })).statusCode).toBe(200);
    }
    // The old secret works until the grace ends, and is refused from then on.
    let lastAccepted = 0;
    await within(WAIT_MS, async () => {
      const sent = Date.now();
      const status = await statusWith(key.secret);
      // Judged after it was sent; a refusal, before it arrived.
      if (status === 200) lastAccepted = sent;
      return status === 401;
    });
    console.log(`previous secret: last accepted ${graceEnds - lastAccepted} ms before its grace ended, refused ${Date.now() - graceEnds} ms after`);
    expect(lastAccepted).toBeLessThan(graceEnds);
    expect(await statusWith(next.secret)).toBe(200);
    expect((await get(key.id)).json()).not.toHaveProperty('previousSecretExpiresAt');
  });

  it('with a grace of 0 the old secret stops at once; rotating again replaces the previous secret', async () => {
    const first = (await create({ name: 'twice', scopes: ['pets:read'] })).json();
    await within(WAIT_MS, async () => (await statusWith(first.secret)) === 200);
    const second = (await rotate(first.id, first.secret, '{"graceSeconds":3600}')).json();
    await within(WAIT_MS, async () => (await statusWith(second.secret)) === 200);
    const third = (await rotate(first.id, second.secret)).json();
    await settled();
    expect(await statusWith(first.secret)).toBe(401);
    expect(await statusWith(second.secret)).toBe(200);
    expect(await statusWith(third.secret)).toBe(200);
    // No body: the default grace, a day.
    expect(Date.parse(third.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(86_400_000 - 60_000);

    const fourth = await rotate(first.id, third.secret, '{"graceSeconds":0}');
    expect(fourth.statusCode).toBe(200);
    expect(fourth.json()).not.toHaveProperty('previousSecretExpiresAt');
    await settled();
    expect(await statusWith(third.secret)).toBe(401);
    expect(await statusWith(second.secret)).toBe(401);
    expect(await statusWith(fourth.json().secret)).toBe(200);
  });

  it('a grace never outlasts the key', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const key = (await create({ name: 'short', scopes: ['pets:read'], expiresAt })).json();
    await within(WAIT_MS, async () => (await statusWith(key.secret)) === 200);
    const rotated = await rotate(key.id, key.secret, '{"graceSeconds":604800}');
    expect(rotated.json().previousSecretExpiresAt).toBe(expiresAt);
  });

  it('a revoked or expired key cannot rotate itself (401), and stays as it was', async () => {
    const revoked = (await create({ name: 'revoked', scopes: ['pets:read'] })).json();
    await admin({ method: 'POST', url: `/v1/api-keys/${revoked.id}/revoke` });
    const expired = (await create({ name: 'expired', scopes: ['pets:read'] })).json();
    await t.pool.query("UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1", [expired.id]);
    await settled();
    const before = await table();
    for (const key of [revoked, expired]) expect((await rotate(key.id, key.secret)).statusCode).toBe(401);
    expect(await table()).toEqual(before);
  });

  it.each([
    ['another key, or one that does not exist', '/v1/api-keys/999999/rotate', undefined, 403],
    ['a grace over 7 days', '/v1/api-keys/1/rotate', '{"graceSeconds":604801}', 400],
    ['a negative grace', '/v1/api-keys/1/rotate', '{"graceSeconds":-1}', 400],
    ['a grace that is not an integer', '/v1/api-keys/1/rotate', '{"graceSeconds":1.5}', 400],
    ['an unknown field', '/v1/api-keys/1/rotate', '{"graceSeconds":0,"scopes":["keys:manage"]}', 400],
    ['a bad id', '/v1/api-keys/abc/rotate', undefined, 400],
  ])('%s is %s and changes nothing', async (_title, url, payload, status) => {
    const before = await table();
    expect((await admin({ method: 'POST', url, ...(payload ? { payload } : {}) })).statusCode).toBe(status);
    expect(await table()).toEqual(before);
    expect(await statusWith(t.key)).toBe(200);
  });
});

describe('expiry', () => {
  it('a key with expiresAt a few seconds ahead works until then, and is refused from then on', async () => {
    const expiresAt = Date.now() + 2500;
    const key = (await create({ name: 'expiring', scopes: ['pets:read'], expiresAt: new Date(expiresAt).toISOString() })).json();
    // Known to the cache first (it learns of a new key through NOTIFY).
    await within(WAIT_MS, async () => (await statusWith(key.secret)) === 200);
    let lastAccepted = 0;
    await within(WAIT_MS, async () => {
      const sent = Date.now();
      const status = await statusWith(key.secret);
      // Judged after it was sent; a refusal, before it arrived.
      if (status === 200) lastAccepted = sent;
      return status === 401;
    });
    const refusedAfter = Date.now() - expiresAt;
    console.log(`expiring key: last accepted ${expiresAt - lastAccepted} ms before expiresAt, refused ${refusedAfter} ms after`);
    expect(lastAccepted).toBeGreaterThan(0);
    expect(lastAccepted).toBeLessThan(expiresAt);
    expect((await get(key.id)).json().expiresAt).toBe(new Date(expiresAt).toISOString());
  });
});

describe('lastUsedAt', () => {
  it('is written by the flush, never by the request: the row is not rewritten per request, then lastUsedAt is set', async () => {
    // An app on the same database whose flush waits a minute, its keys' own: only its close writes.
    const slow = await buildTestApp({ url: t.url, env: { API_KEY_USAGE_FLUSH_MS: '60000' } });
    try {
      const key = (await create({ name: 'used', scopes: ['pets:read'] })).json();
      await within(WAIT_MS, async () => (await slow.app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key.secret) })).statusCode === 200);
      const row = async () => (await t.pool.query<{ xmin: string; last_used_at: Date | null }>('SELECT xmin, last_used_at FROM api_keys WHERE id = $1', [key.id])).rows[0];
      const before = await row();
      const requested = Date.now();
      for (let i = 0; i < 50; i++) expect((await slow.api({ method: 'GET', url: '/v1/pets?limit=1', headers: bearer(key.secret) })).statusCode).toBe(200);
      // No write: the row version is the same, and lastUsedAt still unset.
      expect(await row()).toEqual(before);
      expect(before?.last_used_at).toBeNull();
      expect((await get(key.id)).json()).not.toHaveProperty('lastUsedAt');
      await slow.close();
      const after = (await get(key.id)).json();
      expect(Date.parse(after.lastUsedAt)).toBeGreaterThanOrEqual(requested);
      expect(Date.parse(after.lastUsedAt)).toBeLessThanOrEqual(Date.now());
    } finally {
      await slow.close().catch(() => undefined);
    }
  });

  it('with a short flush interval, lastUsedAt follows within it; an instance flushing an older use later does not move it back', async () => {
    const quick = await buildTestApp({ url: t.url, env: { API_KEY_USAGE_FLUSH_MS: '100' } });
    const late = await buildTestApp({ url: t.url, env: { API_KEY_USAGE_FLUSH_MS: '60000' } });
    try {
      const key = (await create({ name: 'used often', scopes: ['pets:read'] })).json();
      for (const app of [quick, late]) await within(WAIT_MS, async () => (await app.app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key.secret) })).statusCode === 200);
      // `late` saw the key used first, and writes that use only when it closes.
      await late.api({ method: 'GET', url: '/v1/pets', headers: bearer(key.secret) });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const requested = Date.now();
      await quick.api({ method: 'GET', url: '/v1/pets', headers: bearer(key.secret) });
      const took = await within(WAIT_MS, async () => Date.parse((await get(key.id)).json().lastUsedAt ?? '0') >= requested);
      console.log(`lastUsedAt written ${took.toFixed(0)} ms after the request (flush every 100 ms)`);
      const written = (await get(key.id)).json().lastUsedAt;
      await late.close();
      expect((await get(key.id)).json().lastUsedAt).toBe(written);
    } finally {
      await quick.close();
      await late.close().catch(() => undefined);
    }
  });
});

describe('secrets', () => {
  it('no log line holds a secret answered here, nor its hash', async () => {
    expect(issued.length).toBeGreaterThan(10);
    const log = t.logs.join('\n');
    expect(log).toContain('/v1/api-keys');
    for (const secret of issued) {
      const hash = createHash('sha256').update(secret).digest();
      for (const form of [secret, secret.slice(4), hash.toString('hex'), hash.toString('base64'), hash.toString('base64url')]) expect(log).not.toContain(form);
    }
    const stored = (await t.pool.query<{ row: string }>('SELECT t::text AS row FROM api_keys t')).rows.map((r) => r.row).join('\n');
    for (const secret of issued) expect(stored).not.toContain(secret.slice(8));
  });
});
