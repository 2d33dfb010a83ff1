// No key can become another (docs/security.md, "What each key can do"), tried as an outside
// attacker would: over HTTP on real sockets, with two keys of a deployment of two instances
// (two apps on one database, each listening on its own port). One test per finding:
// - F1: rotating another key would hand over its identity: refused, and nothing changes;
// - F2: a previous secret in its grace serves ordinary operations only;
// - F3: no key creates a key that outlives it;
// - F4: a 409 about a held pet names the order only to the key that placed it;
// - F5: keys in force are capped, and a key change makes each instance read that key alone;
// - F6: names refuse Unicode format characters, naming the position; stored ones stay readable;
// - F7: an unreadable port and a Content-Encoding are told as what they are.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractViolations } from '../contract.js';
import { buildTestApp, createApiKey, recordQueries, type TestApp } from '../helper.js';
import { within, WAIT_MS } from '../process.js';

const LIMIT = 40;
const env = { API_KEY_LIMIT: String(LIMIT), WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_MAX: '100000', RATE_LIMIT_ANONYMOUS_MAX: '100000' };

let a: TestApp;
let b: TestApp;
const origins: string[] = [];

beforeAll(async () => {
  a = await buildTestApp({ env });
  b = await buildTestApp({ url: a.url, env });
  for (const app of [a, b]) origins.push(await app.app.listen({ host: '127.0.0.1', port: 0 }));
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: () => any;
}

/** One request to instance `on` (0 or 1) over its socket, checked against the contract. */
async function call(on: number, method: string, path: string, secret: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${origins[on]}${path}`, {
    method,
    headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  expect(contractViolations(method, path, { statusCode: response.status, headers: Object.fromEntries(response.headers), body: text }), `${method} ${path}`).toEqual([]);
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
}

const ALL = ['pets:read', 'pets:write', 'orders:read', 'orders:write', 'keys:manage', 'webhooks:manage'];
/** A key made by the deployment's first key (all scopes, no expiry), through instance 0. */
async function newKey(name: string, scopes: string[], expiresAt?: string): Promise<{ id: number; secret: string; expiresAt?: string }> {
  const made = await call(0, 'POST', '/v1/api-keys', a.key, { name, scopes, ...(expiresAt ? { expiresAt } : {}) });
  expect(made.status, made.text).toBe(201);
  return made.json();
}
/** Waits until both instances answer `status` to `secret` on listPets. */
const onBoth = (secret: string, status: number) => Promise.all([0, 1].map((on) => within(WAIT_MS, async () => (await call(on, 'GET', '/v1/pets?limit=1', secret)).status === status)));
const keyRow = async (id: number) => (await a.pool.query('SELECT key_hash, prefix, previous_key_hash, previous_expires_at, revoked_at, expires_at FROM api_keys WHERE id = $1', [id])).rows[0];
const keysTable = async () => (await a.pool.query('SELECT id, name, key_hash, expires_at, revoked_at FROM api_keys ORDER BY id')).rows;
const newPet = async (name: string) => (await a.pool.query<{ id: number }>("INSERT INTO pets (name, category_id, status) VALUES ($1, 1, 'available') RETURNING id::int", [name])).rows[0]?.id as number;

describe('F1: no key obtains a secret that acts as another key', () => {
  it("rotating another key is 403 forbidden and changes nothing: the victim's orders, endpoints and events stay its own", async () => {
    const attacker = await newKey('attacker', ALL);
    const victim = await newKey('victim', ['pets:read', 'orders:read', 'orders:write', 'webhooks:manage']);
    await onBoth(victim.secret, 200);
    const order = await call(0, 'POST', '/v1/store/orders', victim.secret, { petId: await newPet('Held') });
    expect(order.status).toBe(201);
    const endpoint = await call(1, 'POST', '/v1/webhook-endpoints', victim.secret, { url: 'http://127.0.0.1:9/hooks', eventTypes: ['category.deleted'] });
    expect(endpoint.status).toBe(201);

    const before = await keyRow(victim.id);
    for (const [on, body] of [[0, { graceSeconds: 604800 }], [1, { graceSeconds: 0 }], [0, undefined]] as const) {
      const rotated = await call(on, 'POST', `/v1/api-keys/${victim.id}/rotate`, attacker.secret, body);
      expect(rotated.status).toBe(403);
      expect(rotated.json()).toEqual({
        code: 'forbidden',
        status: 403,
        message: `API key ${victim.id} is not the calling key (${attacker.id}): a key rotates only its own secret; to replace API key ${victim.id}, create a new key and revoke it`,
      });
      expect(rotated.text).not.toMatch(/ask_[A-Za-z0-9_-]{20,}/);
    }
    expect(await keyRow(victim.id)).toEqual(before);
    // The attacker's own key still reads nothing of the victim's.
    expect((await call(1, 'GET', `/v1/store/orders/${order.json().id}`, attacker.secret)).status).toBe(404);
    expect((await call(0, 'GET', '/v1/webhook-endpoints', attacker.secret)).json()).toEqual([]);
    expect((await call(1, 'GET', '/v1/events?type=order.placed', attacker.secret)).json()).toEqual([]);
    // Revoking another key stays as documented.
    const spare = await newKey('spare', ['pets:read']);
    expect((await call(1, 'POST', `/v1/api-keys/${spare.id}/revoke`, attacker.secret)).status).toBe(200);
    await onBoth(spare.secret, 401);
  });

  it('a key rotates its own secret, whatever its scopes, and keeps its orders', async () => {
    const shop = await newKey('shop', ['orders:read', 'orders:write']);
    await onBoth(shop.secret, 403);
    const order = await call(0, 'POST', '/v1/store/orders', shop.secret, { petId: await newPet('Own') });
    expect(order.status).toBe(201);
    const rotated = await call(1, 'POST', `/v1/api-keys/${shop.id}/rotate`, shop.secret, { graceSeconds: 0 });
    expect(rotated.status).toBe(200);
    const next = rotated.json().secret as string;
    for (const on of [0, 1]) {
      await within(WAIT_MS, async () => (await call(on, 'GET', `/v1/store/orders/${order.json().id}`, next)).status === 200);
      await within(WAIT_MS, async () => (await call(on, 'GET', '/v1/store/orders', shop.secret)).status === 401);
    }
  });
});

describe("F2: a previous secret in its grace serves the key's ordinary operations, and nothing that manages keys or endpoints", () => {
  it('is refused with 403 saying to use the current secret; the owner is never locked out; no key outlives it', async () => {
    const owner = await newKey('owner', ALL);
    await onBoth(owner.secret, 200);
    const endpoint = await call(0, 'POST', '/v1/webhook-endpoints', owner.secret, { url: 'http://127.0.0.1:9/hooks', eventTypes: ['category.deleted'] });
    expect(endpoint.status).toBe(201);
    const other = await newKey('other', ['pets:read']);
    const rotated = await call(0, 'POST', `/v1/api-keys/${owner.id}/rotate`, owner.secret, { graceSeconds: 3600 });
    expect(rotated.status).toBe(200);
    const current = rotated.json().secret as string;
    const previous = owner.secret;
    await onBoth(current, 200);
    const before = await keysTable();

    const useCurrent = (scope: string, operationId: string) =>
      `This is the previous secret of API key ${owner.id}, in its rotation's grace, and a previous secret does not hold ${scope}, which ${operationId} needs: use the current secret`;
    const refused: [string, string, unknown, string][] = [
      ['POST', '/v1/api-keys', { name: 'outliving', scopes: ['pets:read'] }, useCurrent('keys:manage', 'createApiKey')],
      ['POST', `/v1/api-keys/${other.id}/revoke`, undefined, useCurrent('keys:manage', 'revokeApiKey')],
      ['POST', `/v1/webhook-endpoints/${endpoint.json().id}/rotate-secret`, undefined, useCurrent('webhooks:manage', 'rotateWebhookEndpointSecret')],
      ['POST', '/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/other', eventTypes: ['pet.created'] }, useCurrent('webhooks:manage', 'createWebhookEndpoint')],
    ];
    for (const [on, [method, path, body, message]] of refused.entries()) {
      const answer = await call(on % 2, method, path, previous, body);
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.json()).toEqual({ code: 'insufficient_scope', status: 403, message });
    }
    for (const on of [0, 1]) {
      const rotate = await call(on, 'POST', `/v1/api-keys/${owner.id}/rotate`, previous, { graceSeconds: 0 });
      expect(rotate.status).toBe(403);
      expect(rotate.json()).toEqual({ code: 'forbidden', status: 403, message: `This is the previous secret of API key ${owner.id}, in its rotation's grace: it cannot rotate the key; use the current secret` });
    }
    expect(await keysTable()).toEqual(before);
    // Ordinary operations: still served to the previous secret, for its grace.
    expect((await call(1, 'GET', '/v1/pets?limit=1', previous)).status).toBe(200);
    expect((await call(0, 'POST', '/v1/pets', previous, { name: 'Grace', categoryId: 1 })).status).toBe(201);
    // The current secret still works on both, and can manage.
    for (const on of [0, 1]) expect((await call(on, 'GET', '/v1/api-keys?limit=1', current)).status).toBe(200);
  });
});

