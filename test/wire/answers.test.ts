// Every answer on the wire keeps the contract (issue 13): one row per case, each sent as
// raw bytes over a real socket, so that what Node's parser, the router, the /docs routes
// and the body parser answer is seen exactly as a client sees it.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchange, expectErrorAnswer, listen, raw, type ListeningApp } from '../support/wire.js';
import { queryParameters } from '../helper.js';

let t: ListeningApp;
const METRICS_TOKEN = 'metrics-token-0123456789';
beforeAll(async () => {
  // A short request timeout, so that the slow-headers row takes about a second.
  t = await listen({ env: { REQUEST_TIMEOUT_MS: '1000', RATE_LIMIT_MAX: '1000000', RATE_LIMIT_ANONYMOUS_MAX: '1000000', METRICS: 'token', METRICS_TOKEN } });
  await t.pool.query("INSERT INTO pets (name, category_id, status) VALUES ('Rex', 1, 'available')");
});
afterAll(async () => t?.close());

/** One HTTP/1.1 request as bytes: the headers given, then Host, length and Connection. */
function request(method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Buffer {
  const payload = body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(body) ? body : Buffer.from(body);
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (body !== undefined) lines.push(`Content-Length: ${payload.length}`);
  lines.push('Connection: close', '', '');
  return Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), payload]);
}
const auth = (): Record<string, string> => ({ Authorization: `Bearer ${t.key}` });
const json = (): Record<string, string> => ({ ...auth(), 'Content-Type': 'application/json' });
const createPet = (body: string | Buffer, headers: Record<string, string> = {}) => request('POST', '/v1/pets', { ...json(), ...headers }, body);

interface Row {
  /** The bytes (or parts, sent 300 ms apart), on one connection. */
  given: () => Buffer | string | Array<string | Buffer>;
  want: {
    status: number;
    code?: string;
    /** false: no request to name; a string: exactly this id. */
    requestId?: boolean | string;
    field?: string;
    /** The message, exactly. */
    message?: string;
    /** Headers the error answer carries besides the usual ones. */
    headers?: Record<string, RegExp>;
    /** Successful answers to earlier requests on the connection, before the error answer. */
    after?: number[];
    /** Wait this long before counting the pets (for requests that would be processed late). */
    settleMs?: number;
  };
}
/** A request on a keep-alive connection (no Connection: close). */
const kept = (method: string, path: string, headers = ''): string => `${method} ${path} HTTP/1.1\r\nHost: x\r\n${headers}\r\n`;
const createKept = (body: Buffer): Buffer =>
  Buffer.concat([Buffer.from(kept('POST', '/v1/pets', `Authorization: Bearer ${t.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n`), 'latin1'), body]);

