// Serves the contract: fastify-openapi-glue turns every operation of openapi/v1.yaml into
// a route under the contract's base path, with request validation and response
// serialization from the spec's schemas. Each route's hooks and handler come from glue's
// documented `operationResolver`, composed once at start-up: the operation's handler
// wrapped in its middleware (src/routes/middleware.ts).
import type { FastifyInstance, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import openapiGlue from 'fastify-openapi-glue';
import type { Handler, OperationId } from '../contract/handler.js';
import { composeRoute, untyped, type ComposedRoute, type OperationMiddleware } from './middleware.js';
import { basePath, operations, spec } from '../contract/spec.js';
import { OPERATION_BODY_LIMITS } from '../errors/media-type.js';
import { closeUnlessReceived, STREAMED_MEDIA_TYPES } from './json-body.js';

/**
 * The route's path as Fastify's router reads it: `{name}` a parameter (`:name`), and a
 * literal `:` (a custom method, `/pets:batchCreate`) written `::`, which find-my-way reads
 * as a colon rather than as the start of a parameter.
 */
export const routeUrl = (path: string): string => path.replaceAll(':', '::').replace(/{(\w+)}/g, ':$1');

export interface ContractOptions {
  /** One handler per operation (generated/handlers.ts), given the app's instance: what its feature plugins decorated it with. */
  handlers: { readonly [K in OperationId]: Handler<K> };
  /** Applied to every operation, outermost first. */
  middleware: readonly OperationMiddleware[];
}

export default fp(
  async function contract(fastify: FastifyInstance, { handlers, middleware }: ContractOptions) {
    const routes = new Map<string, ComposedRoute & { url: string; bodyLimit?: number }>(
      operations.map((operation) => {
        const handler = handlers[operation.operationId] as Handler<OperationId>;
        const composed = composeRoute(operation, untyped((input) => handler(input, fastify)), middleware);
        const bodyLimit = OPERATION_BODY_LIMITS[operation.operationId];
        return [operation.operationId, { ...composed, url: routeUrl(operation.path), ...(bodyLimit === undefined ? {} : { bodyLimit }) }];
      }),
    );
    // A streamed body (createPetImport's CSV or NDJSON) reaches its handler unread, as a
    // stream (src/routes/json-body.ts): its rows are checked as they are read, so its media
    // types take any value here (the contract's schema for them is the text, a string).
    // Such a route closes the connection when it answers before the body was all received.
    fastify.addHook('onRoute', (route) => {
      const content = (route.schema?.body as { content?: Record<string, unknown> } | undefined)?.content;
      if (!content || !STREAMED_MEDIA_TYPES.some((media) => content[media] !== undefined)) return;
      for (const media of STREAMED_MEDIA_TYPES) if (content[media] !== undefined) content[media] = { schema: {} };
      route.onSend = [...(route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend]), closeUnlessReceived];
    });
    await fastify.register(openapiGlue, {
      specification: spec,
      prefix: basePath,
      // glue adds what this returns to the route it built (method, url, schema), "overriding
      // any already existing properties" (its docs/operationResolver.md); its type asks for
      // a whole RouteOptions all the same. The url is ours: glue's keeps a literal `:`,
      // which the router would read as a parameter.
      operationResolver: (operationId: string) => {
        const route = routes.get(operationId);
        if (!route) throw new Error(`No route composed for operation ${operationId}`);
        return route as unknown as RouteOptions;
      },
    });
  },
  // The error handler and the API's security headers apply to routes registered after them.
  { name: 'contract', dependencies: ['errors', 'api-security-headers', 'api-keys', 'catalogue', 'store', 'events', 'pagination', 'idempotency-keys'] },
);
