// Adapts a typed handler (src/contract/handler.ts) to the (request, reply) function that
// fastify-openapi-glue calls. The casts are sound: glue validated params, query and body
// against the same contract the types were generated from, before the handler runs.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Handler, HandlerInput, OperationId, RequestContext } from './handler.js';

export function bind<K extends OperationId, S>(handler: Handler<K, S>, services: S) {
  return async function serve(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const context: RequestContext = {};
    if (request.apiKey) context.apiKeyId = request.apiKey.id;
    if (request.idempotency) context.idempotency = request.idempotency;
    const input = { params: request.params, query: request.query, body: request.body, context } as HandlerInput<K>;
    const result = await handler(input, services);
    reply.code(result.status);
    if (result.headers) reply.headers(result.headers);
    return result.body;
  };
}
