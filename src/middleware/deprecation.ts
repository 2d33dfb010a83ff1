// Deprecated operations (`deprecated: true` in the contract) announce it on every answer,
// errors included, so the headers are set before anything else can fail: Deprecation
// (RFC 9745), Sunset (RFC 8594) and Link to the successor (RFC 8288), computed once from
// the contract. With metrics on, each call is counted by API key: who still calls it.
import type { FastifyRequest, onRequestHookHandler, onResponseHookHandler } from 'fastify';
import type { OperationMiddleware } from '../routes/middleware.js';
import { deprecationOf } from '../contract/spec.js';

export function deprecation(options: { onCall?: (operationId: string, request: FastifyRequest) => void } = {}): OperationMiddleware {
  return {
    name: 'deprecation',
    hooks(operation) {
      const deprecated = deprecationOf(operation);
      if (!deprecated) return undefined;
      const { headers, link } = deprecated;
      // The path parameters are the router's (not validated yet): the link uses them only
      // when they are plain values.
      const announce: onRequestHookHandler = link
        ? (request, reply, done) => {
            reply.headers(headers).header('link', link(request.params as Record<string, unknown>));
            done();
          }
        : (_request, reply, done) => {
            reply.headers(headers);
            done();
          };
      const { onCall } = options;
      if (!onCall) return { onRequest: [announce] };
      const count: onResponseHookHandler = (request, _reply, done) => {
        onCall(operation.operationId, request);
        done();
      };
      return { onRequest: [announce], onResponse: [count] };
    },
  };
}
