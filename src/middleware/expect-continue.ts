// `Expect: 100-continue` answered once the request may send its body. Node hands such a
// request over without writing `100 Continue` (src/errors/node-server.ts listens for
// 'checkContinue'). An operation that takes a body first checks, after its other onRequest
// hooks (the key, its scope, its rate-limit budget), the announced length against its limit
// (the route's; an import's, IMPORT_MAX_BYTES); then, on every route, `continueBeforeBody`
// writes 100 as the body is about to be read (preParsing), as Node would have at once. So a
// client that waits for 100 learns of a 401, 403, 429 or 413 before it sends its body (RFC
// 9110 §10.1.1), and any other route (a 404, a 405, an operation without a body) still
// gets its 100. HTTP/1.0 has no 1xx answers: none is written to it.
import type { FastifyRequest, onRequestHookHandler, preParsingHookHandler } from 'fastify';
import type { OperationMiddleware } from '../routes/middleware.js';
import { STREAMED_MEDIA_TYPES } from '../routes/json-body.js';
import { requestBodyOf } from '../contract/spec.js';
import { BODY_LIMIT, declaredMediaTypes, payloadTooLarge, streamTooLarge } from '../errors/media-type.js';

const STREAMED: ReadonlySet<string> = new Set(STREAMED_MEDIA_TYPES);
/** Node's own test of the Expect field (lib/_http_server.js). */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

/** Whether the request waits for `100 Continue` (HTTP/1.1 or later, `Expect: 100-continue`). */
function expectsContinue(request: FastifyRequest): boolean {
  const expect = request.headers.expect;
  return expect !== undefined && request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor >= 1 && CONTINUE.test(expect);
}

/** Root preParsing hook: `100 Continue` for a request that waits for it, as its body is about to be read. */
export const continueBeforeBody: preParsingHookHandler = (request, reply, payload, done) => {
  if (expectsContinue(request) && !reply.raw.headersSent) reply.raw.writeContinue();
  done(null, payload);
};

export function expectContinue(options: { streamedBodyLimit: number }): OperationMiddleware {
  const withinLimit: onRequestHookHandler = (request, _reply, done) => {
    if (!expectsContinue(request)) return done();
    const length = Number(request.headers['content-length']);
    if (declaredMediaTypes(request).some((type) => STREAMED.has(type))) {
      if (length > options.streamedBodyLimit) return done(streamTooLarge(options.streamedBodyLimit));
    } else if (length > (request.routeOptions.bodyLimit ?? BODY_LIMIT)) {
      return done(payloadTooLarge(request));
    }
    done();
  };
  return {
    name: 'expect-continue',
    hooks: (operation) => (requestBodyOf(operation) ? { onRequest: [withinLimit] } : undefined),
  };
}
