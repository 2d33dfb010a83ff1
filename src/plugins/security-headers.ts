// Security headers for everything the service answers outside /docs: JSON only, never a
// page (the set: src/http/security-headers.ts). The HTML of /docs gets helmet's full set
// (src/plugins/helmet.ts). HSTS is the TLS terminator's call.
//
// Which routes get them is decided once per route, as it is registered: every route
// registered after this plugin, outside `pagesPrefix`. Answers made outside any route (not
// found, errors before routing) get them as every error answer does (src/http/error-answer.ts).
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { API_SECURITY_HEADERS } from '../http/security-headers.js';

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
