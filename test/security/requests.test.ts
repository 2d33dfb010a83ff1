// What a hostile or careless client can send, over a real socket, and what must hold:
// authentication, idempotency keys scoped per API key, forged cursors, X-Request-Id
// injection, CORS off, credentials in query strings kept out of the log, a client abort
// not taken for an outage, and no key, key hash, SQL or stack trace in any answer or log.
//
// To extend: add a row to the table of the concern (`[title, { given, want }]`). Every answer
// read through `send` is also checked by the last test, which scans them all, and the whole
// log, for secrets.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../helper.js';
import { within } from '../process.js';
import { abort, call, expectErrorAnswer, listen, type HttpRequest, type ListeningApp, type RawAnswer } from '../support/wire.js';

let t: ListeningApp;
let other: { key: string; id: number };
let revoked: string;
const answers: RawAnswer[] = [];

beforeAll(async () => {
  // Budgets out of the way: this file sends many requests from one address.
  t = await listen({ env: { RATE_LIMIT_MAX: '100000', RATE_LIMIT_ANONYMOUS_MAX: '100000' } });
  other = await createApiKey(t.pool, 'other tenant');
  const gone = await createApiKey(t.pool, 'revoked');
  await t.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [gone.id]);
  revoked = gone.key;
  // New keys reach the instance's cache through NOTIFY, within milliseconds.
  await within(5000, async () => (await call(t.port, { method: 'GET', target: '/v1/pets', headers: { authorization: `Bearer ${other.key}` } })).status === 200);
});
afterAll(async () => t.close());

/** One request over a new connection; the answer is kept for the final scan. */
async function send(request: HttpRequest): Promise<RawAnswer> {
  const answer = await call(t.port, request);
  answers.push(answer);
  return answer;
}

type LogLine = Record<string, unknown> & { level: number; msg: string; reqId?: string };
const logLines = (): LogLine[] =>
  t.logs
    .join('')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as LogLine);
/** The lines logged for one request, once its access line has been written. */
async function logged(requestId: string): Promise<LogLine[]> {
  await within(5000, async () => logLines().some((l) => l.reqId === requestId && l.msg === 'request'));
  return logLines().filter((l) => l.reqId === requestId);
}