const rows: Array<[string, Row]> = [
  // 1. Answers made before routing.
  ['a 70,000-character path is 431', { given: () => request('GET', `/v1/pets/${'1'.repeat(70_000)}`, auth()), want: { status: 431 } }],
  ['one 20 KB header is 431', { given: () => request('GET', '/v1/pets', { ...auth(), 'X-Big': 'a'.repeat(20_000) }), want: { status: 431 } }],
  ['a header line without a colon is 400', { given: () => 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n', want: { status: 400 } }],
  ['a NUL in a header value is 400', { given: () => 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n', want: { status: 400 } }],
  ['Content-Length with Transfer-Encoding is 400', { given: () => `POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, want: { status: 400 } }],
  ['two different Content-Lengths are 400', { given: () => `POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n{}`, want: { status: 400 } }],
  ['headers that never finish are 408', { given: () => ['GET /v1/pets HTTP/1.1\r\n', 'Host: x\r\n', 'X-Slow: 1\r\n', 'X-Slow: 2\r\n', 'X-Slow: 3\r\n', 'X-Slow: 4\r\n', 'X-Slow: 5\r\n'], want: { status: 408 } }],
  ['a path that is not validly percent-encoded is 404', { given: () => request('GET', '/v1/pets/%E0%A4%A', auth()), want: { status: 404 } }],
  ['an unknown /docs page is 404', { given: () => request('GET', '/docs/no-such-page'), want: { status: 404 } }],
  ['POST /docs is 405 (it takes GET)', { given: () => request('POST', '/docs', { 'Content-Type': 'application/json' }, '{}'), want: { status: 405 } }],
  ['a /docs/static traversal is 404', { given: () => request('GET', '/docs/static/../x'), want: { status: 404 } }],
  ['a /docs/static encoded traversal is 404', { given: () => request('GET', '/docs/static/%2e%2e/%2e%2e/package.json'), want: { status: 404 } }],
  // 2. Numbers.
  ['a body integer with a fraction past 2^53 is 400', { given: () => createPet('{"name":"Rex","categoryId":9007199254740990.9}'), want: { status: 400, field: '/categoryId' } }],
  ['a body integer of 1.0000000000000001 is 400', { given: () => createPet('{"name":"Rex","categoryId":1.0000000000000001}'), want: { status: 400, field: '/categoryId' } }],
  ['a body integer of 2^53 + 1 is 400', { given: () => createPet('{"name":"Rex","categoryId":9007199254740993}'), want: { status: 400, field: '/categoryId' } }],
  ['a body integer of 1.5 is 400', { given: () => createPet('{"name":"Rex","categoryId":1.5}'), want: { status: 400 } }],
  ['a repeated key before a syntax error is told the syntax error', { given: () => createPet('{"name":"Rex","name":"Tom","categoryId":1,'), want: { status: 400, message: 'Body is not valid JSON: expected double-quoted property name at line 1, column 43' } }],
  ['a repeated key before a syntax error JSON.parse gives no position for is told it, quoting nothing', { given: () => createPet('{"name":"Rex","name":"Tom","b":tru}'), want: { status: 400, message: "Body is not valid JSON: unexpected token '}'" } }],
  ['a body integer of 1e400 is 400', { given: () => createPet('{"name":"Rex","categoryId":1e400}'), want: { status: 400 } }],
  ...['0x1', '+1', '%201', '01', '1e0', '1.0', '-0x1'].map((id): [string, Row] => [`petId ${id} is 400`, { given: () => request('GET', `/v1/pets/${id}`, auth()), want: { status: 400 } }]),
  ...['+5', '1e2', '1.0000000000000001', '%205', '05', '0x5'].map((limit): [string, Row] => [`limit=${limit} is 400`, { given: () => request('GET', `/v1/pets?limit=${limit}`, auth()), want: { status: 400 } }]),
  // 3. Strings.
  ['a lone surrogate escape is 400', { given: () => createPet('{"name":"a\\ud800b","categoryId":1}'), want: { status: 400, field: '/name' } }],
  ['a lone low surrogate escape in a key is 400', { given: () => createPet('{"name":"a","categoryId":1,"\\udc00":1}'), want: { status: 400 } }],
  ['invalid UTF-8 bytes in a string are 400', { given: () => createPet(Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('b","categoryId":1}')])), want: { status: 400, field: '/name' } }],
  ['a truncated UTF-8 sequence is 400', { given: () => createPet(Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xe2, 0x82]), Buffer.from('","categoryId":1}')])), want: { status: 400, field: '/name' } }],
  ['charset=utf-16 is 415', { given: () => createPet('{"name":"Rex","categoryId":1}', { 'Content-Type': 'application/json; charset=utf-16' }), want: { status: 415 } }],
  ['charset=latin1 is 415', { given: () => createPet('{"name":"Rex","categoryId":1}', { 'Content-Type': 'application/json;charset="ISO-8859-1"' }), want: { status: 415 } }],
  // 4. Idempotency-Key: exactly the schema's rule.
  ['an Idempotency-Key of 256 characters is 400', { given: () => createPet('{"name":"Rex","categoryId":1}', { 'Idempotency-Key': 'k'.repeat(256) }), want: { status: 400 } }],
  ['an Idempotency-Key of two quotes is 400', { given: () => createPet('{"name":"Rex","categoryId":1}', { 'Idempotency-Key': '""' }), want: { status: 400 } }],
  ['two Idempotency-Key headers are 400 saying so', { given: () => createPet('{"name":"Rex","categoryId":1}', { 'Idempotency-Key': 'one\r\nIdempotency-Key: two' }), want: { status: 400, field: 'Idempotency-Key', message: 'header Idempotency-Key: is sent twice: send it once' } }],
  // 6. Two Authorization headers.
  ['Bearer valid then Bearer bogus is 401', { given: () => `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.key}\r\nAuthorization: Bearer bogus\r\nConnection: close\r\n\r\n`, want: { status: 401 } }],
  ['Bearer valid then Basic is 401', { given: () => `GET /v1/pets/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.key}\r\nauthorization: Basic dTpw\r\nConnection: close\r\n\r\n`, want: { status: 401 } }],
  ['/metrics: the token then Bearer bogus is 401', { given: () => `GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${METRICS_TOKEN}\r\nAuthorization: Bearer bogus\r\nConnection: close\r\n\r\n`, want: { status: 401, headers: { 'www-authenticate': /error="invalid_request"/ } } }],
  // Answers Node itself would make.
  ['Expect: foo is 417', { given: () => request('GET', '/v1/pets', { ...auth(), Expect: 'foo' }), want: { status: 417 } }],
  ['Expect: foo on createPet is 417 and stores nothing', { given: () => createPet('{"name":"Rex","categoryId":1}', { Expect: 'foo', 'X-Request-Id': 'expect-1' }), want: { status: 417, requestId: 'expect-1' } }],
  ['keep-alive: an empty Expect in the second request is 417', { given: () => kept('GET', '/healthz') + kept('GET', '/v1/pets', `Authorization: Bearer ${t.key}\r\nExpect: \r\n`), want: { status: 417, after: [200] } }],
  ['an HTTP/1.1 request without Host is 400', { given: () => `GET /v1/pets HTTP/1.1\r\nAuthorization: Bearer ${t.key}\r\nConnection: close\r\n\r\n`, want: { status: 400 } }],
  ['a createPet without Host is 400 and stores nothing', { given: () => `POST /v1/pets HTTP/1.1\r\nAuthorization: Bearer ${t.key}\r\nContent-Type: application/json\r\nContent-Length: 29\r\nConnection: close\r\n\r\n{"name":"Rex","categoryId":1}`, want: { status: 400 } }],
  ['two Host headers are 400 saying so', { given: () => `GET /v1/pets HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${t.key}\r\nhost: b\r\nConnection: close\r\n\r\n`, want: { status: 400, message: 'A request must carry one Host header, not several: send it once' } }],
  ['a createPet with two Host headers is 400 and stores nothing', { given: () => `POST /v1/pets HTTP/1.1\r\nHost: a\r\nHost: a\r\nAuthorization: Bearer ${t.key}\r\nContent-Type: application/json\r\nContent-Length: 29\r\nConnection: close\r\n\r\n{"name":"Rex","categoryId":1}`, want: { status: 400 } }],
  ['Transfer-Encoding: gzip, chunked is 400 naming the coding', { given: () => `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.key}\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n1d\r\n{"name":"Rex","categoryId":1}\r\n0\r\n\r\n`, want: { status: 400, message: 'Transfer-Encoding gzip is not supported: send the body chunked alone, or with Content-Length' } }],
  ['a query parameter with no name is 400 saying so', { given: () => request('GET', '/v1/pets?=', auth()), want: { status: 400, field: '', message: `a query parameter has no name (an "=" with nothing before it): remove it; listPets takes ${queryParameters('listPets')}` } }],
  ['a pipelined CONNECT is answered after the request before it', { given: () => kept('GET', '/healthz') + `CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n`, want: { status: 400, after: [200] } }],
  ['CONNECT is 400 with the Error body, not a closed connection', { given: () => `CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\nAuthorization: Bearer ${t.key}\r\n\r\n`, want: { status: 400, message: 'CONNECT is not served: this is an HTTP API, not a proxy; send GET, POST, PUT, PATCH or DELETE to a path under /v1' } }],
  ['a path not validly percent-encoded without Host is 400', { given: () => `GET /v1/pets/%E0%A4%A HTTP/1.1\r\nConnection: close\r\n\r\n`, want: { status: 400 } }],
  ['a Range past the end of a /docs/static file is 416', { given: () => request('GET', '/docs/static/swagger-ui.css', { Range: 'bytes=99999999-' }), want: { status: 416, headers: { 'content-range': /^bytes \*\/\d+$/ } } }],
  ['If-Match on a /docs/static file not met is 412', { given: () => request('GET', '/docs/static/swagger-ui.css', { 'If-Match': '"nope"' }), want: { status: 412 } }],
  // Parser errors on a keep-alive connection, after the answers to the requests before.
  ['keep-alive: a bad header line in the second request is 400', { given: () => [kept('GET', '/healthz'), kept('GET', '/v1/pets', 'no colon\r\n')], want: { status: 400, after: [200] } }],
  ['keep-alive: the second request pipelined and bad is 400 after the first answer', { given: () => kept('GET', '/healthz') + kept('GET', `/v1/pets`, `Authorization: Bearer ${t.key}\r\n`) + kept('GET', '/v1/pets', 'no colon\r\n'), want: { status: 400, after: [200, 200] } }],
  ['keep-alive: headers over 16 KiB in the second request are 431', { given: () => [kept('GET', '/healthz'), kept('GET', '/v1/pets', `X-Big: ${'a'.repeat(20_000)}\r\n`)], want: { status: 431, after: [200] } }],
  ['keep-alive: slow headers in the second request are 408', { given: () => [kept('GET', '/healthz'), 'GET /v1/pets HTTP/1.1\r\n', 'Host: x\r\n', 'X-Slow: 1\r\n', 'X-Slow: 2\r\n', 'X-Slow: 3\r\n', 'X-Slow: 4\r\n', 'X-Slow: 5\r\n'], want: { status: 408, after: [200] } }],
  // Errors after the request was read keep its id.
  ['a bad chunk size after the headers is 400 with the request id', { given: () => `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.key}\r\nX-Request-Id: my-id-1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, want: { status: 400, requestId: 'my-id-1' } }],
  ['a body that stalls is 408 with the request id', { given: () => `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.key}\r\nX-Request-Id: my-id-2\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"name"`, want: { status: 408, requestId: 'my-id-2' } }],
  // A request pipelined behind an answer that closes the connection is not processed: its
  // answer could never be sent.
  ['a createPet pipelined behind a refused body is not stored', { given: () => Buffer.concat([createKept(Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xff]), Buffer.from('","categoryId":1}')])), createKept(Buffer.from('{"name":"Lost","categoryId":1}'))]), want: { status: 400, field: '/name', settleMs: 500 } }],
  // Two Content-Type headers.
  ['application/json then charset=utf-16 is 400', { given: () => createPet('{"name":"Dup","categoryId":1}', { 'Content-Type': 'application/json\r\nContent-Type: application/json; charset=utf-16' }), want: { status: 400, field: 'Content-Type' } }],
  ['text/plain then application/json is 400', { given: () => createPet('{"name":"Dup","categoryId":1}', { 'Content-Type': 'text/plain\r\nContent-Type: application/json' }), want: { status: 400, field: 'Content-Type', message: 'header Content-Type: is sent more than once: send it once' } }],
  // 5. HTTP's own answers and clear messages (issue 26).
  ['PUT on a pet is 405 with Allow', { given: () => request('PUT', '/v1/pets/1', auth()), want: { status: 405, headers: { allow: /^DELETE, GET, HEAD, PATCH$/ }, message: 'PUT is not allowed on /v1/pets/1; it allows DELETE, GET, HEAD, PATCH' } }],
  ['OPTIONS without CORS is 405 with Allow', { given: () => request('OPTIONS', '/v1/pets', auth()), want: { status: 405, headers: { allow: /^GET, HEAD, POST$/ }, message: 'OPTIONS is not allowed on /v1/pets; it allows GET, HEAD, POST' } }],
  ['PATCH on an order action is 405 with Allow', { given: () => request('PATCH', '/v1/store/orders/1/cancel', json(), '{}'), want: { status: 405, headers: { allow: /^POST$/ } } }],
  [
    'a query parameter the operation does not take is 400 naming it and those it takes',
    { given: () => request('GET', '/v1/pets?stauts=sold&limit=2', auth()), want: { status: 400, field: 'stauts', message: `query parameter stauts: is not a parameter of listPets (it takes ${queryParameters('listPets')})` } },
  ],
  ['a query parameter on an operation that takes none is 400', { given: () => createPet('{"name":"Q","categoryId":1}', {}).toString('latin1').replace('POST /v1/pets ', 'POST /v1/pets?dryRun=true '), want: { status: 400, field: 'dryRun', message: 'query parameter dryRun: is not a parameter of createPet (it takes none)' } }],
  ['limit given twice is 400 saying so', { given: () => request('GET', '/v1/pets?limit=1&limit=2', auth()), want: { status: 400, field: 'limit', message: 'query parameter limit: must be given once, not 2 times' } }],
  ['q percent-encoded as Latin-1, not UTF-8, is 400 naming the escape', { given: () => request('GET', '/v1/pets?limit=2&q=Z%C3%B6%E9', auth()), want: { status: 400, field: 'q', message: "query parameter q: is not percent-encoded UTF-8 (%E9): percent-encode the text's UTF-8 bytes, as encodeURIComponent does (a % itself is %25)" } }],
  ['a % not followed by two hex digits is 400', { given: () => request('GET', '/v1/pets?q=100%&limit=2', auth()), want: { status: 400, field: 'q', message: "query parameter q: is not percent-encoded UTF-8 (%): percent-encode the text's UTF-8 bytes, as encodeURIComponent does (a % itself is %25)" } }],
  ['a UTF-8 sequence cut short in an unknown parameter is 400 for its encoding', { given: () => request('GET', '/v1/pets?%C3%A9t%C3=1', auth()), want: { status: 400, field: '%C3%A9t%C3', message: "query parameter %C3%A9t%C3: is not percent-encoded UTF-8 (%C3): percent-encode the text's UTF-8 bytes, as encodeURIComponent does (a % itself is %25)" } }],
  ['a cursor that is not one is 400 in words, not a pattern', { given: () => request('GET', '/v1/pets?cursor=x', auth()), want: { status: 400, field: 'cursor', message: 'query parameter cursor: must be the opaque value of a `rel="next"` link of this API' } }],
  ['an Idempotency-Key with a space is 400 in words', { given: () => createPet('{"name":"K","categoryId":1}', { 'Idempotency-Key': 'a b' }), want: { status: 400, field: 'Idempotency-Key', message: 'header Idempotency-Key: must be 1 to 255 visible ASCII characters, bare or in double quotes' } }],
  ['a body over 64 KiB is 413 saying the limit', { given: () => createPet(JSON.stringify({ name: 'x'.repeat(70_000), categoryId: 1 })), want: { status: 413, message: 'Request body is larger than 65536 bytes: send at most 65536' } }],
  ['invalid JSON is 400 saying what and where', { given: () => createPet('{"name":"Rex",\n "categoryId": }'), want: { status: 400, message: "Body is not valid JSON: object value expected after ':' at line 2, column 16" } }],
  ['a name with a control character is 400 in words', { given: () => createPet('{"name":"a\\u0007b","categoryId":1}'), want: { status: 400, field: '/name', message: 'body /name: must be free of control characters (C0, DEL and C1) and of Unicode format characters (category Cf of the Basic Multilingual Plane, such as U+200B, U+202E, U+FEFF): character 2 is U+0007; remove it' } }],
  // Answers that say what to do instead.
  ['?id=1,2 is 400 saying to repeat the parameter', { given: () => request('GET', '/v1/pets?id=1,2', auth()), want: { status: 400, field: 'id/0', message: 'query parameter id/0: takes one integer per parameter: repeat it (id=1&id=2), not a comma-separated list' } }],
  ['a body on an action that takes none is 400 naming the field to remove', { given: () => request('POST', '/v1/store/orders/1/cancel', json(), '{"reason":"x"}'), want: { status: 400, field: '', message: "body: takes no fields (send {} or no body): remove 'reason'" } }],
  ['GET /v1/pets/ is 400 saying the id is missing where the slash ends the URL', { given: () => request('GET', '/v1/pets/', auth()), want: { status: 400, field: 'petId', message: 'path parameter petId: is empty (the URL ends with a slash where it goes): give it, or remove the slash to reach the collection' } }],
  ['an empty categoryId is 400 saying to give one or leave it out', { given: () => request('GET', '/v1/pets?categoryId=', auth()), want: { status: 400, field: 'categoryId', message: 'query parameter categoryId: is empty: give an integer, or leave the parameter out' } }],
  ['a path without /v1 is 404 naming the base path', { given: () => request('GET', '/pets?limit=1', auth()), want: { status: 404, message: "No operation GET /pets; the API is under /v1: GET /v1/pets (a client's base URL ends with /v1)" } }],
  ['"Bearer Bearer <key>" is 401 saying the scheme is given twice', { given: () => request('GET', '/v1/pets', { Authorization: `Bearer Bearer ${t.key}` }), want: { status: 401, message: 'The scheme is given twice ("Bearer Bearer ..."): send Authorization: Bearer <API_KEY> once (in /docs, Authorize takes the key alone)' } }],
  ['a body nested 60,000 deep is 400 saying the limit, not an engine error', { given: () => createPet('['.repeat(60_000)), want: { status: 400, field: '', message: "Body nests arrays or objects more than 64 levels deep; this API's bodies need at most 3" } }],
];

