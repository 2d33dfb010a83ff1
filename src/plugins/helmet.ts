// Security headers for the HTML pages of /docs (@fastify/helmet). Helmet's default
// Content-Security-Policy suits Swagger UI: scripts from files on this host ('self'),
// inline styles (allowed by the default style-src) and data: images.
//
// Registered inside the docs plugin's own scope: @fastify/helmet rebuilds its middleware on
// every request (two hooks, CSP parsed each time), a cost the JSON API does not pay; its
// answers get the fixed set of src/http/security-headers.ts instead.
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export default fp(
  async function pageSecurityHeaders(fastify: FastifyInstance) {
    await fastify.register(helmet, {
      // HSTS is the TLS terminator's call.
      strictTransportSecurity: false,
    });
  },
  { name: 'page-security-headers' },
);
