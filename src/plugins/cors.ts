// CORS (@fastify/cors), off unless CORS_ORIGINS lists the browser origins allowed to call
// the API. Bearer keys are sent in a header, never as cookies, so credentials stay off.
// What a browser may send and read follows the contract: every operation's method, every
// header parameter (If-Match, Idempotency-Key, ...) and every header an answer declares
// (ETag, Location, the rate-limit headers, ...). An OPTIONS that is not a preflight (no
// Origin or Access-Control-Request-Method) is not answered as one: it gets what any other
// method would (405 with Allow, or 404). A preflight for a path no route has is answered,
// so that the browser reads the 404 and its hint.
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { headerParameters, operations } from '../contract/spec.js';

const unique = (names: Iterable<string>): string[] => [...new Set(names)];

const CORS_METHODS = unique(['HEAD', ...operations.map((o) => o.method)]);
const CORS_ALLOWED_HEADERS = unique(['Authorization', 'Content-Type', 'X-Request-Id', 'traceparent', 'tracestate', ...operations.flatMap(headerParameters)]);
const CORS_EXPOSED_HEADERS = unique([
  'X-Request-Id',
  'WWW-Authenticate',
  ...operations.flatMap((o) => Object.values(o.responses).flatMap((r) => r.headers.map((h) => h.name))).filter((name) => name.toLowerCase() !== 'content-type'),
]);

export default fp(
  async function crossOrigin(fastify: FastifyInstance, { origins }: { origins?: string }) {
    if (!origins) return;
    const options: FastifyCorsOptions = { origin: origins.split(','), methods: CORS_METHODS, allowedHeaders: CORS_ALLOWED_HEADERS, exposedHeaders: CORS_EXPOSED_HEADERS, maxAge: 600 };
    const notPreflight: FastifyCorsOptions = { ...options, origin: false };
    const preflight = (request: FastifyRequest): boolean => Boolean(request.headers.origin && request.headers['access-control-request-method']);
    await fastify.register(cors, () => (request: FastifyRequest, callback: (error: Error | null, options: FastifyCorsOptions) => void) => {
      callback(null, request.method === 'OPTIONS' && !preflight(request) ? notPreflight : options);
    });
  },
  { name: 'cors', dependencies: ['api-security-headers'] },
);