describe('F3: a key never creates a key beyond its own expiry', () => {
  it('inherits the creator\'s expiresAt when none is given, and refuses a later one with 400', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const creator = await newKey('expiring creator', ['pets:read', 'keys:manage'], expiresAt);
    await onBoth(creator.secret, 200);
    const inherited = await call(1, 'POST', '/v1/api-keys', creator.secret, { name: 'child', scopes: ['pets:read'] });
    expect(inherited.status).toBe(201);
    expect(inherited.json().expiresAt).toBe(expiresAt);
    const earlier = new Date(Date.now() + 60_000).toISOString();
    expect((await call(0, 'POST', '/v1/api-keys', creator.secret, { name: 'shorter', scopes: ['pets:read'], expiresAt: earlier })).json().expiresAt).toBe(earlier);

    const before = await keysTable();
    for (const later of ['2036-01-01T00:00:00Z', new Date(Date.parse(expiresAt) + 1000).toISOString()]) {
      const refused = await call(0, 'POST', '/v1/api-keys', creator.secret, { name: 'outliving', scopes: ['pets:read'], expiresAt: later });
      expect(refused.status).toBe(400);
      const message = `must be at most ${expiresAt}, when this API key expires: a key cannot outlive the key that creates it; give an earlier time, or none to take ${expiresAt}`;
      expect(refused.json()).toEqual({ code: 'bad_request', status: 400, message: `body /expiresAt: ${message}`, details: [{ location: 'body', field: '/expiresAt', rule: 'creator', message }] });
    }
    expect(await keysTable()).toEqual(before);
  });
});

