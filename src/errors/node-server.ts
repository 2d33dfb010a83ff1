// The Node HTTP/1 server Fastify runs on (its `serverFactory`), built as Fastify builds its
// own (node:http's options, then keepAliveTimeout and requestTimeout: fastify/lib/server.js),
// and in front of Fastify the answers to requests Fastify must not see
// (src/errors/raw-answers.ts):
// - an HTTP/1.1 request without Host, or any with several Host fields (RFC 9112 §3.2): 400. Node's own check (`requireHostHeader`) answers
//   with a bare 400, so it is off and this takes its place. Here, in front of Fastify, it
//   is one check for every request: Fastify's framework errors (a path not validly
//   percent-encoded) fire before any hook could make it;
// - a transfer coding other than chunked: 400;
// - an Expect other than 100-continue ('checkExpectation'): 417;
// - CONNECT ('connect', which Node closes unanswered): 400.
//
// With a server factory, Fastify listening on `localhost` binds the first address it
// resolves to only (it binds the others, 127.0.0.1 and ::1, only with servers of its own
// making). HOST is an address everywhere this service runs (127.0.0.1, 0.0.0.0).
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyServerFactory } from 'fastify';
import { answerConnect, answerExpectationFailed, answerRequestProblem, codingProblem, hostProblem, type AnswerLog } from './raw-answers.js';

export interface NodeServerSettings {
  /** node:http's options (header and request timeouts, their checking interval, Host). */
  http: ServerOptions;
  keepAliveTimeout: number;
  requestTimeout: number;
  /** Where the answers written here are logged: the service's logger. */
  log: AnswerLog;
}

export function nodeServer(settings: NodeServerSettings): FastifyServerFactory<Server> {
  const { log } = settings;
  return (fastify) => {
    const handle = (request: IncomingMessage, response: ServerResponse): void => {
      const problem = hostProblem(request) ?? codingProblem(request);
      if (problem === undefined) fastify(request, response);
      else answerRequestProblem(log, request, response, problem);
    };
    const server = createServer(settings.http, handle);
    // A request with `Expect: 100-continue` is handed over without `100 Continue`: it is
    // written after the operation's checks, as the body is about to be read
    // (src/middleware/expect-continue.ts).
    server.on('checkContinue', handle);
    server.keepAliveTimeout = settings.keepAliveTimeout;
    server.requestTimeout = settings.requestTimeout;
    server.on('checkExpectation', (request, response) => answerExpectationFailed(log, request, response));
    server.on('connect', (request: IncomingMessage, socket: Socket) => answerConnect(log, request, socket));
    return server;
  };
}