const count = async (): Promise<number> => Number((await t.pool.query<{ n: string }>('SELECT count(*) AS n FROM pets')).rows[0]?.n);

describe('every error answer on the wire keeps the contract', () => {
  it.each(rows)('%s', async (_title, { given, want }) => {
    const before = await count();
    const bytes = given();
    const after = want.after ?? [];
    const answers = await exchange(t.port, bytes, { partsDelayMs: 300, timeoutMs: 20_000, count: after.length + 1 });
    expect(answers.map((a) => a.status)).toEqual([...after, want.status]);
    const answer = answers[after.length] as (typeof answers)[number];
    expectErrorAnswer(answer, want.status, { ...(want.code ? { code: want.code } : {}), ...(want.requestId === false ? { requestId: false } : {}) });
    if (typeof want.requestId === 'string') expect(answer.headers['x-request-id']).toBe(want.requestId);
    for (const [name, value] of Object.entries(want.headers ?? {})) expect(answer.headers[name], name).toMatch(value);
    if (want.field) expect((answer.json as { details?: Array<{ field: string }> }).details?.map((d) => d.field)).toContain(want.field);
    if (want.message) expect((answer.json as { message: string }).message).toBe(want.message);
    if (want.settleMs) await new Promise((resolve) => setTimeout(resolve, want.settleMs));
    expect(await count()).toBe(before);
  });
});

