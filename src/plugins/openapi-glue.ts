// Serves the contract: fastify-openapi-glue turns every operation of openapi/v1.yaml into
// a route under the contract's base path, with request validation and response
// serialization from the spec's schemas.
import type { FastifyInstance, onRequestHookHandler, preValidationHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import openapiGlue from 'fastify-openapi-glue';
import { bearerAuth } from '../auth/bearer.js';
import type { ApiKeyVerifier } from '../auth/apiKeys.js';
import { basePath, bodyRequired, deprecationHeaders, spec } from '../contract/spec.js';
import type { ServiceHandlers } from '../handlers/index.js';

export interface ContractOptions {
  serviceHandlers: ServiceHandlers;
  apiKeys: ApiKeyVerifier;
}

// Fastify validates a body against the schema of its media type; a request with no body
// and no Content-Type has none, so the validator never runs. A required body is checked
// here instead, with the same 400 a validation failure gets.
const requireBody: preValidationHookHandler = (request, _reply, done) => {
  if (request.body !== undefined) return done();
  done(
    Object.assign(new Error('body is required'), {
      statusCode: 400,
      validationContext: 'body',
      validation: [{ keyword: 'required', instancePath: '', params: {}, message: 'a JSON body is required' }],
    }),
  );
};

function asArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

export default fp(
  async function contract(fastify: FastifyInstance, options: ContractOptions) {
    fastify.decorateRequest('apiKey', null);

    fastify.addHook('onRoute', (route) => {
      const operationId = (route.schema as { operationId?: string } | undefined)?.operationId;
      if (!operationId) return;
      const onRequest = asArray(route.onRequest as onRequestHookHandler | onRequestHookHandler[] | undefined);

      // Deprecated operations announce it on every answer, errors included, so the
      // headers are set before anything else can fail.
      const headers = deprecationHeaders.get(operationId);
      if (headers) {
        onRequest.unshift(function announceDeprecation(_request, reply, done) {
          reply.headers(headers);
          done();
        });
      }

      // glue runs security as a preHandler, i.e. after body parsing and validation; an
      // unauthenticated caller would then learn about validation before being refused.
      // The contract says 401 comes first, so authentication moves to onRequest.
      const security = route.preHandler;
      if (typeof security === 'function') {
        onRequest.push(security as unknown as onRequestHookHandler);
        route.preHandler = undefined;
      }
      route.onRequest = onRequest;

      if (bodyRequired.has(operationId)) {
        route.preValidation = [requireBody, ...asArray(route.preValidation as preValidationHookHandler | preValidationHookHandler[] | undefined)];
      }
    });

    await fastify.register(openapiGlue, {
      specification: spec,
      prefix: basePath,
      serviceHandlers: options.serviceHandlers,
      securityHandlers: { bearerAuth: bearerAuth(options.apiKeys) },
    });
  },
  { name: 'contract' },
);
