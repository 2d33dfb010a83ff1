// `Expect: 100-continue` answered once the request may send its body: Node hands such a
// request over without writing `100 Continue` (src/errors/node-server.ts listens for
// 'checkContinue'), and this hook, after the operation's other onRequest hooks (the key, its
// scope, its rate-limit budget), writes it when the announced length is within the body's
// limit (the route's; an import's, IMPORT_MAX_BYTES, for a streamed body). So a client that
// waits for 100 learns of a 401, 403, 429 or 413 before it sends its body (RFC 9110
// §10.1.1). Operations that take no body never write it: their answer comes without one.
import type { onRequestHookHandler } from 'fastify';
import type { OperationMiddleware } from '../routes/middleware.js';
import { STREAMED_MEDIA_TYPES } from '../routes/json-body.js';
import { requestBodyOf } from '../contract/spec.js';
import { BODY_LIMIT, payloadTooLarge, streamTooLarge } from '../errors/media-type.js';

const STREAMED: ReadonlySet<string> = new Set(STREAMED_MEDIA_TYPES);

export function expectContinue(options: { streamedBodyLimit: number }): OperationMiddleware {
  const continueWhenExpected: onRequestHookHandler = (request, reply, done) => {
    if (request.headers.expect === undefined) return done();
    const length = Number(request.headers['content-length']);
    const type = (request.headers['content-type'] ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
    if (STREAMED.has(type)) {
      if (length > options.streamedBodyLimit) return done(streamTooLarge(options.streamedBodyLimit));
    } else if (length > (request.routeOptions.bodyLimit ?? BODY_LIMIT)) {
      return done(payloadTooLarge(request));
    }
    reply.raw.writeContinue();
    done();
  };
  return {
    name: 'expect-continue',
    hooks: (operation) => (requestBodyOf(operation) ? { onRequest: [continueWhenExpected] } : undefined),
  };
}
