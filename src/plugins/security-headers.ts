// Security headers for everything the service answers outside /docs: JSON only, never a
// page. The set is the one OWASP's REST Security Cheat Sheet asks of an API: nothing may be
// loaded, framed, sniffed or cached on the way, and no Referer leaks from a browser that
// opened a URL of ours. (The HTML of /docs gets helmet's full set: src/plugins/helmet.ts.)
// HSTS is the TLS terminator's call.
//
// Fixed values, set in one synchronous hook: this runs on every request.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** Also set on every error answer, whoever made it (src/plugins/errors.ts). */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
});

export default fp(
  async function apiSecurityHeaders(fastify: FastifyInstance, { pagesPrefix }: { pagesPrefix: string }) {
    const page = new RegExp(`^${pagesPrefix}(?:[/?]|$)`);
    fastify.addHook('onRequest', (request, reply, done) => {
      if (!page.test(request.url)) reply.headers(API_SECURITY_HEADERS);
      done();
    });
  },
  { name: 'api-security-headers' },
);
