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
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { BODY_LIMIT, repeatedContentType } from '../contract/json-body.js';
import { declaredHeaderNames } from '../contract/spec.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { ApiError, errorBody, errorHeaders, type ErrorBody, type ErrorCode, type ErrorDetail } from '../errors.js';
import { givenRequestId, requestIdOf } from '../http-message.js';
import { attachedResponse } from '../node-internals.js';
import { API_SECURITY_HEADERS } from './security-headers.js';

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  /** The schema the rule belongs to (the validators compile with Ajv's `verbose`). */
  parentSchema?: { 'x-pattern-description'?: string };
}

const locations: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };
const nouns: Record<string, string> = { body: 'body', query: 'query parameter', path: 'path parameter', header: 'header' };

function validationBody(error: FastifyError): ErrorBody {
  const location = locations[error.validationContext ?? 'body'] ?? 'body';
  const details: ErrorDetail[] = (error.validation as AjvError[]).map((v) => {
    let pointer = v.instancePath;
    if (v.keyword === 'required' && v.params.missingProperty !== undefined) pointer += `/${String(v.params.missingProperty)}`;
    if (v.keyword === 'additionalProperties') pointer += `/${String(v.params.additionalProperty)}`;
    // A parameter by its name; a header by the name the contract gives it (Node's is lower case).
    const name = pointer.replace(/^\//, '');
    const field = location === 'body' ? pointer : location === 'header' ? (declaredHeaderNames.get(name) ?? name) : name;
    let message = v.message ?? 'is invalid';
    if (v.keyword === 'additionalProperties') message = `must NOT have the unknown property '${String(v.params.additionalProperty)}'`;
    if (v.keyword === 'enum' && Array.isArray(v.params.allowedValues)) message += `: ${v.params.allowedValues.join(', ')}`;
    // A pattern is said in words where the contract gives them, never as the expression.
    if (v.keyword === 'pattern') message = `must be ${v.parentSchema?.['x-pattern-description'] ?? 'in the format the contract gives'}`;
    return { location, field, rule: v.keyword, message };
  });
  const first = details[0];
  const summary = first ? `${nouns[location]}${first.field ? ` ${first.field}` : ''}: ${first.message}` : 'Invalid request';
  return errorBody('bad_request', summary, details);
}

// Fastify's own errors (body parsing), as the catalogue's.
const fastifyCodes: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_EMPTY_JSON_BODY: ['bad_request', 'Body is empty; send a JSON object'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['bad_request', 'Body is not valid JSON'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['payload_too_large', `Request body is larger than ${BODY_LIMIT} bytes`],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', 'Content-Type must be application/json'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['bad_request', 'Content-Length does not match the body'],
  FST_ERR_CTP_INVALID_TYPE: ['unsupported_media_type', 'Content-Type must be application/json'],
};

// @fastify/static (/docs/static): If-Match or If-Unmodified-Since not met, a Range past the
// end of the file; anything else a plugin raises with a 4xx status.
const genericCodes: Record<number, ErrorCode> = {
  400: 'bad_request',
  404: 'not_found',
  412: 'precondition_failed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  416: 'range_not_satisfiable',
};

/**
 * Writes an error answer: the body, the headers its code comes with (Retry-After), and the
 * JSON security headers, even under /docs where helmet's page headers were set first: an
 * error is JSON, never a page.
 */
export function sendError(reply: FastifyReply, body: ErrorBody, headers: Readonly<Record<string, string>> = errorHeaders(body.code)): FastifyReply {
  return reply.code(body.status).headers(API_SECURITY_HEADERS).headers(headers).type('application/json; charset=utf-8').send(body);
}
const send = sendError;

// Every route's path and methods, as the router knows them (filled as routes are
// registered), so that a path that exists with another method is told apart from one that
// does not exist: 405 with Allow (RFC 9110 §15.5.6), not 404. One index per app, found
// from any of its contexts (a decoration is inherited by them).
const ROUTES = Symbol('routes');
interface RouteIndex {
  router: FindMyWay.Instance<FindMyWay.HTTPVersion.V1>;
  methods: Set<HTTPMethod>;
}
type Indexed = FastifyInstance & { [ROUTES]?: RouteIndex };

function indexRoute(index: RouteIndex, route: { method: string | string[]; url: string }): void {
  // A catch-all route (CORS preflights: OPTIONS *) would make every path exist.
  if (route.url === '*') return;
  for (const method of [route.method].flat() as HTTPMethod[]) {
    index.methods.add(method);
    if (!index.router.hasRoute(method, route.url)) index.router.on(method, route.url, () => {});
  }
}

/** The methods a path answers, in a stable order (empty when no route has the path). */
function allowedMethods(request: FastifyRequest, path: string): string[] {
  const index = (request.server as Indexed)[ROUTES];
  if (!index) return [];
  return [...index.methods].filter((method) => index.router.find(method, path) !== null).sort();
}

function notFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const fullPath = request.url.split('?')[0] ?? '';
  const path = fullPath.slice(0, 200);
  const allowed = allowedMethods(request, fullPath);
  // A method the path takes that still found nothing (a static file that does not exist)
  // is a 404 like any other.
  if (allowed.length > 0 && !allowed.includes(request.method)) {
    return send(reply, errorBody('method_not_allowed', `${request.method} is not allowed on ${path}; it allows ${allowed.join(', ')}`), { allow: allowed.join(', ') });
  }
  return send(reply, errorBody('not_found', `No operation ${request.method} ${path}`));
}

/** What Node's parser error means, as the contract's error. */
function clientErrorBody(error: NodeJS.ErrnoException): ErrorBody {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return errorBody('request_timeout', 'The request did not arrive in time');
  if (error.code === 'HPE_HEADER_OVERFLOW') return errorBody('headers_too_large', 'Request line and headers are larger than 16 KiB');
  return errorBody('bad_request', 'Malformed HTTP request');
}

/** The head of an answer written without Fastify: the JSON and security headers, and the id. */
function answerHeaders(json: string, id: string): Record<string, string> {
  return { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(json)), 'x-request-id': id, ...API_SECURITY_HEADERS };
}

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
  // Node's in-flight answer on the connection (what its own default clientError reads).
  const response = attachedResponse(socket);
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
  const socket = request.raw.socket;
  // Read after the connection's answers ended (an answer with Connection: close went out
  // before these bytes were parsed). (`=== false`: inject's socket has no `writable`.)
  if (socket.writable === false) {
    request.log.info('request not processed: its connection closed before its turn');
    reply.hijack();
    return;
  }
  const pending = attachedResponse(socket);
  if (pending === undefined || pending === reply.raw) return done();
  pending.once('close', () => awaitTurn(request, reply, done));
}

