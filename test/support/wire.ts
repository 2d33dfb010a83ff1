// Requests over a real socket, for what only the wire shows: answers Node's HTTP parser
// makes before Fastify sees a request, raw bytes no HTTP client would send, headers as
// they are written. `listen` serves the test app on a free port; `raw` writes bytes to it
// and reads one answer back, `exchange` reads every answer on a keep-alive connection;
// `expectErrorAnswer` checks what every error answer promises.
import net from 'node:net';
import { expect } from 'vitest';
import { buildTestApp, type TestApp } from '../helper.js';

export interface ListeningApp extends TestApp {
  /** http://127.0.0.1:PORT */
  origin: string;
  port: number;
}

/** The test app (test/helper.ts) listening on 127.0.0.1 on a free port. */
export async function listen(options: Parameters<typeof buildTestApp>[0] = {}): Promise<ListeningApp> {
  const t = await buildTestApp(options);
  const origin = await t.app.listen({ host: '127.0.0.1', port: 0 });
  return { ...t, origin, port: Number(new URL(origin).port) };
}

export interface RawAnswer {
  status: number;
  /** Header names lower-cased; a repeated header's values joined with ', '. */
  headers: Record<string, string>;
  body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
  /** This answer as read from the socket (head and body), as text. */
  text: string;
}

export interface RawOptions {
  /** Give up after this long (the answer must have come by then). */
  timeoutMs?: number;
  /** Write the request in these parts, this many ms apart (slow clients). */
  partsDelayMs?: number;
  /** The answers carry no body whatever their headers say (answers to HEAD). */
  head?: boolean;
}

/**
 * The answer at the start of `text` (read as latin1, one character a byte) and how many
 * bytes it took; undefined while it is incomplete. The body is decoded as UTF-8.
 */
function parseAnswer(text: string, head = false): { answer: RawAnswer; length: number } | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const start = end + 4;
  let body = text.slice(start);
  let length = text.length;
  if ((status >= 100 && status < 200) || head) {
    length = start;
    body = '';
  } else if (headers['content-length'] !== undefined) {
    const size = Number(headers['content-length']);
    if (body.length < size) return undefined;
    body = body.slice(0, size);
    length = start + size;
  } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    let rest = body;
    body = '';
    for (let at = start; ; ) {
      const lineEnd = rest.indexOf('\r\n');
      if (lineEnd < 0) return undefined;
      const size = parseInt(rest.slice(0, lineEnd), 16);
      if (!size) {
        if (rest.length < lineEnd + 4) return undefined;
        length = at + lineEnd + 4;
        break;
      }
      if (rest.length < lineEnd + 2 + size + 2) return undefined;
      body += rest.slice(lineEnd + 2, lineEnd + 2 + size);
      rest = rest.slice(lineEnd + 2 + size + 2);
      at += lineEnd + 2 + size + 2;
    }
  }
  body = Buffer.from(body, 'latin1').toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { answer: { status, headers, body, json, text: text.slice(0, length) }, length };
}

/** The final answers in `text`, in order (interim 1xx answers, like 100 Continue, skipped). */
function parseAnswers(text: string, head = false): RawAnswer[] {
  const answers: RawAnswer[] = [];
  for (let rest = text; rest.length > 0; ) {
    const parsed = parseAnswer(rest, head);
    if (!parsed) break;
    if (parsed.answer.status >= 200) answers.push(parsed.answer);
    rest = rest.slice(parsed.length);
  }
  return answers;
}

/**
 * Writes `request` (exactly these bytes; parts `partsDelayMs` apart) to a new connection
 * and reads answers until `count` of them have come or the server closes the connection.
 */
export function exchange(port: number, request: string | Buffer | Array<string | Buffer>, options: RawOptions & { count?: number } = {}): Promise<RawAnswer[]> {
  const parts = Array.isArray(request) ? request : [request];
  const count = options.count ?? Infinity;
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let text = '';
    let done = false;
    const finish = (error?: Error): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const answers = parseAnswers(text, options.head);
      if (answers.length > 0 && (error === undefined || answers.length >= count)) resolve(answers);
      else reject(error ?? new Error(`no complete answer; read: ${JSON.stringify(text.slice(0, 500))}`));
    };
    const timer = setTimeout(() => finish(new Error(`no answer within ${options.timeoutMs ?? 10_000} ms; read: ${JSON.stringify(text.slice(0, 500))}`)), options.timeoutMs ?? 10_000);
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      if (parseAnswers(text, options.head).length >= count) finish();
    });
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    // A server that answers and closes before the whole request was written resets the
    // connection; what it answered is still read.
    socket.on('error', (error) => finish(parseAnswers(text, options.head).length > 0 ? undefined : error));
    socket.on('connect', async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0 && options.partsDelayMs) await new Promise((r) => setTimeout(r, options.partsDelayMs));
        if (!socket.destroyed) socket.write(part);
      }
    });
  });
}

