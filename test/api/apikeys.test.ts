// The apikey CLI, and what happens to a key: stored as a hash only, never logged,
// refused once revoked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helper.js';
import { apikey, within, WAIT_MS } from '../process.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t.close());

const KEY = /^ask_[A-Za-z0-9_-]{43}$/;

describe('apikey CLI', () => {
  it('create prints the new key alone on stdout, and it works', async () => {
    const created = await apikey(['create', 'ci robot'], t.url);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(new RegExp(`^${KEY.source.slice(1, -1)}\\n$`));
    const key = created.stdout.trim();
    // The running app learns of the new key through NOTIFY, within milliseconds.
    await within(WAIT_MS, async () => (await t.api({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })).statusCode === 200);
  });

  it('list shows id, name, created, revoked, expiry, last use and scopes, and no secret', async () => {
    const created = await apikey(['create', 'listed'], t.url);
    const key = created.stdout.trim();
    const listed = await apikey(['list'], t.url);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+CREATED\s+REVOKED\s+EXPIRES\s+LAST_USED\s+SCOPES$/);
    expect(lines.some((l) => /^\d+\s+listed\s+\d{4}-\d{2}-\d{2}T\S+\s+-\s+-\s+-\s+pets:read,pets:write,orders:read,orders:write,keys:manage,webhooks:manage$/.test(l))).toBe(true);
    expect(listed.stdout).not.toContain(key);
    expect(listed.stdout).not.toMatch(/ask_/);
  });

  it('revoke stops the key', async () => {
    const key = (await apikey(['create', 'short-lived'], t.url)).stdout.trim();
    const id = (await t.pool.query<{ id: string }>("SELECT id FROM api_keys WHERE name = 'short-lived'")).rows[0]?.id;
    const headers = { authorization: `Bearer ${key}` };
    await within(WAIT_MS, async () => (await t.api({ method: 'GET', url: '/v1/pets', headers })).statusCode === 200);
    const revoked = await apikey(['revoke', String(id)], t.url);
    expect(revoked.code).toBe(0);
    await within(WAIT_MS, async () => (await t.api({ method: 'GET', url: '/v1/pets', headers })).statusCode === 401);
    const listed = await apikey(['list'], t.url);
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\s+short-lived\\s+\\S+\\s+\\d{4}-`, 'm'));
  });

  it.each([
    ['no command', { given: [], code: 2 }],
    ['an unknown command', { given: ['delete', '1'], code: 2 }],
    ['create without a name', { given: ['create'], code: 2 }],
    ['revoke without an id', { given: ['revoke'], code: 2 }],
    ['revoke a non-numeric id', { given: ['revoke', 'abc'], code: 2 }],
    ['revoke an unknown id', { given: ['revoke', '999999'], code: 1 }],
    ['create with an unknown scope', { given: ['create', 'x', '--scopes', 'pets:read,root'], code: 2 }],
    ['create with an empty --scopes', { given: ['create', 'x', '--scopes', ''], code: 2 }],
    ['create with --expires in the past', { given: ['create', 'x', '--expires', '2020-01-01T00:00:00Z'], code: 2 }],
    ['create with --expires that is neither a date-time nor a duration', { given: ['create', 'x', '--expires', 'soon'], code: 2 }],
    ['create with --expires of a date-time without its offset', { given: ['create', 'x', '--expires', '2030-01-01T00:00:00'], code: 2 }],
    ['create with a name holding a control character', { given: ['create', 'a\u0007b'], code: 2 }],
    ['list with --scopes', { given: ['list', '--scopes', 'pets:read'], code: 2 }],
    ['an unknown option', { given: ['create', 'x', '--admin'], code: 2 }],
  ])('%s fails with a message on stderr and nothing on stdout', async (_title, { given, code }) => {
    const result = await apikey(given, t.url);
    expect(result.code).toBe(code);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).not.toBe('');
  });
});

describe('apikey create --scopes --expires', () => {
  it('prints a key that holds only those scopes, expiring then: 403 on createPet, 200 on listPets', async () => {
    const created = await apikey(['create', 'x', '--scopes', 'pets:read', '--expires', '30d'], t.url);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(new RegExp(`^${KEY.source.slice(1, -1)}\\n$`));
    expect(created.stderr).toMatch(/scopes pets:read; expires \d{4}-/);
    const headers = { authorization: `Bearer ${created.stdout.trim()}` };
    await within(WAIT_MS, async () => (await t.api({ method: 'GET', url: '/v1/pets', headers })).statusCode === 200);
    const refused = await t.api({ method: 'POST', url: '/v1/pets', headers, payload: { name: 'Rex', categoryId: 1 } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('insufficient_scope');
    const { rows } = await t.pool.query<{ scopes: string[]; expires_at: Date }>('SELECT scopes, expires_at FROM api_keys WHERE key_hash = sha256($1::bytea)', [Buffer.from(created.stdout.trim())]);
    expect(rows[0]?.scopes).toEqual(['pets:read']);
    const days = ((rows[0]?.expires_at.getTime() ?? 0) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.99);
    expect(days).toBeLessThanOrEqual(30);
    const listed = await apikey(['list'], t.url);
    // LAST_USED is '-' or, once the usage flush has run since the requests above, their time.
    expect(listed.stdout).toMatch(/^\d+\s+x\s+\S+\s+-\s+\d{4}-\S+\s+(-|\d{4}-\S+)\s+pets:read$/m);
  });

  it('takes an ISO 8601 date-time, and several scopes', async () => {
    const created = await apikey(['create', 'dated', '--scopes', 'orders:write, pets:read', '--expires', '2031-06-01T12:00:00+02:00'], t.url);
    expect(created.code, created.stderr).toBe(0);
    const { rows } = await t.pool.query<{ scopes: string[]; expires_at: Date }>("SELECT scopes, expires_at FROM api_keys WHERE name = 'dated'");
    expect(rows[0]).toEqual({ scopes: ['pets:read', 'orders:write'], expires_at: new Date('2031-06-01T10:00:00Z') });
  });

  it('a scope that does not exist: says which scopes there are', async () => {
    const result = await apikey(['create', 'x', '--scopes', 'pets:admin'], t.url);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).toBe('apikey create: unknown scope "pets:admin" in --scopes; the scopes are pets:read, pets:write, orders:read, orders:write, keys:manage, webhooks:manage');
  });
});

describe('a key is a secret', () => {
  it('its plaintext is nowhere in the database, nor in the logs of a request that used it', async () => {
    const key = (await apikey(['create', 'secret'], t.url)).stdout.trim();
    await within(WAIT_MS, async () => (await t.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })).statusCode === 200);
    t.logs.length = 0;
    await t.api({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } });
    await t.api({ method: 'GET', url: '/v1/pets?limit=0', headers: { authorization: `Bearer ${key}` } });
    await t.api({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}x` } });
    expect(t.logs.length).toBeGreaterThan(0);
    expect(t.logs.join('\n')).not.toContain(key);

    const tables = await t.pool.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'");
    for (const { table_name } of tables.rows) {
      const rows = await t.pool.query<{ row: string }>(`SELECT t::text AS row FROM ${table_name} t`);
      for (const { row } of rows.rows) expect(row).not.toContain(key.slice(4));
    }
  });
});
