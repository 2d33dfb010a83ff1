// Security headers (@fastify/helmet). Helmet's default Content-Security-Policy suits both
// the JSON API and /docs: Swagger UI loads its scripts from files on this host ('self'),
// uses inline styles (allowed by the default style-src) and data: images.
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export default fp(
  async function securityHeaders(fastify: FastifyInstance) {
    await fastify.register(helmet, {
      // An API answer is never a page to frame or sniff; HSTS is the TLS terminator's call.
      strictTransportSecurity: false,
    });
  },
  { name: 'security-headers' },
);
