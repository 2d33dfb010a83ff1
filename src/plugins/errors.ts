// One error handler: every failure becomes the contract's Error body, with the status the
// contract declares for it. Nothing internal (stack, SQL, driver messages) reaches the
// client; unexpected errors are logged with the request id and answered with a generic 500.
// Answers made before routing live here too: Node's HTTP parser errors (clientErrorHandler),
// Fastify's framework errors and the not-found handler, so that every answer the process
// writes keeps the contract's shape and headers.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { SecurityError } from 'fastify-openapi-glue';
import { BearerError } from '../auth/bearer.js';
import { repeatedContentType } from '../contract/json-body.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { ContractError, errorBody, isErrorCode, type ErrorBody, type ErrorCode, type ErrorDetail } from '../errors.js';
import { givenRequestId, requestIdOf } from '../http-message.js';
import { API_SECURITY_HEADERS } from './security-headers.js';

const RETRY_AFTER_SECONDS = '1';

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

const locations: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };
const nouns: Record<string, string> = { body: 'body', query: 'query parameter', path: 'path parameter', header: 'header' };

function validationBody(error: FastifyError): ErrorBody {
  const location = locations[error.validationContext ?? 'body'] ?? 'body';
  const details: ErrorDetail[] = (error.validation as AjvError[]).map((v) => {
    let pointer = v.instancePath;
    if (v.keyword === 'required' && v.params.missingProperty !== undefined) pointer += `/${String(v.params.missingProperty)}`;
    if (v.keyword === 'additionalProperties') pointer += `/${String(v.params.additionalProperty)}`;
    const field = location === 'body' ? pointer : pointer.replace(/^\//, '');
    let message = v.message ?? 'is invalid';
    if (v.keyword === 'additionalProperties') message = `must NOT have the unknown property '${String(v.params.additionalProperty)}'`;
    if (v.keyword === 'enum' && Array.isArray(v.params.allowedValues)) message += `: ${v.params.allowedValues.join(', ')}`;
    return { location, field, rule: v.keyword, message };
  });
  const first = details[0];
  const summary = first ? `${nouns[location]}${first.field ? ` ${first.field}` : ''}: ${first.message}` : 'Invalid request';
  return errorBody('bad_request', 400, summary, details);
}

const fastifyCodes: Record<string, [ErrorCode, number, string]> = {
  FST_ERR_CTP_EMPTY_JSON_BODY: ['bad_request', 400, 'Body is empty; send a JSON object'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['bad_request', 400, 'Body is not valid JSON'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['payload_too_large', 413, 'Request body is larger than the limit'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', 415, 'Content-Type must be application/json'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['bad_request', 400, 'Content-Length does not match the body'],
  FST_ERR_CTP_INVALID_TYPE: ['unsupported_media_type', 415, 'Content-Type must be application/json'],
};

const genericCodes: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  404: 'not_found',
  // @fastify/static (/docs/static): If-Match or If-Unmodified-Since not met, a Range past
  // the end of the file.
  412: 'precondition_failed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  416: 'range_not_satisfiable',
  429: 'rate_limited',
  501: 'not_implemented',
  503: 'unavailable',
};

// The JSON set even under /docs, where helmet's page headers were set first: an error is
// JSON, never a page.
function send(reply: FastifyReply, body: ErrorBody, headers: Record<string, string> = {}): FastifyReply {
  return reply.code(body.status).headers(API_SECURITY_HEADERS).headers(headers).type('application/json; charset=utf-8').send(body);
}

// glue's package types SecurityError as an interface only, so it is recognised by shape.
function isSecurityError(error: unknown): error is SecurityError {
  return error instanceof Error && Array.isArray((error as Partial<SecurityError>).errors);
}

function notFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0]?.slice(0, 200) ?? '';
  return send(reply, errorBody('not_found', 404, `No operation ${request.method} ${path}`));
}

/** What Node's parser error means, as the contract's error. */
function clientErrorBody(error: NodeJS.ErrnoException): ErrorBody {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return errorBody('request_timeout', 408, 'The request did not arrive in time');
  if (error.code === 'HPE_HEADER_OVERFLOW') return errorBody('headers_too_large', 431, 'Request line and headers are larger than 16 KiB');
  return errorBody('bad_request', 400, 'Malformed HTTP request');
}

/** The head of an answer written without Fastify: the JSON and security headers, and the id. */
function answerHeaders(json: string, id: string): Record<string, string> {
  return { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(json)), 'x-request-id': id, ...API_SECURITY_HEADERS };
}

