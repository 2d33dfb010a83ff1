// Answers written before Fastify has a reply to write them with, through the raw writers of
// src/errors/answer.ts, so that they keep the contract's shape and headers:
// - Node's HTTP parser refused the bytes (Fastify's `clientErrorHandler`);
// - Node's 'checkExpectation': an Expect other than 100-continue;
// - an HTTP/1.1 request without Host.
// The last two are requests Node hands over whole; src/errors/node-server.ts answers them
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
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return errorBody('request_timeout', 'The request did not arrive in time');
  if (error.code === 'HPE_HEADER_OVERFLOW') return errorBody('headers_too_large', 'Request line and headers are larger than 16 KiB');
  return errorBody('bad_request', 'Malformed HTTP request');
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
 * An HTTP/1.1 request without Host, which RFC 9112 §3.2 answers with 400 (HTTP/1.0 has no
 * Host rule).
 */
export function lacksHost(request: IncomingMessage): boolean {
  return request.headers.host === undefined && request.httpVersionMajor === 1 && request.httpVersionMinor === 1;
}

/** The 400 for a request `lacksHost`. The request never reaches Fastify. */
export function answerHostRequired(log: AnswerLog, request: IncomingMessage, response: ServerResponse): void {
  const id = requestIdOf(request);
  const body = errorBody('bad_request', 'An HTTP/1.1 request must carry a Host header');
  log.info({ reqId: id, status: body.status }, 'request without Host');
  writeError(response, body, id);
}
