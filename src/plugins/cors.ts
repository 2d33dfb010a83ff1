// CORS (@fastify/cors), off unless CORS_ORIGINS lists the browser origins allowed to call
// the API. Bearer keys are sent in a header, never as cookies, so credentials stay off.
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export default fp(
  async function crossOrigin(fastify: FastifyInstance, { origins }: { origins?: string }) {
    if (!origins) return;
    await fastify.register(cors, {
      origin: origins.split(','),
      methods: ['GET', 'POST'],
      allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id'],
      exposedHeaders: ['Location', 'X-Request-Id', 'Deprecation', 'Sunset', 'Link', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy', 'RateLimit', 'Idempotent-Replayed'],
      maxAge: 600,
    });
  },
  { name: 'cors', dependencies: ['api-security-headers'] },
);
