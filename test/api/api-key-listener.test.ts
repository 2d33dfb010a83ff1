// The key cache when its listener is away: while the LISTEN connection cannot be made, each
// check asks the database, by the same rules as the cache (scopes, revocation, expiry, a
// rotation's grace); and a LISTEN connection that goes silent (a network cut: no error, no
// end) is dropped by its probe, so a revocation it missed is then in force.
// The app's pool reaches the database directly; its listener, through a TCP relay here.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/pool.js';
import { buildTestApp, createApiKey, createTestDatabase, type TestApp } from '../helper.js';
import { within, WAIT_MS } from '../process.js';

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

let database: { url: string; drop: () => Promise<void> };
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => database.drop());

/** A TCP relay to the database's server; `freeze` stops every connection it carries, silently. */
async function relay(target: URL): Promise<{ url: string; freeze: () => void; close: () => Promise<void> }> {
  const pairs: [net.Socket, net.Socket][] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    const end = () => (client.destroy(), upstream.destroy());
    client.on('error', end);
    upstream.on('error', end);
    client.pipe(upstream);
    upstream.pipe(client);
    pairs.push([client, upstream]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    freeze: () => {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    close: async () => {
      for (const [client, upstream] of pairs) (client.destroy(), upstream.destroy());
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The app with its pool on the database and its key listener on `listenerUrl`. */
async function appListeningAt(listenerUrl: string): Promise<TestApp> {
  const pool = createPool({ DATABASE_URL: database.url, DB_POOL_MAX: 5, DB_CONNECT_TIMEOUT_MS: 10_000, DB_STATEMENT_TIMEOUT_MS: 10_000 });
  const t = await buildTestApp({ url: listenerUrl, pool, env: { RATE_LIMIT_ANONYMOUS_MAX: '100000' } });
  return { ...t, close: async () => (await t.close(), await pool.end()) };
}

describe('no listener: every check asks the database, by the rules of the cache', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Nothing listens on port 1: the listener never connects.
    t = await appListeningAt('postgres://postgres@127.0.0.1:1/none');
  });
  afterAll(async () => t.close());

  const status = async (key: string, method = 'GET', url = '/v1/pets') => (await t.api({ method, url, headers: bearer(key) })).statusCode;

  it('a key made a moment ago works at once, with its scopes', async () => {
    const { key, id } = await createApiKey(t.pool, 'fallback');
    await t.pool.query("UPDATE api_keys SET scopes = '{pets:read}' WHERE id = $1", [id]);
    expect(await status(key)).toBe(200);
    expect(await status(key, 'GET', '/v1/store/orders')).toBe(403);
  });

  it('refuses a revoked key and an expired one', async () => {
    const revoked = await createApiKey(t.pool, 'revoked');
    const expired = await createApiKey(t.pool, 'expired');
    expect(await status(revoked.key)).toBe(200);
    expect(await status(expired.key)).toBe(200);
    await t.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [revoked.id]);
    await t.pool.query('UPDATE api_keys SET expires_at = now() WHERE id = $1', [expired.id]);
    expect(await status(revoked.key)).toBe(401);
    expect(await status(expired.key)).toBe(401);
  });

  it("takes a rotated key's previous secret during its grace, and not after", async () => {
    const { key, id } = await createApiKey(t.pool, 'rotated');
    // A key rotates its own secret.
    const rotated = await t.api({ method: 'POST', url: `/v1/api-keys/${id}/rotate`, headers: bearer(key), payload: { graceSeconds: 1 } });
    expect(rotated.statusCode).toBe(200);
    const ends = Date.parse(rotated.json().previousSecretExpiresAt);
    expect(await status(rotated.json().secret)).toBe(200);
    if (Date.now() < ends - 100) expect(await status(key)).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, ends - Date.now() + 10)));
    expect(await status(key)).toBe(401);
    expect(await status(rotated.json().secret)).toBe(200);
  });
});

describe('a listener that goes silent', () => {
  it('is dropped by its probe (no answer within 1000 ms), and a revocation it cannot hear of is then in force', async () => {
    const link = await relay(new URL(database.url));
    const t = await appListeningAt(link.url);
    try {
      const { key, id } = await createApiKey(t.pool, 'cut off');
      await within(WAIT_MS, async () => (await t.api({ method: 'GET', url: '/v1/pets', headers: bearer(key) })).statusCode === 200);
      link.freeze();
      await t.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [id]);
      const took = await within(WAIT_MS, async () => (await t.api({ method: 'GET', url: '/v1/pets', headers: bearer(key) })).statusCode === 401);
      console.log(`silent listener: the revocation was in force ${took.toFixed(0)} ms after it committed`);
      expect(t.logs.join('\n')).toContain('api key listener: no answer within 1000 ms');
    } finally {
      await t.close();
      await link.close();
    }
  });
});
