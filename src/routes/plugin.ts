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

export interface ContractOptions {
  /** One handler per operation (generated/handlers.ts), given the app's instance: what its feature plugins decorated it with. */
  handlers: { readonly [K in OperationId]: Handler<K> };
  /** Applied to every operation, outermost first. */
  middleware: readonly OperationMiddleware[];
}

export default fp(
  async function contract(fastify: FastifyInstance, { handlers, middleware }: ContractOptions) {
    const routes = new Map<string, ComposedRoute>(
      operations.map((operation) => {
        const handler = handlers[operation.operationId] as Handler<OperationId>;
        return [operation.operationId, composeRoute(operation, untyped((input) => handler(input, fastify)), middleware)];
      }),
    );
    await fastify.register(openapiGlue, {
      specification: spec,
      prefix: basePath,
      // glue adds what this returns to the route it built (method, url, schema), "overriding
      // any already existing properties" (its docs/operationResolver.md); its type asks for
      // a whole RouteOptions all the same.
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
