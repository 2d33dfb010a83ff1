// Answers written before Fastify has a reply to write them with, through the raw writers of
// src/errors/answer.ts, so that they keep the contract's shape and headers:
// - Node's HTTP parser refused the bytes (Fastify's `clientErrorHandler`);
// - Node's 'checkExpectation': an Expect other than 100-continue;
// - an HTTP/1.1 request without Host, or a request with several; a transfer coding other
//   than chunked;
// - a CONNECT request (Node's 'connect').
// The last three are requests Node hands over whole; src/errors/node-server.ts answers them
// before Fastify sees them. Each is logged at info with the id its answer carries.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { errorBody, type ErrorBody } from './catalogue.js';
import { givenRequestId, requestIdOf } from '../http/message.js';
import { attachedResponse } from '../http/node-internals.js';
import { writeError, writeErrorToSocket } from './answer.js';

/** Where these answers are logged (the service's logger). */
export type AnswerLog = Pick<FastifyBaseLogger, 'info'>;

/** What Node's parser error means, as the contract's error. */
function clientErrorBody(error: NodeJS.ErrnoException): ErrorBody {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return errorBody('request_timeout', 'The request did not arrive in time: send its headers and body without pausing, then retry');
  if (error.code === 'HPE_HEADER_OVERFLOW') return errorBody('headers_too_large', 'Request line and headers are larger than 16 KiB');
  return errorBody('bad_request', 'Malformed HTTP request: send HTTP/1.1 as RFC 9112 defines it (one Content-Length or chunked, valid header lines)');
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
  if (socket.writable && !response?.headersSent) writeErrorToSocket(socket, body, id);
  socket.destroy(error);
}

/**
 * Node's 'checkExpectation': an HTTP/1.1 request whose Expect is not 100-continue, which
 * Node would answer with a bare 417. RFC 9110 §10.1.1 allows 417; this one has the Error
 * body. The request never reaches Fastify.
 */
export function answerExpectationFailed(log: AnswerLog, request: IncomingMessage, response: ServerResponse): void {
  const id = requestIdOf(request);
  const body = errorBody('expectation_failed', 'Expect is not supported other than 100-continue');
  log.info({ reqId: id, status: body.status }, 'unsupported Expect');
  writeError(response, body, id);
}

/**
 * What is wrong with a request's Host, which RFC 9112 §3.2 answers with 400: none in an
 * HTTP/1.1 request (HTTP/1.0 has no Host rule), or more than one in any (Node keeps the
 * first and drops the others unseen). Undefined when nothing is.
 */
export function hostProblem(request: IncomingMessage): string | undefined {
  if (request.headers.host === undefined) {
    return request.httpVersionMajor === 1 && request.httpVersionMinor === 1 ? 'An HTTP/1.1 request must carry a Host header' : undefined;
  }
  const raw = request.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
  }
  return hosts > 1 ? 'A request must carry one Host header, not several: send it once' : undefined;
}

/**
 * A transfer coding other than chunked (`gzip, chunked`), which Node's parser lets through
 * undecoded and RFC 9112 §6.1 has the server refuse; undefined when there is none.
 */
export function codingProblem(request: IncomingMessage): string | undefined {
  const coding = request.headers['transfer-encoding'];
  if (coding === undefined || coding === 'chunked') return undefined;
  const others = coding.split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== 'chunked' && c !== '');
  return others.length === 0 ? undefined : `Transfer-Encoding ${others.join(', ').slice(0, 64)} is not supported: send the body chunked alone, or with Content-Length`;
}

/** The 400 for a request with a `hostProblem` or a `codingProblem`. The request never reaches Fastify. */
export function answerRequestProblem(log: AnswerLog, request: IncomingMessage, response: ServerResponse, problem: string): void {
  const id = requestIdOf(request);
  const body = errorBody('bad_request', problem);
  log.info({ reqId: id, status: body.status }, 'request refused before routing');
  writeError(response, body, id);
}

/**
 * Node's 'connect': a CONNECT request, which Node would close unanswered. This service is no
 * proxy: 400, written to the socket after the answer to a request before it on the
 * connection (pipelined), then the socket is closed, whatever the client does (Node's HTTP
 * timeouts no longer apply to it).
 */
export function answerConnect(log: AnswerLog, request: IncomingMessage, socket: Socket): void {
  const id = requestIdOf(request);
  const body = errorBody('bad_request', 'CONNECT is not served: this is an HTTP API, not a proxy; send GET, POST, PUT, PATCH or DELETE to a path under /v1');
  log.info({ reqId: id, status: body.status }, 'CONNECT');
  const answer = (): void => {
    if (socket.writable) writeErrorToSocket(socket, body, id);
    socket.destroySoon();
  };
  const before = attachedResponse(socket);
  if (before && !before.writableFinished) before.once('close', answer);
  else answer();
}