describe('authentication', () => {
  const cases: [string, { given: () => HttpRequest; want: number }][] = [
    ['no Authorization header', { given: () => ({ method: 'GET', target: '/v1/pets' }), want: 401 }],
    ['another scheme (Basic)', { given: () => ({ method: 'GET', target: '/v1/pets', headers: { Authorization: 'Basic dXNlcjpwYXNz' } }), want: 401 }],
    ['the key without a scheme', { given: () => ({ method: 'GET', target: '/v1/pets', headers: { Authorization: t.key } }), want: 401 }],
    ['an empty bearer token', { given: () => ({ method: 'GET', target: '/v1/pets', headers: { Authorization: 'Bearer ' } }), want: 401 }],
    ['the key followed by other text', { given: () => ({ method: 'GET', target: '/v1/pets', headers: { Authorization: `Bearer ${t.key} x` } }), want: 401 }],
    ['the key with one character changed', { given: () => ({ method: 'GET', target: '/v1/pets', headers: { Authorization: `Bearer ${t.key.slice(0, -1)}${t.key.endsWith('A') ? 'B' : 'A'}` } }), want: 401 }],
    ['an unknown key', { given: () => ({ method: 'GET', target: '/v1/pets', headers: { Authorization: 'Bearer ask_not-a-key' } }), want: 401 }],
    ['a revoked key', { given: () => ({ method: 'GET', target: '/v1/pets', headers: { Authorization: `Bearer ${revoked}` } }), want: 401 }],
    ['a 15 KB bogus token', { given: () => ({ method: 'GET', target: '/v1/pets', headers: { Authorization: `Bearer ${'A'.repeat(15_000)}` } }), want: 401 }],
    ['the key in the query string', { given: () => ({ method: 'GET', target: `/v1/pets?access_token=${t.key}` }), want: 401 }],
    ['the key in X-API-Key', { given: () => ({ method: 'GET', target: '/v1/pets', headers: { 'X-API-Key': t.key } }), want: 401 }],
    ['the key in a cookie', { given: () => ({ method: 'GET', target: '/v1/pets', headers: { Cookie: `token=${t.key}` } }), want: 401 }],
    ['a valid key, createPet without one', { given: () => ({ method: 'POST', target: '/v1/pets', headers: { 'Content-Type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' }), want: 401 }],
    ['a valid key', { given: () => ({ method: 'GET', target: '/v1/pets', headers: { Authorization: `Bearer ${t.key}` } }), want: 200 }],
    ['a valid key, scheme in lower case', { given: () => ({ method: 'GET', target: '/v1/pets', headers: { Authorization: `bearer ${t.key}` } }), want: 200 }],
  ];
  it.each(cases)('%s', async (_title, { given, want }) => {
    const answer = await send(given());
    if (want === 401) {
      expectErrorAnswer(answer, 401);
      expect(answer.headers['www-authenticate']).toMatch(/^Bearer realm="animal-store"/);
    } else expect(answer.status).toBe(want);
  });
});

describe('idempotency keys are scoped per API key', () => {
  it("another key's Idempotency-Key never replays, nor conflicts with, the first key's request", async () => {
    const idempotencyKey = randomUUID();
    const create = (key: string, name: string) =>
      send({ method: 'POST', target: '/v1/pets', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey }, body: JSON.stringify({ name, categoryId: 1 }) });
    const first = await create(t.key, 'Mine');
    expect(first.status).toBe(201);
    const theirs = await create(other.key, 'Mine');
    expect(theirs.status).toBe(201);
    expect((theirs.json as { id: number }).id).not.toBe((first.json as { id: number }).id);
    const theirsChanged = await create(other.key, 'Theirs');
    expectErrorAnswer(theirsChanged, 422);
    const replay = await create(t.key, 'Mine');
    expect(replay.json).toEqual(first.json);
  });
});