describe('what the rules accept', () => {
  it.each([
    ['categoryId 2.0 is the integer 2', '{"name":"Two","categoryId":2.0}', 2],
    ['categoryId 2e0 is the integer 2', '{"name":"Two","categoryId":2e0}', 2],
    ['a name with an escaped surrogate pair is kept', '{"name":"a\\ud83d\\ude00b","categoryId":3}', 3],
    ['a name in UTF-8 is kept byte for byte', '{"name":"Zoë 😀","categoryId":4}', 4],
    ['charset=UTF-8 is accepted', '{"name":"Utf","categoryId":5}', 5],
    ['a property named twice counts as JSON.parse counts it, the last, with a fraction in the body too', '{"name":"Rex","name":"Tom","categoryId":6.0}', 6],
  ])('%s', async (_title, body, categoryId) => {
    const answer = await fetch(`${t.origin}/v1/pets`, { method: 'POST', headers: { ...json(), 'Content-Type': 'application/json; charset=UTF-8' }, body });
    expect(answer.status).toBe(201);
    const sent = JSON.parse(body) as { name: string };
    const created = (await answer.json()) as { id: number };
    expect(created).toMatchObject({ name: sent.name, categoryId });
    const stored = await t.pool.query<{ name: string; category_id: string }>('SELECT name, category_id FROM pets WHERE id = $1', [created.id]);
    expect(stored.rows[0]).toMatchObject({ name: sent.name });
  });

  it('a quoted Idempotency-Key of 255 characters is accepted and names the bare key', async () => {
    const key = 'q'.repeat(255);
    const first = await raw(t.port, createPet('{"name":"Quoted","categoryId":1}', { 'Idempotency-Key': `"${key}"` }));
    expect(first.status, first.text).toBe(201);
    const again = await raw(t.port, createPet('{"name":"Quoted","categoryId":1}', { 'Idempotency-Key': key }));
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('pipelined requests are each answered, in order', async () => {
    const answers = await exchange(t.port, kept('GET', '/healthz') + createKept(Buffer.from('{"name":"Piped","categoryId":1}')).toString('latin1') + kept('GET', '/v1/pets?limit=100', `Authorization: Bearer ${t.key}\r\n`), { count: 3 });
    expect(answers.map((a) => a.status)).toEqual([200, 201, 200]);
    // The list, answered after the create, sees it.
    expect(answers[2]?.json).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Piped' })]));
  });

  it('a 400 lists every problem, one per field, and says how many', async () => {
    const answer = await raw(t.port, createPet('{"categoryId":"x"}'));
    expect(answer.status).toBe(400);
    const body = answer.json as { message: string; details: { field: string; rule: string }[] };
    expect(body.details.map((d) => [d.field, d.rule])).toEqual([['/name', 'required'], ['/categoryId', 'type']]);
    expect(body.message).toBe("body /name: must have required property 'name' (and 1 more problem, in details)");
  });

  it('a 400 for hostile input lists at most 20 problems, and says how many there were', async () => {
    const unknown = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`x${i}`, i]));
    const answer = await raw(t.port, createPet(JSON.stringify({ name: 'Many', categoryId: 1, ...unknown })));
    expect(answer.status).toBe(400);
    const body = answer.json as { message: string; details: unknown[] };
    expect(body.details).toHaveLength(20);
    expect(body.message).toBe("body /x0: must NOT have the unknown property 'x0' (and 99 more problems; details lists the first 20)");
  });

  it('plain decimal integers are accepted in paths and queries', async () => {
    expect((await raw(t.port, request('GET', '/v1/pets/1', auth()))).status).toBe(200);
    expect((await raw(t.port, request('GET', '/v1/pets?limit=5', auth()))).status).toBe(200);
  });
});