/**
 * Node's 'checkExpectation': an HTTP/1.1 request whose Expect is not 100-continue, which
 * Node would answer with a bare 417. RFC 9110 §10.1.1 allows 417; this one has the Error
 * body. The request never reaches Fastify.
 */
export function handleExpectation(this: FastifyInstance, request: IncomingMessage, response: ServerResponse): void {
  const id = requestIdOf(request);
  const body = errorBody('expectation_failed', 'Expect is not supported other than 100-continue');
  this.log.info({ reqId: id, status: body.status }, 'unsupported Expect');
  const json = JSON.stringify(body);
  response.writeHead(body.status, answerHeaders(json, id)).end(json);
}

/**
 * An HTTP/1.1 request without Host (RFC 9112 §3.2: a 400). Node's own check
 * (`requireHostHeader`) would answer with a bare 400, so it is off and this takes its place.
 */
export function hostRequired(request: IncomingMessage): ApiError | undefined {
  if (request.httpVersionMajor !== 1 || request.httpVersionMinor !== 1) return undefined;
  return new ApiError('bad_request', 'An HTTP/1.1 request must carry a Host header');
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
    return send(reply, errorBody('not_found', `No operation at this path: ${why}`));
  }
  return handleError(error, request, reply);
}

export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // A route the contract does not have is a 404, even when its body could not be parsed
  // (Fastify parses bodies of unknown OPTIONS/DELETE/... requests before routing to 404).
  if (request.is404) return notFound(request, reply);
  if (error.validation) return send(reply, validationBody(error));
  // Ours: hooks, parsers and plugins raise ApiError (src/errors.ts).
  if (error instanceof ApiError) return send(reply, error.body, error.headers);

  // The client went away mid-request (the request stream failed with this very error): not
  // an outage, nor anything to warn an operator about. Nobody reads the answer; the access
  // log (src/access-log.ts) writes the request's one line, with this error.
  if (request.raw.errored === error) return send(reply, errorBody('bad_request', 'The request was not received completely'));

  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: { message: error.message, code: error.code } }, 'database unavailable');
    return send(reply, errorBody('unavailable', 'Service temporarily unavailable, retry later'));
  }

  const known = error.code ? fastifyCodes[error.code] : undefined;
  if (known?.[0] === 'unsupported_media_type') {
    const repeated = repeatedContentType(request);
    if (repeated) return send(reply, repeated.body);
  }
  if (known) return send(reply, errorBody(known[0], known[1]));
  // @fastify/static refuses a path that climbs out of /docs/static with 403: there is
  // nothing to forbid, only no such page.
  if (error.statusCode === 403) return notFound(request, reply);

  // Other plugins' client errors (@fastify/static's 412 and 416) keep their status, with
  // the catalogue's code for it and HTTP's wording.
  const status = error.statusCode ?? 500;
  const code = status >= 400 && status < 500 ? (genericCodes[status] ?? 'bad_request') : undefined;
  if (code !== undefined) {
    // A 416 says how long the file is (RFC 9110 §15.5.17), as @fastify/send put it.
    const range = status === 416 ? (error as FastifyError & { headers?: Record<string, string> }).headers?.['Content-Range'] : undefined;
    return send(reply, { ...errorBody(code, STATUS_CODES[status] ?? 'Bad request'), status }, range ? { 'content-range': range } : {});
  }
  if (status === 503) return send(reply, errorBody('unavailable', 'Service temporarily unavailable, retry later'));

  request.log.error({ err: error }, 'unexpected error');
  return send(reply, errorBody('internal', 'Internal server error'));
}

export default fp(
  async function errors(fastify: FastifyInstance) {
    fastify.setErrorHandler(handleError);
    fastify.setNotFoundHandler(notFound);
    const index: RouteIndex = { router: FindMyWay(), methods: new Set() };
    fastify.decorate(ROUTES, index);
    fastify.addHook('onRoute', (route) => indexRoute(index, route));
    fastify.server.on('checkExpectation', handleExpectation.bind(fastify));
  },
  { name: 'errors' },
);
