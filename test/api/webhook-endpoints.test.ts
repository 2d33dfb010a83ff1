// The webhook endpoint operations through t.api: create (the secret shown once), list, get,
// patch, delete, rotate, deliveries; each key sees only its own; the URL rules with a fake
// resolver (no name is ever resolved for real, and no endpoint here ever points at a public
// address: a name answers a public address at its save only, and 127.0.0.1 afterwards).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LookupAddress } from 'node:dns';
import { buildTestApp, type TestApp } from '../helper.js';

const json = { 'content-type': 'application/json' };
const mergePatch = { 'content-type': 'application/merge-patch+json' };
const SECRET = /^whsec_[A-Za-z0-9+/]{32}$/;

// Names the fake resolver knows. A name that must pass the check at save answers a public
// address to the save only, and 127.0.0.1 to a delivery (without WEBHOOK_ALLOW_PRIVATE the
// delivery is refused before connecting): nothing is ever delivered anywhere but to loopback.
const PUBLIC = '93.184.215.14';
const asked: string[] = [];
const resolver = async (hostname: string, purpose: 'save' | 'connect'): Promise<LookupAddress[]> => {
  asked.push(hostname);
  const publicAtSave = [{ address: purpose === 'save' ? PUBLIC : '127.0.0.1', family: 4 }];
  if (hostname === 'public.animal-store.dev' || hostname === 'cap.animal-store.dev') return publicAtSave;
  if (hostname === 'private.animal-store.dev') return purpose === 'save' ? [{ address: PUBLIC, family: 4 }, { address: '10.1.2.3', family: 4 }] : [{ address: '127.0.0.1', family: 4 }];
  if (hostname === 'mapped.animal-store.dev') return [{ address: purpose === 'save' ? '::ffff:169.254.169.254' : '::ffff:127.0.0.1', family: 6 }];
  // A lookup that never ends (a resolver that does not answer).
  if (hostname === 'hung.animal-store.dev') return new Promise<never>(() => {});
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};

let t: TestApp;
let other: Record<string, string>;
let readOnly: Record<string, string>;

const create = (body: unknown, headers = t.auth) => t.api({ method: 'POST', url: '/v1/webhook-endpoints', headers: { ...headers, ...json }, payload: JSON.stringify(body) });
const makeKey = async (scopes: string[]) =>
  ({ authorization: `Bearer ${(await t.api({ method: 'POST', url: '/v1/api-keys', headers: { ...t.auth, ...json }, payload: JSON.stringify({ name: scopes.join(' ') || 'none', scopes }) })).json().secret}` });

beforeAll(async () => {
  t = await buildTestApp({ webhookResolver: resolver });
  other = await makeKey(['pets:read', 'webhooks:manage']);
  readOnly = await makeKey(['pets:read']);
});
afterAll(async () => t?.close());

/** An endpoint that is never delivered to (127.0.0.1 without WEBHOOK_ALLOW_PRIVATE is refused at connection). */
async function endpoint(headers = t.auth, extra: Record<string, unknown> = {}) {
  const created = await create({ url: 'https://public.animal-store.dev/hooks', eventTypes: ['category.deleted'], ...extra }, headers);
  expect(created.statusCode).toBe(201);
  return created.json() as { id: number; secret: string };
}