describe("HTTP's own answers without a body to check", () => {
  // RFC 9110 §9.3.2: the same status and headers as GET, and no body.
  it.each(['/v1/pets?limit=2', '/v1/pets/1', '/v1/pets/999999', '/v1/store/inventory', '/v1/openapi.json', '/healthz', '/'])('HEAD %s answers as GET does, without the body', async (path) => {
    const [get, head] = [await raw(t.port, request('GET', path, auth())), await raw(t.port, request('HEAD', path, auth()), { head: true })];
    expect(head.status).toBe(get.status);
    expect(head.body).toBe('');
    const same = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).filter(([name]) => !['date', 'x-request-id', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit', 'keep-alive', 'connection'].includes(name)));
    expect(same(head.headers)).toEqual(same(get.headers));
  });

  it('HEAD without a key is the same 401 as GET, without the body', async () => {
    const answer = await raw(t.port, request('HEAD', '/v1/pets'), { head: true });
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(answer.body).toBe('');
  });

  it('GET / names the documentation and the contract, and each answers', async () => {
    const answer = await raw(t.port, request('GET', '/'));
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ docs: '/docs', redoc: '/docs/redoc', openapiJson: '/v1/openapi.json', openapiYaml: '/v1/openapi.yaml' });
    expect(answer.headers.link).toContain('</v1/openapi.json>; rel="service-desc"');
    for (const path of ['/docs', '/docs/redoc', '/v1/openapi.json', '/v1/openapi.yaml']) expect((await raw(t.port, request('GET', path))).status).toBe(200);
  });
});

