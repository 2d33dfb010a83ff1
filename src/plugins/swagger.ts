// Swagger UI at /docs over the same contract (@fastify/swagger in static mode). Its assets
// come from the package, never from a CDN, and its server list starts with this instance
// so that "Try it out" calls this service, not production.
//
// The page is the API's, not the plugin's: the contract's title in the browser tab, the
// API's own icon, and no top bar. That bar (Swagger UI's StandaloneLayout) holds only
// Fastify's logo and an "Explore" box showing /docs/json, which readers took for the
// address to use; BaseLayout is the same page without it.
//
// Redoc over the same document is at /docs/redoc (src/plugins/redoc.ts).
//
// Not wrapped in fastify-plugin: helmet's hooks, registered here, apply to these pages only.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { OpenAPIV3 } from 'openapi-types';
import { addVary } from '../http/vary.js';
import { requestOrigin, servedServers } from '../routes/served.js';
import { spec } from '../contract/spec.js';
import pageSecurityHeaders from './helmet.js';
import { redoc } from './redoc.js';

/** Where the documentation pages are served. */
export const DOCS_PREFIX = '/docs';
/** Where Redoc's page is served. */
export const REDOC_PATH = `${DOCS_PREFIX}/redoc`;

// A paw: the API's icon, for the tab (and as the logo, so that Fastify's is not shipped in
// the page's script even though BaseLayout never shows one).
const icon = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="#2f6f4f"/>' +
    '<g fill="#fff"><ellipse cx="32" cy="42" rx="13" ry="11"/><ellipse cx="16" cy="27" rx="5" ry="7"/><ellipse cx="25" cy="16" rx="5" ry="7"/>' +
    '<ellipse cx="39" cy="16" rx="5" ry="7"/><ellipse cx="48" cy="27" rx="5" ry="7"/></g></svg>',
);

export default async function docs(fastify: FastifyInstance, { publicUrl }: { publicUrl?: string }) {
  await fastify.register(pageSecurityHeaders);
  // The plugin's types know 2.0 and 3.0 documents only; it serves a 3.1 one unchanged.
  await fastify.register(swagger, { mode: 'static', specification: { document: spec as unknown as OpenAPIV3.Document } });
  await fastify.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    uiConfig: { layout: 'BaseLayout', deepLinking: true, displayOperationId: true, tryItOutEnabled: false, persistAuthorization: false },
    theme: {
      // Inserted into the page's <title> as it is: the contract's own title, plain text.
      title: spec.info.title,
      favicon: [{ filename: 'favicon.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: icon }],
    },
    logo: { type: 'image/svg+xml', content: icon },
    // The public validator badge would call a third-party host from every reader's browser.
    validatorUrl: false,
    transformSpecification: (document, request) => ({
      ...document,
      servers: servedServers(requestOrigin(publicUrl, request.protocol, request.host)),
    }),
    transformSpecificationClone: false,
  });
  // Its servers are the request's origin unless PUBLIC_URL is set: a cache keeps one per Host.
  if (!publicUrl) {
    fastify.addHook('onSend', async (request, reply) => {
      if (request.url.startsWith(`${DOCS_PREFIX}/json`) || request.url.startsWith(`${DOCS_PREFIX}/yaml`)) addVary(reply, 'Host');
    });
  }
  // The document Swagger UI reads (/docs/json, as transformed above) and the icon it serves.
  redoc(fastify, { path: REDOC_PATH, specUrl: `${DOCS_PREFIX}/json`, iconUrl: `${DOCS_PREFIX}/static/theme/favicon.svg`, title: spec.info.title });
}