describe('webhook endpoints', () => {
  it('creates an endpoint: 201 with Location and the secret, which no other answer shows', async () => {
      const created = await create({ url: 'https://public.animal-store.dev/hooks', eventTypes: ['order.completed', 'pet.created'], description: 'ships sold animals' });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(body).toMatchObject({ url: 'https://public.animal-store.dev/hooks', eventTypes: ['order.completed', 'pet.created'], description: 'ships sold animals', enabled: true });
    expect(body.secret).toMatch(SECRET);
    expect(created.headers.location).toBe(`/v1/webhook-endpoints/${body.id}`);
    const got = await t.api({ method: 'GET', url: `/v1/webhook-endpoints/${body.id}`, headers: t.auth });
    expect(got.statusCode).toBe(200);
    const { secret, ...shown } = body;
    expect(got.json()).toEqual(shown);
    expect(got.body).not.toContain(secret);
    const listed = await t.api({ method: 'GET', url: '/v1/webhook-endpoints?limit=100', headers: t.auth });
    expect(listed.json()).toContainEqual(shown);
    expect(listed.body).not.toContain('whsec_');
  });

  it('pages the list with rel="next"', async () => {
    await endpoint();
    await endpoint();
    const first = await t.api({ method: 'GET', url: '/v1/webhook-endpoints?limit=1', headers: t.auth });
    expect(first.json()).toHaveLength(1);
    const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))?.[1] as string;
    const second = await t.api({ method: 'GET', url: next, headers: t.auth });
    expect(second.json()).toHaveLength(1);
    expect(second.json()[0].id).toBeGreaterThan(first.json()[0].id);
  });

  it('patches url, eventTypes, description and enabled; {} changes nothing', async () => {
    const { id } = await endpoint(t.auth, { description: 'before' });
    const patch = (body: unknown) => t.api({ method: 'PATCH', url: `/v1/webhook-endpoints/${id}`, headers: { ...t.auth, ...mergePatch }, payload: JSON.stringify(body) });
    const unchanged = await patch({});
    expect(unchanged.statusCode).toBe(200);
    expect(unchanged.json()).toMatchObject({ id, description: 'before', enabled: true });
    const disabled = await patch({ enabled: false, eventTypes: ['pet.created', 'pet.deleted'], description: null });
    expect(disabled.json()).toMatchObject({ id, enabled: false, eventTypes: ['pet.created', 'pet.deleted'] });
    expect(disabled.json().description).toBeUndefined();
    expect(disabled.json().disabledAt).toBeDefined();
    expect(disabled.json().disabledReason).toBeUndefined();
    const enabled = await patch({ enabled: true });
    expect(enabled.json()).toMatchObject({ id, enabled: true });
    expect(enabled.json().disabledAt).toBeUndefined();
    const refused = await patch({ url: 'https://10.0.0.5/hooks' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().details[0]).toMatchObject({ field: '/url', rule: 'address' });
  });

  it('deletes: 204, then 404', async () => {
    const { id } = await endpoint();
    expect((await t.api({ method: 'DELETE', url: `/v1/webhook-endpoints/${id}`, headers: t.auth })).statusCode).toBe(204);
    expect((await t.api({ method: 'GET', url: `/v1/webhook-endpoints/${id}`, headers: t.auth })).statusCode).toBe(404);
    expect((await t.api({ method: 'DELETE', url: `/v1/webhook-endpoints/${id}`, headers: t.auth })).statusCode).toBe(404);
  });

  it('rotates the secret: a new one, shown once, and previousSecretExpiresAt about 24 h ahead', async () => {
    const { id, secret } = await endpoint();
    const rotated = await t.api({ method: 'POST', url: `/v1/webhook-endpoints/${id}/rotate-secret`, headers: t.auth });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().secret).toMatch(SECRET);
    expect(rotated.json().secret).not.toBe(secret);
    const until = Date.parse(rotated.json().previousSecretExpiresAt);
    expect(until - Date.now()).toBeGreaterThan(23 * 3600_000);
    expect(until - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
    const { rows } = await t.pool.query('SELECT secret, previous_secret FROM webhook_endpoints WHERE id = $1', [id]);
    expect(rows[0]).toEqual({ secret: rotated.json().secret, previous_secret: secret });
  });

  it("another key's endpoint is 404 everywhere, and absent from its list", async () => {
    const { id } = await endpoint();
    const paths: Array<[string, string, Record<string, string>?, string?]> = [
      ['GET', `/v1/webhook-endpoints/${id}`],
      ['PATCH', `/v1/webhook-endpoints/${id}`, mergePatch, '{"enabled":false}'],
      ['DELETE', `/v1/webhook-endpoints/${id}`],
      ['POST', `/v1/webhook-endpoints/${id}/rotate-secret`],
      ['GET', `/v1/webhook-endpoints/${id}/deliveries`],
    ];
    for (const [method, url, headers, payload] of paths) {
      const answer = await t.api({ method, url, headers: { ...other, ...(headers ?? {}) }, ...(payload ? { payload } : {}) });
      expect(answer.statusCode, `${method} ${url}`).toBe(404);
      expect(answer.json()).toEqual({ code: 'not_found', message: `Webhook endpoint ${id} does not exist`, status: 404 });
    }
    const listed = await t.api({ method: 'GET', url: '/v1/webhook-endpoints?limit=100', headers: other });
    expect(listed.json().map((e: { id: number }) => e.id)).not.toContain(id);
    // Still there for its own key, unchanged.
    expect((await t.api({ method: 'GET', url: `/v1/webhook-endpoints/${id}`, headers: t.auth })).json()).toMatchObject({ id, enabled: true });
  });

  it('a key without webhooks:manage gets 403 on every webhook operation', async () => {
    const answers = await Promise.all([
      t.api({ method: 'GET', url: '/v1/webhook-endpoints', headers: readOnly }),
      create({ url: 'https://public.animal-store.dev/hooks', eventTypes: ['pet.created'] }, readOnly),
      t.api({ method: 'GET', url: '/v1/webhook-endpoints/1', headers: readOnly }),
      t.api({ method: 'GET', url: '/v1/webhook-endpoints/1/deliveries', headers: readOnly }),
    ]);
    for (const answer of answers) {
      expect(answer.statusCode).toBe(403);
      expect(answer.json().code).toBe('insufficient_scope');
    }
  });
});