describe('Expect: 100-continue', () => {
  /** Sends `head` (headers announcing a body), reads until the first answer's head, then sends `body` if it was 100. */
  const announced = (head: string, body: string): Promise<{ first: string; rest: string }> =>
    new Promise((resolve, reject) => {
      const socket = connect(t.port, '127.0.0.1');
      let text = '';
      let first: string | undefined;
      socket.setEncoding('latin1');
      socket.on('error', reject);
      socket.on('data', (chunk: string) => {
        text += chunk;
        if (first === undefined && text.includes('\r\n\r\n')) {
          first = text.slice(0, text.indexOf('\r\n'));
          text = text.slice(text.indexOf('\r\n\r\n') + 4);
          if (first.startsWith('HTTP/1.1 100')) socket.write(body);
        }
      });
      socket.on('close', () => resolve({ first: first ?? '', rest: text }));
      // One generous limit: an answer that never comes ends the case with what was read.
      socket.setTimeout(10_000, () => socket.destroy());
      socket.write(head);
    });
  const pet = '{"name":"Continued","categoryId":1}';
  const head = (headers: string, length = pet.length) => `POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\nConnection: close\r\n${headers}\r\n`;
  const stored = async () => Number((await t.pool.query<{ n: string }>("SELECT count(*) AS n FROM pets WHERE name = 'Continued'")).rows[0]?.n);

  it('without a key: 401 before any 100 Continue, and nothing stored', async () => {
    const answer = await announced(head(''), pet);
    expect(answer.first).toBe('HTTP/1.1 401 Unauthorized');
    expect(await stored()).toBe(0);
  });

  it('a key without the scope: 403 before any 100 Continue', async () => {
    const made = await t.api({ method: 'POST', url: '/v1/api-keys', headers: { ...auth(), 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'reader', scopes: ['pets:read'] }) });
    const answer = await announced(head(`Authorization: Bearer ${made.json<{ secret: string }>().secret}\r\n`), pet);
    expect(answer.first).toBe('HTTP/1.1 403 Forbidden');
    expect(await stored()).toBe(0);
  });

  it('a route that is no operation with a body (a 404, a 405) still gets 100 Continue, then its answer', async () => {
    for (const path of ['/v1/nope', '/v1/pets/1']) {
      const answer = await announced(head(`Authorization: Bearer ${t.key}\r\n`).replace('POST /v1/pets ', `POST ${path} `), pet);
      expect(answer.first, path).toBe('HTTP/1.1 100 Continue');
      expect(answer.rest, path).toMatch(path === '/v1/nope' ? /^HTTP\/1\.1 404 / : /^HTTP\/1\.1 405 /);
    }
  });

  it('HTTP/1.0 gets no 100 (it has no 1xx answers), whatever its Expect', async () => {
    const answer = await announced(`${head(`Authorization: Bearer ${t.key}\r\n`).replace('HTTP/1.1', 'HTTP/1.0').replace('100-continue', 'foo')}${pet.replace('Continued', 'Continuex')}`, '');
    expect(answer.first).toMatch(/^HTTP\/1\.1 201 /);
  });

  it('a length over the operation\'s limit: 413 before any 100 Continue', async () => {
    const answer = await announced(head(`Authorization: Bearer ${t.key}\r\n`, 70_000), pet);
    expect(answer.first).toBe('HTTP/1.1 413 Payload Too Large');
  });

  it("an import's body is held to the import's limit, not 64 KiB: 100 Continue for 70,000 bytes, 413 past IMPORT_MAX_BYTES", async () => {
    const rows = Array.from({ length: 7000 }, (_, i) => `Pet ${String(i).padStart(7, '0')},1`).join('\n');
    const csv = `name,categoryId\n${rows}`.padEnd(70_000, '\n');
    const importHead = (length: number) => `POST /v1/pet-imports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.key}\r\nContent-Type: text/csv\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`;
    const accepted = await announced(importHead(csv.length), csv);
    expect(accepted.first).toBe('HTTP/1.1 100 Continue');
    expect(accepted.rest).toMatch(/^HTTP\/1\.1 202 Accepted/);
    const refused = await announced(importHead(2 ** 31), '');
    expect(refused.first).toBe('HTTP/1.1 413 Payload Too Large');
    expect(refused.rest).toContain('Request body is larger than 1073741824 bytes: split the file, and import each part');
  });

  it('with a key and a body within the limit: 100 Continue, then the body is read and the pet created', async () => {
    const answer = await announced(head(`Authorization: Bearer ${t.key}\r\n`), pet);
    expect(answer.first).toBe('HTTP/1.1 100 Continue');
    expect(answer.rest).toMatch(/^HTTP\/1\.1 201 Created/);
    expect(await stored()).toBe(1);
  });
});
