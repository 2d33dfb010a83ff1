// Swagger UI at /docs over the same contract (@fastify/swagger in static mode). Its assets
// come from the package, never from a CDN, and its server list starts with this instance
// so that "Try it out" calls this service, not production.
//
// Not wrapped in fastify-plugin: helmet's hooks, registered here, apply to these pages only.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { OpenAPIV3 } from 'openapi-types';
import { requestOrigin, servedServers } from '../contract/served.js';
import { spec } from '../contract/spec.js';
import pageSecurityHeaders from './helmet.js';

/** Where the documentation pages are served. */
export const DOCS_PREFIX = '/docs';

export default async function docs(fastify: FastifyInstance, { publicUrl }: { publicUrl?: string }) {
  await fastify.register(pageSecurityHeaders);
  // The plugin's types know 2.0 and 3.0 documents only; it serves a 3.1 one unchanged.
  await fastify.register(swagger, { mode: 'static', specification: { document: spec as unknown as OpenAPIV3.Document } });
  await fastify.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    uiConfig: { deepLinking: true, displayOperationId: true, tryItOutEnabled: false, persistAuthorization: false },
    // The public validator badge would call a third-party host from every reader's browser.
    validatorUrl: false,
    transformSpecification: (document, request) => ({
      ...document,
      servers: servedServers(requestOrigin(publicUrl, request.protocol, request.host)),
    }),
    transformSpecificationClone: false,
  });
}