describe('F4: a 409 about a held pet names the order only to the key that placed it', () => {
  it("tells another key that an order holds it, and the buyer which order", async () => {
    const buyer = await newKey('buyer', ['pets:write', 'orders:write']);
    const staff = await newKey('staff', ['pets:write']);
    await onBoth(buyer.secret, 403);
    await onBoth(staff.secret, 403);
    const pet = await newPet('Reserved');
    const order = await call(0, 'POST', '/v1/store/orders', buyer.secret, { petId: pet });
    expect(order.status).toBe(201);
    const id = order.json().id as number;
    for (const [method, body] of [['PATCH', { status: 'available' }], ['DELETE', undefined]] as const) {
      const told = await call(1, method, `/v1/pets/${pet}`, staff.secret, body, method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {});
      expect(told.status).toBe(409);
      expect(told.json().message).toMatch(new RegExp(`^Pet ${pet} is held by an order, which is placed`));
      expect(told.text).not.toContain(`order ${id}`);
      const own = await call(0, method, `/v1/pets/${pet}`, buyer.secret, body, method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {});
      expect(own.status).toBe(409);
      expect(own.json().message).toMatch(new RegExp(`^Pet ${pet} is held by order ${id}, which is placed`));
    }
  });
});

describe('F5: keys in force are capped, and a key change costs each instance that key alone', () => {
  it('reads the changed key alone on the other instance, with many keys in force, and honours the change there', async () => {
    // Many keys in force, as a large deployment has (made by SQL, which no cap holds back).
    await a.pool.query("INSERT INTO api_keys (name, key_hash, scopes) SELECT 'bulk ' || i, sha256(('bulk-' || i)::bytea), ARRAY['pets:read'] FROM generate_series(1, 1500) AS i");
    // Every instance has read them once NOTIFY brought a key made after them.
    const marker = await createApiKey(a.pool, 'marker');
    await onBoth(marker.key, 200);

    const seen = recordQueries(b.pool);
    try {
      const key = await createApiKey(a.pool, 'one more');
      await within(WAIT_MS, async () => (await call(1, 'GET', '/v1/pets?limit=1', key.key)).status === 200);
      expect((await call(0, 'POST', `/v1/api-keys/${key.id}/revoke`, a.key)).status).toBe(200);
      await within(WAIT_MS, async () => (await call(1, 'GET', '/v1/pets?limit=1', key.key)).status === 401);
      const reads = seen.requests().filter((name) => name.startsWith('api-keys-active'));
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.every((name) => name === 'api-keys-active-by-ids'), reads.join(', ')).toBe(true);
    } finally {
      seen.restore();
      await a.pool.query("UPDATE api_keys SET revoked_at = now() WHERE name LIKE 'bulk %'");
    }
  });

  it(`refuses a key past API_KEY_LIMIT (${LIMIT}) with 409 api_key_limit, and takes one again once a key is revoked`, async () => {
    const inForce = async () => Number((await a.pool.query("SELECT count(*) FROM api_keys WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())")).rows[0].count);
    const room = LIMIT - (await inForce());
    expect(room).toBeGreaterThan(2);
    await a.pool.query("INSERT INTO api_keys (name, key_hash, scopes) SELECT 'filler ' || i, sha256(('filler-' || i)::bytea), ARRAY['pets:read'] FROM generate_series(1, $1::int) AS i", [room - 1]);
    const last = await newKey('the last one', ['pets:read']);
    expect(await inForce()).toBe(LIMIT);
    const before = await keysTable();
    for (const on of [0, 1]) {
      const refused = await call(on, 'POST', '/v1/api-keys', a.key, { name: 'one too many', scopes: ['pets:read'] });
      expect(refused.status).toBe(409);
      expect(refused.json()).toEqual({
        code: 'api_key_limit',
        status: 409,
        message: `This deployment has ${LIMIT} API keys in force, the most it allows (API_KEY_LIMIT): revoke a key you no longer use, then create this one`,
      });
    }
    expect(await keysTable()).toEqual(before);
    expect((await call(1, 'POST', `/v1/api-keys/${last.id}/revoke`, a.key)).status).toBe(200);
    expect((await call(0, 'POST', '/v1/api-keys', a.key, { name: 'room again', scopes: ['pets:read'] })).status).toBe(201);
  });
});

