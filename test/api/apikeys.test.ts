// The apikey CLI, and what happens to a key: stored as a hash only, never logged,
// refused within a second of being revoked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helper.js';
import { apikey, within } from '../process.js';

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
    await within(10_000, async () => (await t.api({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })).statusCode === 200);
  });

  it('list shows id, name, created and revoked, and no secret', async () => {
    const created = await apikey(['create', 'listed'], t.url);
    const key = created.stdout.trim();
    const listed = await apikey(['list'], t.url);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+CREATED\s+REVOKED$/);
    expect(lines.some((l) => /^\d+\s+listed\s+\d{4}-\d{2}-\d{2}T\S+\s+-$/.test(l))).toBe(true);
    expect(listed.stdout).not.toContain(key);
    expect(listed.stdout).not.toMatch(/ask_/);
  });

  it('revoke stops the key within a second', async () => {
    const key = (await apikey(['create', 'short-lived'], t.url)).stdout.trim();
    const id = (await t.pool.query<{ id: string }>("SELECT id FROM api_keys WHERE name = 'short-lived'")).rows[0]?.id;
    const headers = { authorization: `Bearer ${key}` };
    await within(10_000, async () => (await t.api({ method: 'GET', url: '/v1/pets', headers })).statusCode === 200);
    const revoked = await apikey(['revoke', String(id)], t.url);
    expect(revoked.code).toBe(0);
    await within(1000, async () => (await t.api({ method: 'GET', url: '/v1/pets', headers })).statusCode === 401);
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
  ])('%s fails with a message on stderr and nothing on stdout', async (_title, { given, code }) => {
    const result = await apikey(given, t.url);
    expect(result.code).toBe(code);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).not.toBe('');
  });
});

describe('a key is a secret', () => {
  it('its plaintext is nowhere in the database, nor in the logs of a request that used it', async () => {
    const key = (await apikey(['create', 'secret'], t.url)).stdout.trim();
    await within(10_000, async () => (await t.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })).statusCode === 200);
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
