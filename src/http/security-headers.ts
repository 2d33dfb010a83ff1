// The security headers of everything the service answers as JSON (outside the /docs pages):
// the set OWASP's REST Security Cheat Sheet asks of an API. Nothing may be loaded, framed,
// sniffed or cached on the way, and no Referer leaks from a browser that opened a URL of
// ours. Set on every JSON route (the plugin below) and on every error answer, whoever writes
// it (src/errors/answer.ts). The HTML of /docs gets helmet's full set (src/plugins/helmet.ts).
// HSTS is the TLS terminator's call.
//
// Which routes get them is decided once per route, as it is registered: every route
// registered after the plugin, outside `pagesPrefix`. Answers made outside any route (not
// found, errors before routing) get them as every error answer does.
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';

export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
});

const setApiSecurityHeaders: onRequestHookHandler = (_request, reply, done) => {
  reply.headers(API_SECURITY_HEADERS);
  done();
};

export default fp(
  async function apiSecurityHeaders(fastify: FastifyInstance, { pagesPrefix }: { pagesPrefix: string }) {
    fastify.addHook('onRoute', (route) => {
      if (route.url === pagesPrefix || route.url.startsWith(`${pagesPrefix}/`)) return;
      // First, so that any answer a later hook makes (a 401, a 429) carries them.
      const hooks = route.onRequest;
      route.onRequest = [setApiSecurityHeaders, ...(hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks])];
    });
  },
  { name: 'api-security-headers' },
);