// Node's in-flight answer on a connection. Private, but it is what Node's own default
// clientError handling reads to decide whether an answer may be written.
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

// Connections whose error answer waits for an earlier answer; the parser repeats its error
// on every further chunk meanwhile.
const waiting = new WeakSet<Socket>();

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the bytes (a bad header line,
 * conflicting lengths, headers over the limit, too slow, a bad chunk), so there is no reply
 * to send through; the answer is written to the socket, which is then closed.
 * - On a keep-alive connection whose earlier answers are written, the error is answered
 *   like on a new one.
 * - While an earlier (pipelined) request's answer is still being written, the error answer
 *   waits for it: written first, it would be read as the earlier request's answer.
 * - When the error broke off a request whose headers were read (a body that stalls or is
 *   badly chunked), the answer carries that request's id, as its log lines do; when no
 *   request was read, an id of its own, so that the log line can be found.
 */
export function handleClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || waiting.has(socket)) return;
  const response = (socket as HttpSocket)._httpMessage ?? undefined;
  if (response?.req.complete) {
    waiting.add(socket);
    response.once('close', () => {
      waiting.delete(socket);
      handleClientError.call(this, error, socket);
    });
    return;
  }
  const body = clientErrorBody(error);
  const id = (response && givenRequestId(response.req)) ?? randomUUID();
  this.log.info({ reqId: id, code: error.code, status: body.status }, 'client error before routing');
  // An answer already under way cannot be followed by another: the connection is only closed.
  if (socket.writable && !response?.headersSent) {
    const json = JSON.stringify(body);
    const headers = Object.entries(answerHeaders(json, id)).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.write(`HTTP/1.1 ${body.status} ${STATUS_CODES[body.status] ?? ''}\r\n${headers}connection: close\r\n\r\n${json}`);
  }
  socket.destroy(error);
}

/**
 * A request read while an earlier answer on its connection is pending (pipelining) waits
 * for the answers before it, then is processed, or not at all if the connection is
 * closing; any other request goes on at once (this runs on every request). Node hands
 * pipelined requests over as soon as it reads them, but RFC 9112 §9.3.2 allows processing
 * them in parallel only when all are safe, and a server that closes the connection after
 * an earlier answer (`Connection: close`, as Fastify sends after a refused body) must not
 * process the requests after it (§9.6): a createPet would be stored with an answer that
 * is never sent, and then sent again.
 */
export function awaitTurn(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
  const socket = request.raw.socket as HttpSocket;
  // Read after the connection's answers ended (an answer with Connection: close went out
  // before these bytes were parsed). (`=== false`: inject's socket has no `writable`.)
  if (socket.writable === false) {
    request.log.info('request not processed: its connection closed before its turn');
    reply.hijack();
    return;
  }
  const pending = socket._httpMessage;
  if (pending === undefined || pending === null || pending === reply.raw) return done();
  pending.once('close', () => awaitTurn(request, reply, done));
}

/**
 * Node's 'checkExpectation': an HTTP/1.1 request whose Expect is not 100-continue, which
 * Node would answer with a bare 417. RFC 9110 §10.1.1 allows 417; this one has the Error
 * body. The request never reaches Fastify.
 */
export function handleExpectation(this: FastifyInstance, request: IncomingMessage, response: ServerResponse): void {
  const id = requestIdOf(request);
  const body = errorBody('expectation_failed', 417, 'Expect is not supported other than 100-continue');
  this.log.info({ reqId: id, status: body.status }, 'unsupported Expect');
  const json = JSON.stringify(body);
  response.writeHead(body.status, answerHeaders(json, id)).end(json);
}

/**
 * An HTTP/1.1 request without Host (RFC 9112 §3.2: a 400). Node's own check
 * (`requireHostHeader`) would answer with a bare 400, so it is off and this takes its place.
 */