/**
 * Writes `request` (exactly these bytes) to a new connection and resolves with the first
 * answer, once it is complete or the server closes the connection.
 */
export async function raw(port: number, request: string | Buffer | Array<string | Buffer>, options: RawOptions = {}): Promise<RawAnswer> {
  return (await exchange(port, request, { ...options, count: 1 }))[0] as RawAnswer;
}

/** The Error code each status must carry (the catalogue in openapi/v1.yaml). */
export const codeForStatus: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  409: 'idempotency_in_flight',
  412: 'precondition_failed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  416: 'range_not_satisfiable',
  417: 'expectation_failed',
  422: 'idempotency_key_reused',
  429: 'rate_limited',
  431: 'headers_too_large',
  500: 'internal',
  501: 'not_implemented',
  503: 'unavailable',
};

/** The security headers every JSON answer carries (outside the /docs pages). */
export const apiSecurityHeaders: Record<string, string | RegExp> = {
  'cache-control': 'no-store',
  'content-security-policy': /default-src 'none'/,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

/**
 * What every error answer promises, whatever wrote it: the Error body with a code that
 * matches the status, JSON, the security headers, and (where there was a request to name)
 * X-Request-Id.
 */
export function expectErrorAnswer(answer: RawAnswer, status: number, options: { requestId?: boolean; code?: string } = {}): void {
  const where = `${answer.text.slice(0, 300)}`;
  expect(answer.status, where).toBe(status);
  expect(answer.headers['content-type'], where).toMatch(/^application\/json/);
  expect(answer.json, where).toMatchObject({ code: options.code ?? codeForStatus[status], status, message: expect.any(String) });
  for (const [name, value] of Object.entries(apiSecurityHeaders)) {
    if (typeof value === 'string') expect(answer.headers[name], `${name} in ${where}`).toBe(value);
    else expect(answer.headers[name], `${name} in ${where}`).toMatch(value);
  }
  if (options.requestId !== false) expect(answer.headers['x-request-id'], `x-request-id in ${where}`).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
}

export interface HttpRequest {
  method: string;
  /** The request target as written on the request line: a path, or an absolute URL. */
  target: string;
  /** Sent in this order; a name may repeat. */
  headers?: Record<string, string> | Array<[string, string]>;
  body?: string;
}

/**
 * The bytes of an HTTP/1.1 request, written as given (no encoding or normalising of the
 * target), with `Host`, `Connection: close` and, when there is a body, `Content-Length`
 * added unless the headers name them.
 */
export function httpBytes(port: number, request: HttpRequest): string {
  const headers = Array.isArray(request.headers) ? [...request.headers] : Object.entries(request.headers ?? {});
  const has = (name: string) => headers.some(([n]) => n.toLowerCase() === name);
  if (!has('host')) headers.unshift(['Host', `127.0.0.1:${port}`]);
  if (!has('connection')) headers.push(['Connection', 'close']);
  if (request.body !== undefined && !has('content-length') && !has('transfer-encoding')) headers.push(['Content-Length', String(Buffer.byteLength(request.body))]);
  return `${request.method} ${request.target} HTTP/1.1\r\n${headers.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n${request.body ?? ''}`;
}

/** Sends one request (see httpBytes) on a new connection and reads its answer. */
export function call(port: number, request: HttpRequest, options: RawOptions = {}): Promise<RawAnswer> {
  return raw(port, httpBytes(port, request), options);
}

/**
 * A client that goes away: writes `bytes` (typically the headers and part of a body), waits
 * `wait` (ms, or until the promise it returns settles), then resets the connection. A wait on
 * a promise is for something the service must do before it answers, so an answer that comes
 * first fails the call at once, quoting the answer; so does a wait that fails.
 */
export function abort(port: number, bytes: string, wait: number | (() => Promise<unknown>) = 100): Promise<void> {
  return new Promise((resolve, reject) => {
    const received: Buffer[] = [];
    // The first of: the wait ends, the wait fails, an answer arrives during a promised wait,
    // a socket error. Whatever comes after it is ignored.
    let settled = false;
    const first =
      <A extends unknown[]>(then: (...args: A) => void) =>
      (...args: A): void => {
        if (settled) return;
        settled = true;
        then(...args);
      };
    const fail = first((error: unknown) => {
      socket.destroy();
      const message = error instanceof Error ? error.message : String(error);
      const answer = Buffer.concat(received).toString('latin1').slice(0, 500);
      reject(new Error(received.length > 0 ? `${message}; the service answered: ${answer}` : `${message}; no answer yet`));
    });
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.write(bytes);
      const waited = typeof wait === 'number' ? new Promise((done) => setTimeout(done, wait)) : wait();
      waited.then(
        first(() => {
          socket.resetAndDestroy();
          resolve();
        }),
        fail,
      );
    });
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      if (typeof wait !== 'number') fail(new Error('answered before the wait ended'));
    });
    socket.on('error', fail);
  });
}
