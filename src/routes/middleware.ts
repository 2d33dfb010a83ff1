// Per-operation middleware, in the way of oapi-codegen's strict server: each operation's
// chain is composed once, at start-up, from what the contract says of that operation, so
// nothing asks per request which operation it is on. A middleware contributes either or
// both of:
// - route hooks (`hooks`), for what must happen around validation and the handler: before
//   validation (deprecation headers on every answer, the rate limit, authentication), or
//   once the answer is written (counting deprecated calls);
// - a wrapper around the typed handler (`wrap`), for what needs the handler's input and
//   answer (idempotency, read-your-writes). A wrapper that does not apply to an operation
//   returns `next` itself and costs that operation nothing.
// The first middleware of the list is the outermost: its hooks run first and its wrapper
// sees the request first.
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest, onRequestHookHandler, onResponseHookHandler, preValidationHookHandler } from 'fastify';
import type { ErrorBody } from '../errors/catalogue.js';
import { sendError } from '../errors/answer.js';
import { addVary } from '../http/vary.js';
import type { HandlerInput, HandlerResult, OperationId, RequestContext } from '../contract/handler.js';
import { Serialized } from '../db/serialized.js';
import { headerParameters, type OperationInfo } from '../contract/spec.js';

// What Fastify writes for a body it serializes as JSON; a serialized one gets the same.
const JSON_TYPE = 'application/json; charset=utf-8';

/** What any operation's handler receives, seen by middleware (untyped by operation). */
export interface OperationInput {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, string | undefined>;
  body: unknown;
  context: RequestContext;
}

/** What any operation's handler answers, seen by middleware. */
export interface OperationAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export type OperationHandler = (input: OperationInput) => Promise<OperationAnswer>;

export interface RouteHooks {
  onRequest?: onRequestHookHandler[];
  preValidation?: preValidationHookHandler[];
  onResponse?: onResponseHookHandler[];
}

export interface OperationMiddleware {
  /** Names it in errors and tests. */
  readonly name: string;
  /** Route hooks for this operation, or none. */
  hooks?(operation: OperationInfo): RouteHooks | undefined;
  /** The handler wrapped for this operation, or `next` itself when it does not apply. */
  wrap?(next: OperationHandler, operation: OperationInfo): OperationHandler;
}

/** A typed handler with its services bound, seen by middleware as untyped. */
export function untyped<K extends OperationId>(handler: (input: HandlerInput<K>) => Promise<HandlerResult<K>>): OperationHandler {
  // Sound: the route validated params, query, headers and body against the same contract
  // the types were generated from, and HandlerResult<K> is an OperationAnswer.
  return handler as unknown as OperationHandler;
}

export interface ComposedRoute extends Required<RouteHooks> {
  handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
}

/** The operation's route options: its middleware's hooks, and its wrapped handler adapted to Fastify. */
export function composeRoute(operation: OperationInfo, handler: OperationHandler, middleware: readonly OperationMiddleware[]): ComposedRoute {
  const route: Required<RouteHooks> = { onRequest: [], preValidation: [], onResponse: [] };
  for (const m of middleware) {
    const hooks = m.hooks?.(operation);
    route.onRequest.push(...(hooks?.onRequest ?? []));
    route.preValidation.push(...(hooks?.preValidation ?? []));
    route.onResponse.push(...(hooks?.onResponse ?? []));
  }
  const wrapped = middleware.reduceRight<OperationHandler>((next, m) => (m.wrap ? m.wrap(next, operation) : next), handler);
  return { ...route, handler: adapt(wrapped, headerParameters(operation)) };
}

/**
 * The Error body of an error answer (parsed back if it was given as its JSON). Sound: every
 * error status of the contract answers its Error body, typed so for handlers (errorAnswer),
 * and an answer the idempotency middleware replays is one a handler gave.
 */
function errorBodyOf(body: unknown): ErrorBody {
  return (body instanceof Serialized ? (JSON.parse(body.json) as unknown) : body) as ErrorBody;
}

/**
 * The (request, reply) function Fastify calls: the handler's input from the validated
 * request, its answer written to the reply (a serialized body as its text; an error answer
 * as every error answer is written). Header parameters are passed by the names the contract
 * gives them (Node's are lower case).
 */
function adapt(handler: OperationHandler, headerNames: readonly string[]) {
  const lowerCase = headerNames.map((name) => [name, name.toLowerCase()] as const);
  return async function serve(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const headers: Record<string, string | undefined> = {};
    for (const [name, lower] of lowerCase) {
      const value = request.headers[lower];
      if (typeof value === 'string') headers[name] = value;
    }
    const context: RequestContext = { log: request.log };
    if (request.headers.accept !== undefined) context.accept = request.headers.accept;
    // A streamed body (createPetImport's) comes with what its handler reads it by.
    if (request.body instanceof Readable) {
      if (request.mediaType !== undefined) context.mediaType = request.mediaType;
      const length = request.headers['content-length'];
      if (length !== undefined && /^\d+$/.test(length)) context.contentLength = Number(length);
    }
    if (request.apiKey) {
      context.apiKeyId = request.apiKey.id;
      context.apiKeyScopes = request.apiKey.scopes;
      context.apiKeyExpiresAt = request.apiKey.expiresAt;
      context.apiKeyPreviousSecret = request.apiKey.previousSecret;
      context.apiKeySecretHash = request.apiKey.secretHash;
    }
    const input: OperationInput = { params: request.params as Record<string, unknown>, query: request.query as Record<string, unknown>, headers, body: request.body, context };
    const answer = await handler(input);
    let answered = answer.headers as Record<string, string> | undefined;
    if (answered !== undefined && 'Vary' in answered) {
      // A handler's Vary (exportPets: Accept) joins the one a hook set (CORS: Origin).
      const { Vary: vary, ...others } = answered;
      addVary(reply, vary as string);
      answered = others;
    }
    if (answer.status >= 400) return sendError(reply, errorBodyOf(answer.body), answered);
    reply.code(answer.status);
    if (answered) reply.headers(answered);
    // A stream (exportPets) is sent as it is read, with the Content-Type the handler gave. To
    // HEAD it is not read at all (Fastify would drain it to send nothing).
    if (answer.body instanceof Readable) {
      if (request.method !== 'HEAD') return reply.send(answer.body);
      answer.body.destroy();
      return reply.send(Readable.from([]));
    }
    // A string with a JSON content type is sent as it is (Fastify serializes only objects).
    if (answer.body instanceof Serialized) {
      reply.type(JSON_TYPE);
      return answer.body.json;
    }
    return answer.body;
  };
}