describe('F6: names refuse Unicode format characters and C1 controls, naming the position', () => {
  const format: [string, string, number, string][] = [
    ['a right-to-left override', 'a\u202egnp.exe', 2, '202E'],
    ['a zero-width space', 'Re\u200Bx', 3, '200B'],
    ['a byte order mark', '\uFEFFRex', 1, 'FEFF'],
    ['a soft hyphen, after a character outside the BMP', '🐶Re\u00ADx', 4, '00AD'],
    ['a C1 control (next line)', 'Re\u0085x', 3, '0085'],
  ];
  it.each(format)('%s is 400 in every name a client sends, and stores nothing', async (_title, name, position, codePoint) => {
    const pet = await newPet('Named');
    const before = (await a.pool.query('SELECT (SELECT count(*) FROM pets) AS pets, (SELECT count(*) FROM categories) AS categories, (SELECT count(*) FROM api_keys) AS keys, (SELECT name FROM pets WHERE id = $1) AS name', [pet])).rows[0];
    const tries: [string, string, unknown, Record<string, string>?][] = [
      ['POST', '/v1/pets', { name, categoryId: 1 }],
      ['PATCH', `/v1/pets/${pet}`, { name }, { 'content-type': 'application/merge-patch+json' }],
      ['PUT', '/v1/categories/77', { name }],
      ['POST', '/v1/api-keys', { name, scopes: ['pets:read'] }],
    ];
    for (const [method, path, body, headers] of tries) {
      const answer = await call(0, method, path, a.key, body, headers);
      expect(answer.status, `${method} ${path}`).toBe(400);
      expect(answer.json().message).toBe(
        `body /name: must be free of control characters (C0, DEL and C1) and of Unicode format characters (category Cf of the Basic Multilingual Plane, such as U+200B, U+202E, U+FEFF): character ${position} is U+${codePoint}; remove it`,
      );
    }
    const after = (await a.pool.query('SELECT (SELECT count(*) FROM pets) AS pets, (SELECT count(*) FROM categories) AS categories, (SELECT count(*) FROM api_keys) AS keys, (SELECT name FROM pets WHERE id = $1) AS name', [pet])).rows[0];
    expect(after).toEqual(before);
  });

  it('takes the format characters beyond the BMP, which emoji flags are made of', async () => {
    const scotland = '\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F} Scottie';
    const made = await call(1, 'POST', '/v1/pets', a.key, { name: scotland, categoryId: 1 });
    expect(made.status).toBe(201);
    expect(made.json().name).toBe(scotland);
  });

  it('a name stored with one before stays as it is, readable through every operation that shows it', async () => {
    const pet = (await a.pool.query<{ id: number }>("INSERT INTO pets (name, category_id, status) VALUES (E'Old\\u200Bname', 1, 'available') RETURNING id::int")).rows[0]?.id;
    await a.pool.query("INSERT INTO categories (id, name) VALUES (88, E'Zero\\u200Bwidth') ON CONFLICT DO NOTHING");
    expect((await call(1, 'GET', `/v1/pets/${pet}`, a.key)).json().name).toBe('Old\u200Bname');
    expect((await call(0, 'GET', '/v1/categories/88', a.key)).json().name).toBe('Zero\u200Bwidth');
    // And a change of its other fields leaves it alone.
    const changed = await call(0, 'PATCH', `/v1/pets/${pet}`, a.key, { status: 'sold' }, { 'content-type': 'application/merge-patch+json' });
    expect(changed.status).toBe(200);
    expect(changed.json().name).toBe('Old\u200Bname');
  });
});