export function hostRequired(request: IncomingMessage): ContractError | undefined {
  if (request.httpVersionMajor !== 1 || request.httpVersionMinor !== 1) return undefined;
  return new ContractError(errorBody('bad_request', 400, 'An HTTP/1.1 request must carry a Host header'));
}

/**
 * Errors Fastify raises before routing (`frameworkErrors`): a path that is not validly
 * percent-encoded, or a path segment over `maxParamLength`. Such a path names no operation
 * of the contract, so the answer is the contract's 404.
 */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.header('x-request-id', request.id);
  const noHost = request.raw.headers.host === undefined ? hostRequired(request.raw) : undefined;
  if (noHost) return send(reply, noHost.body);
  if (error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    const why = error.code === 'FST_ERR_BAD_URL' ? 'it is not validly percent-encoded' : 'a path segment is too long';
    return send(reply, errorBody('not_found', 404, `No operation at this path: ${why}`));
  }
  return handleError(error, request, reply);
}

export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // A route the contract does not have is a 404, even when its body could not be parsed
  // (Fastify parses bodies of unknown OPTIONS/DELETE/... requests before routing to 404).
  if (request.is404) return notFound(request, reply);
  if (error.validation) return send(reply, validationBody(error));
  if (error instanceof ContractError) return send(reply, error.body);

  if (isSecurityError(error)) {
    // glue wraps what the scheme handler threw; a database failure is not a bad key.
    const causes: unknown[] = error.errors;
    const refused = causes.find((c): c is BearerError => c instanceof BearerError);
    const other = causes.find((c) => !(c instanceof BearerError));
    if (other !== undefined) return handleError(other as FastifyError, request, reply);
    return send(reply, errorBody('unauthorized', 401, refused?.message ?? 'Missing or invalid API key'), {
      'www-authenticate': refused?.challenge ?? 'Bearer realm="animal-store"',
    });
  }

  // The client went away mid-request (the request stream failed with this very error): not
  // an outage, nor anything to warn an operator about. Nobody reads the answer; the access
  // log (src/access-log.ts) writes the request's one line, with this error.
  if (request.raw.errored === error) return send(reply, errorBody('bad_request', 400, 'The request was not received completely'));

  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: { message: error.message, code: error.code } }, 'database unavailable');
    return send(reply, errorBody('unavailable', 503, 'Service temporarily unavailable, retry later'), { 'retry-after': RETRY_AFTER_SECONDS });
  }

  const known = error.code ? fastifyCodes[error.code] : undefined;
  if (known?.[1] === 415) {
    const repeated = repeatedContentType(request);
    if (repeated) return send(reply, repeated.body);
  }
  if (known) return send(reply, errorBody(known[0], known[1], known[2]));
  // @fastify/static refuses a path that climbs out of /docs/static with 403: there is
  // nothing to forbid, only no such page.
  if (error.statusCode === 403) return notFound(request, reply);

  // Errors from the catalogue (src/errors.ts) carry their code and status.
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    // Our own errors (src/errors.ts, the rate limiter) carry a code of the catalogue and a
    // message meant for clients; anything else gets a generic one. (@fastify/error upper-
    // cases codes.)
    const own = String(error.code ?? '').toLowerCase();
    if (isErrorCode(own)) return send(reply, errorBody(own, status, error.message));
    // A 416 says how long the file is (RFC 9110 §15.5.17), as @fastify/send put it.
    const range = status === 416 ? (error as FastifyError & { headers?: Record<string, string> }).headers?.['Content-Range'] : undefined;
    return send(reply, errorBody(genericCodes[status] ?? 'bad_request', status, STATUS_CODES[status] ?? 'Bad request'), range ? { 'content-range': range } : {});
  }
  if (status === 501 || status === 503) {
    const code = genericCodes[status] as ErrorCode;
    return send(reply, errorBody(code, status, error.message), status === 503 ? { 'retry-after': RETRY_AFTER_SECONDS } : {});
  }

  request.log.error({ err: error }, 'unexpected error');
  return send(reply, errorBody('internal', 500, 'Internal server error'));
}

export default fp(
  async function errors(fastify: FastifyInstance) {
    fastify.setErrorHandler(handleError);
    fastify.setNotFoundHandler(notFound);
    fastify.server.on('checkExpectation', handleExpectation.bind(fastify));
  },
  { name: 'errors' },
);