describe('the URL rules at save', () => {
  const cases: Array<[string, { url: string; rule: string; message: string }]> = [
    ['http', { url: 'http://public.animal-store.dev/hooks', rule: 'https', message: 'must be an https URL (http: on a development machine, WEBHOOK_ALLOW_PRIVATE=true allows it)' }],
    ['a private IPv4 literal', { url: 'https://10.0.0.5/hooks', rule: 'address', message: '10.0.0.5 is a private address, which deliveries never call: give a URL whose host is a public address (on a development machine, WEBHOOK_ALLOW_PRIVATE=true allows it)' }],
    ['loopback', { url: 'https://127.0.0.1:8443/hooks', rule: 'address', message: '127.0.0.1 is a loopback address, which deliveries never call: give a URL whose host is a public address (on a development machine, WEBHOOK_ALLOW_PRIVATE=true allows it)' }],
    ['loopback written in hex', { url: 'https://0x7f.1/hooks', rule: 'address', message: '127.0.0.1 is a loopback address, which deliveries never call: give a URL whose host is a public address (on a development machine, WEBHOOK_ALLOW_PRIVATE=true allows it)' }],
    ['the metadata address', { url: 'https://169.254.169.254/latest', rule: 'address', message: '169.254.169.254 is a link-local address, which deliveries never call: give a URL whose host is a public address' }],
    ['shared', { url: 'https://100.64.1.1/', rule: 'address', message: '100.64.1.1 is a shared address, which deliveries never call: give a URL whose host is a public address' }],
    ['unspecified', { url: 'https://0.0.0.0/', rule: 'address', message: '0.0.0.0 is an unspecified address, which deliveries never call: give a URL whose host is a public address' }],
    ['IPv6 loopback', { url: 'https://[::1]/hooks', rule: 'address', message: '::1 is a loopback address, which deliveries never call: give a URL whose host is a public address (on a development machine, WEBHOOK_ALLOW_PRIVATE=true allows it)' }],
    ['IPv4-mapped IPv6', { url: 'https://[::ffff:10.0.0.1]/hooks', rule: 'address', message: '::ffff:a00:1 is a private address, which deliveries never call: give a URL whose host is a public address (on a development machine, WEBHOOK_ALLOW_PRIVATE=true allows it)' }],
    ['unique local IPv6', { url: 'https://[fd00::1]/hooks', rule: 'address', message: 'fd00::1 is a private address, which deliveries never call: give a URL whose host is a public address (on a development machine, WEBHOOK_ALLOW_PRIVATE=true allows it)' }],
    ['localhost', { url: 'https://localhost/hooks', rule: 'address', message: 'localhost is a special-use name, which deliveries never call: give a URL whose host is a public name or address (on a development machine, WEBHOOK_ALLOW_PRIVATE=true allows it)' }],
    ['*.localhost', { url: 'https://api.localhost/hooks', rule: 'address', message: 'api.localhost is a special-use name, which deliveries never call: give a URL whose host is a public name or address (on a development machine, WEBHOOK_ALLOW_PRIVATE=true allows it)' }],
    ['.internal', { url: 'https://db.internal/hooks', rule: 'address', message: 'db.internal is a special-use name, which deliveries never call: give a URL whose host is a public name or address' }],
    ['.example', { url: 'https://warehouse.example/hooks', rule: 'address', message: 'warehouse.example is a special-use name, which deliveries never call: give a URL whose host is a public name or address' }],
    ['.home.arpa', { url: 'https://nas.home.arpa/', rule: 'address', message: 'nas.home.arpa is a special-use name, which deliveries never call: give a URL whose host is a public name or address' }],
    ['.onion', { url: 'https://abc.onion/', rule: 'address', message: 'abc.onion is a special-use name, which deliveries never call: give a URL whose host is a public name or address' }],
    ['a name of one label', { url: 'https://receiver./hooks', rule: 'address', message: 'receiver. is a name without a domain, which deliveries never call: give a URL whose host is a public name, such as receiver.example.com' }],
    ['three slashes (no host)', { url: 'https:///hooks', rule: 'https', message: 'has no host where one is written (right after "https://"): give an absolute URL, such as https://receiver.example/hooks' }],
    [
      'a name with a private address among its addresses',
      { url: 'https://private.animal-store.dev/hooks', rule: 'address', message: 'private.animal-store.dev resolves to 10.1.2.3, a private address, which deliveries never call: give a URL whose host resolves only to public addresses (on a development machine, WEBHOOK_ALLOW_PRIVATE=true allows it)' },
    ],
    [
      'a name that resolves to an IPv4-mapped link-local address',
      { url: 'https://mapped.animal-store.dev/', rule: 'address', message: 'mapped.animal-store.dev resolves to ::ffff:169.254.169.254, a link-local address, which deliveries never call: give a URL whose host resolves only to public addresses' },
    ],
    ['a name that does not resolve', { url: 'https://nowhere.animal-store.dev/', rule: 'resolve', message: 'nowhere.animal-store.dev does not resolve: give a URL whose host has a public address' }],
    ['port 0', { url: 'https://public.animal-store.dev:0/hooks', rule: 'port', message: 'port 0 is no port a receiver listens on: give the port your receiver listens on, or none' }],
    ['a name whose lookup does not end within 3 seconds', { url: 'https://hung.animal-store.dev/', rule: 'resolve', message: 'hung.animal-store.dev did not resolve within 3 seconds: try again later, or give a URL whose host resolves' }],
    ['a user name and password', { url: 'https://user:secret@public.animal-store.dev/hooks', rule: 'userinfo', message: 'must not hold a user name or password: give the URL without them' }],
  ];
  it.each(cases)('refuses %s with 400', async (_title, { url, rule, message }) => {
    const before = (await t.pool.query('SELECT count(*)::int AS n FROM webhook_endpoints')).rows[0].n;
    const answer = await create({ url, eventTypes: ['pet.created'] });
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toEqual({ code: 'bad_request', message: `body /url: ${message}`, status: 400, details: [{ location: 'body', field: '/url', rule, message }] });
    expect((await t.pool.query('SELECT count(*)::int AS n FROM webhook_endpoints')).rows[0].n).toBe(before);
  });

  it('refuses port 0 also where private addresses are allowed', async () => {
    const open = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    try {
      const answer = await open.api({ method: 'POST', url: '/v1/webhook-endpoints', headers: { ...open.auth, ...json }, payload: JSON.stringify({ url: 'http://127.0.0.1:0/hooks', eventTypes: ['pet.created'] }) });
      expect(answer.statusCode).toBe(400);
      expect(answer.json().details).toEqual([expect.objectContaining({ field: '/url', rule: 'port' })]);
    } finally {
      await open.close();
    }
  });

  it('resolves no special-use name and no name of one label', async () => {
    asked.length = 0;
    await create({ url: 'https://localhost/hooks', eventTypes: ['pet.created'] });
    await create({ url: 'https://x.test/hooks', eventTypes: ['pet.created'] });
    await create({ url: 'https://receiver/hooks', eventTypes: ['pet.created'] });
    await create({ url: 'https:///path', eventTypes: ['pet.created'] });
    expect(asked).toEqual([]);
  });
});