describe('forged cursors are refused with 400', () => {
  let real = '';
  beforeAll(async () => {
    for (const name of ['A', 'B', 'C']) await send({ method: 'POST', target: '/v1/pets', headers: { Authorization: `Bearer ${t.key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ name, categoryId: 1 }) });
    const page = await send({ method: 'GET', target: '/v1/pets?limit=1', headers: { Authorization: `Bearer ${t.key}` } });
    real = decodeURIComponent(/[?&]cursor=([^&>]+)/.exec(page.headers.link ?? '')?.[1] ?? '');
    expect(real).toMatch(/^[\w-]+\.[\w-]+$/);
  });
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  // `given`: the cursor sent (made once the real one is known); `status`: the filter sent with it.
  const cases: [string, { given: () => string; status?: string }][] = [
    ['a changed signature', { given: () => `${real.split('.')[0]}.${randomBytes(16).toString('base64url')}` }],
    ['an invented position, signed at random', { given: () => `${b64({ a: 1 })}.${randomBytes(16).toString('base64url')}` }],
    ['an invented position with the real signature', { given: () => `${b64({ a: 0 })}.${real.split('.')[1]}` }],
    ['no signature', { given: () => real.split('.')[0] as string }],
    ['three parts', { given: () => `${real}.x` }],
    ['not base64', { given: () => '!!!.???' }],
    ['a cursor made for another status filter', { given: () => real, status: 'sold' }],
    ['2,000 characters', { given: () => `${'a'.repeat(1000)}.${'b'.repeat(1000)}` }],
  ];
  it.each(cases)('%s', async (_title, { given, status }) => {
    const filter = status ? `&status=${status}` : '';
    const answer = await send({ method: 'GET', target: `/v1/pets?cursor=${encodeURIComponent(given())}${filter}`, headers: { Authorization: `Bearer ${t.key}` } });
    expectErrorAnswer(answer, 400);
  });
});

describe('X-Request-Id cannot inject headers or log fields', () => {
  // `given`: the header line's value, written raw; `want`: echoed, replaced by a UUID, or the
  // request refused by the HTTP parser.
  const cases: [string, { given: string; want: 'echoed' | 'replaced' | 'refused' }][] = [
    ['a plain id', { given: 'trace-1234.abc:9_Z', want: 'echoed' }],
    ['128 characters', { given: 'a'.repeat(128), want: 'echoed' }],
    ['129 characters', { given: 'a'.repeat(129), want: 'replaced' }],
    ['a space', { given: 'a b', want: 'replaced' }],
    ['a quote and JSON', { given: 'x","level":60,"injected":"1', want: 'replaced' }],
    ['a CR LF starting another header', { given: 'x\r\nSet-Cookie: injected=1', want: 'echoed' }],
    ['a bare LF', { given: 'x\nSet-Cookie: injected=1', want: 'refused' }],
    ['non-ASCII bytes', { given: 'caf\u00e9', want: 'replaced' }],
    ['an HTML tag', { given: '<script>', want: 'replaced' }],
  ];
  it.each(cases)('%s', async (_title, { given, want }) => {
    const answer = await send({ method: 'GET', target: '/v1/pets', headers: [['X-Request-Id', given], ['Authorization', `Bearer ${t.key}`]] });
    expect(answer.headers['set-cookie']).toBeUndefined();
    // Node's parser refuses a bare LF in a header outright (the shape of its answers is the
    // wire-level suite's concern, test/fuzz).
    if (want === 'refused') return expect(answer.status).toBe(400);
    expect(answer.status).toBe(200);
    const id = answer.headers['x-request-id'] as string;
    if (want === 'echoed') expect(id).toBe(given.split('\r\n')[0]);
    else expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    for (const line of await logged(id)) expect(line).not.toHaveProperty('injected');
  });
});

describe('CORS is off by default', () => {
  const cases: [string, { given: HttpRequest; want: number }][] = [
    ['a preflight', { given: { method: 'OPTIONS', target: '/v1/pets', headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization' } }, want: 404 }],
    ['a simple request with an Origin', { given: { method: 'GET', target: '/v1/pets', headers: { Origin: 'https://evil.example' } }, want: 401 }],
    ['a keyed request with an Origin', { given: { method: 'GET', target: '/v1/pets', headers: { Origin: 'null', Authorization: 'Bearer {key}' } }, want: 200 }],
  ];
  it.each(cases)('%s: no Access-Control-* header', async (_title, { given, want }) => {
    const headers = Object.fromEntries(Object.entries(given.headers ?? {}).map(([n, v]) => [n, v.replace('{key}', t.key)]));
    const answer = await send({ ...given, headers });
    if (want >= 400) expectErrorAnswer(answer, want);
    else expect(answer.status).toBe(want);
    expect(Object.keys(answer.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
  });
});

describe('credentials in the query string are redacted in the log', () => {
  const names = [
    'access_token', 'api_key', 'apikey', 'key', 'token', 'Api-Key', 'API_KEY', 'access%5Ftoken', 'password', 'passwd', 'secret', 'client_secret',
    'auth', 'authorization', 'signature', 'sig', 'code', 'id_token', 'refresh_token', 'X-Amz-Signature', 'X-Amz-Credential', 'X-Amz-Security-Token', 'session_id', 'jwt',
  ];
  it.each(names.map((name) => [name] as const))('%s', async (name) => {
    const secret = `s3cr3t${randomBytes(8).toString('hex')}`;
    const requestId = `redact-${randomUUID()}`;
    const answer = await send({ method: 'GET', target: `/v1/pets?limit=2&${name}=${secret}`, headers: { Authorization: `Bearer ${t.key}`, 'X-Request-Id': requestId } });
    expect(answer.status).toBeLessThan(500);
    const lines = await logged(requestId);
    expect(lines.find((l) => l.msg === 'request')?.url).toBe(`/v1/pets?limit=2&${name}=[REDACTED]`);
    expect(t.logs.join('')).not.toContain(secret);
  });

  it('our keys, wherever they are in the URL', async () => {
    const requestId = `redact-${randomUUID()}`;
    await send({ method: 'GET', target: `/v1/pets/${t.key}?note=${other.key}`, headers: { 'X-Request-Id': requestId } });
    const access = (await logged(requestId)).find((l) => l.msg === 'request');
    expect(access?.url).toBe('/v1/pets/ask_[REDACTED]?note=ask_[REDACTED]');
  });

  it('other parameters are logged as sent', async () => {
    const requestId = `redact-${randomUUID()}`;
    await send({ method: 'GET', target: '/v1/pets?limit=2&status=available&cursor=abc.def&monkey=1', headers: { Authorization: `Bearer ${t.key}`, 'X-Request-Id': requestId } });
    expect((await logged(requestId)).find((l) => l.msg === 'request')?.url).toBe('/v1/pets?limit=2&status=available&cursor=abc.def&monkey=1');
  });
});

describe('a client that goes away is not a database outage', () => {
  const cases: [string, { given: () => string }][] = [
    ['mid-body, with a key', { given: () => `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nX-Request-Id: {id}\r\n\r\n{"name":"Ab` }],
    ['mid-body, chunked', { given: () => `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nX-Request-Id: {id}\r\n\r\n5\r\n{"nam` }],
  ];
  it.each(cases)('%s: logged as an abort, below warn; nothing stored', async (_title, { given }) => {
    const requestId = `abort-${randomUUID()}`;
    const before = await t.pool.query('SELECT count(*) FROM pets');
    await abort(t.port, given().replace('{id}', requestId));
    // No access line: no answer could be sent. The abort's own line is the last one.
    await within(5000, async () => logLines().some((l) => l.reqId === requestId));
    const lines = logLines().filter((l) => l.reqId === requestId);
    expect(lines).toMatchObject([{ level: 30, msg: 'request aborted by the client', err: { code: 'ECONNRESET' } }]);
    expect(logLines().filter((l) => /database unavailable/.test(l.msg))).toEqual([]);
    expect((await t.pool.query('SELECT count(*) FROM pets')).rows).toEqual(before.rows);
  });
});

describe('no key, key hash, SQL or stack trace in answers or logs', () => {
  it('a failing query is a plain 500', async () => {
    // The database breaks under the service (a table gone): the answer and the log say so
    // without the statement.
    await t.pool.query('ALTER TABLE pets RENAME TO pets_gone');
    try {
      expectErrorAnswer(await send({ method: 'GET', target: '/v1/pets/1', headers: { Authorization: `Bearer ${t.key}` } }), 500);
    } finally {
      await t.pool.query('ALTER TABLE pets_gone RENAME TO pets');
    }
  });

  it('in every answer above and the whole log', () => {
    expect(answers.length).toBeGreaterThan(50);
    const secrets = [t.key, other.key, revoked].flatMap((key) => {
      const hash = createHash('sha256').update(key).digest();
      return [key, key.slice(4), hash.toString('hex'), hash.toString('base64'), hash.toString('base64url')];
    });
    const sql = /\b(SELECT\s[\s\S]*\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b/i;
    const stack = /\n\s+at\s|\.ts:\d+:\d+|node_modules/;
    const texts: [string, string][] = [...answers.map((a, i) => [`answer ${i}`, a.text] as [string, string]), ['log', t.logs.join('')]];
    for (const [where, text] of texts) {
      for (const secret of secrets) expect(text.includes(secret), `${where} contains a key or its hash`).toBe(false);
      expect(text, where).not.toMatch(sql);
      if (where !== 'log') expect(text, where).not.toMatch(stack);
    }
  });
});