describe('F7: messages that say what is wrong', () => {
  it('a webhook URL whose port is no port is told so', async () => {
    for (const [url, port] of [['http://127.0.0.1:65536/', '65536'], ['https://receiver.example:99999999/hooks', '99999999'], ['http://127.0.0.1:8x/', '8x']]) {
      const answer = await call(0, 'POST', '/v1/webhook-endpoints', a.key, { url, eventTypes: ['pet.created'] });
      expect(answer.status).toBe(400);
      expect(answer.json().details).toEqual([{ location: 'body', field: '/url', rule: 'port', message: `has the port ${port}, which is not a port: give a port from 1 to 65535, or none` }]);
    }
  });

  it('a compressed body is 415 naming its Content-Encoding, and stores nothing', async () => {
    const { gzipSync } = await import('node:zlib');
    const count = async () => Number((await a.pool.query('SELECT count(*) FROM pets')).rows[0].count);
    const before = await count();
    for (const encoding of ['gzip', 'br', 'deflate']) {
      const response = await fetch(`${origins[1]}/v1/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json', 'content-encoding': encoding },
        body: gzipSync(JSON.stringify({ name: 'Zipped', categoryId: 1 })),
      });
      expect(response.status).toBe(415);
      expect(await response.json()).toEqual({ code: 'unsupported_media_type', status: 415, message: `Content-Encoding ${encoding} is not accepted: send the body uncompressed, without Content-Encoding` });
    }
    expect(await count()).toBe(before);
    // identity is no encoding at all.
    expect((await call(0, 'POST', '/v1/pets', a.key, { name: 'Plain', categoryId: 1 }, { 'content-encoding': 'identity' })).status).toBe(201);
  });

  it('"JSON value expected" keeps the case of JSON', async () => {
    const answer = await call(0, 'POST', '/v1/pets', a.key, 'x');
    expect(answer.status).toBe(400);
    expect(answer.json().message).toBe("Body is not valid JSON: JSON value expected but got 'x' at line 1, column 1");
    // A sentence that starts with a word in lower case reads on as one.
    expect((await call(1, 'POST', '/v1/pets', a.key, '{"name":')).json().message).toBe("Body is not valid JSON: object value expected after ':' at line 1, column 9");
  });
});