describe('what a key may ask for', () => {
  it('refuses event types the key may not see, naming the scope (403), on create and on patch', async () => {
    const catalogueOnly = await makeKey(['pets:read', 'webhooks:manage']);
    const ordersOnly = await makeKey(['orders:read', 'webhooks:manage']);
    const before = (await t.pool.query('SELECT count(*)::int AS n FROM webhook_endpoints')).rows[0].n;
    const refused = await create({ url: 'https://public.animal-store.dev/hooks', eventTypes: ['pet.created', 'order.completed'] }, catalogueOnly);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({
      code: 'insufficient_scope',
      message: 'This API key lacks the scope orders:read, so its endpoints cannot receive order.completed: ask only for event types it may see',
      status: 403,
    });
    expect(refused.headers['www-authenticate']).toContain('scope="orders:read"');
    const noPets = await create({ url: 'https://public.animal-store.dev/hooks', eventTypes: ['category.updated'] }, ordersOnly);
    expect(noPets.statusCode).toBe(403);
    expect(noPets.json().message).toBe('This API key lacks the scope pets:read, so its endpoints cannot receive category.updated: ask only for event types it may see');
    expect((await t.pool.query('SELECT count(*)::int AS n FROM webhook_endpoints')).rows[0].n).toBe(before);
    // What it may see is accepted; a patch asking for more is refused, and changes nothing.
    const { id } = await endpoint(catalogueOnly);
    const patched = await t.api({ method: 'PATCH', url: `/v1/webhook-endpoints/${id}`, headers: { ...catalogueOnly, ...mergePatch }, payload: '{"eventTypes":["order.placed"],"description":"x"}' });
    expect(patched.statusCode).toBe(403);
    expect(patched.json().message).toBe('This API key lacks the scope orders:read, so its endpoints cannot receive order.placed: ask only for event types it may see');
    expect((await t.api({ method: 'GET', url: `/v1/webhook-endpoints/${id}`, headers: catalogueOnly })).json()).toMatchObject({ eventTypes: ['category.deleted'] });
    expect((await t.api({ method: 'GET', url: `/v1/webhook-endpoints/${id}`, headers: catalogueOnly })).json().description).toBeUndefined();
  });

  it('a key has at most 16 endpoints, also when it creates them at once: then 409 webhook_endpoint_limit', async () => {
    // A key that places no order: its order.placed endpoints never get a message.
    const key = await makeKey(['orders:read', 'webhooks:manage']);
    const answers = await Promise.all(Array.from({ length: 20 }, () => create({ url: 'https://cap.animal-store.dev/hooks', eventTypes: ['order.placed'] }, key)));
    expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(16);
    const limited = answers.filter((a) => a.statusCode !== 201);
    expect(limited).toHaveLength(4);
    for (const answer of limited) {
      expect(answer.statusCode).toBe(409);
      expect(answer.json()).toEqual({ code: 'webhook_endpoint_limit', message: 'This API key has 16 webhook endpoints, the most it may have: delete one it no longer needs first', status: 409 });
    }
    expect((await t.api({ method: 'GET', url: '/v1/webhook-endpoints?limit=100', headers: key })).json()).toHaveLength(16);
    // Another key is not limited by this one's.
    await endpoint(other);
  });
});
