// One error handler: every failure becomes the contract's Error body, with the status the
// contract declares for it. Nothing internal (stack, SQL, driver messages) reaches the
// client; unexpected errors are logged with the request id and answered with a generic 500.
// This plugin registers it, with the not-found handler (404, or 405 with Allow) and
// Fastify's framework errors (`frameworkErrors`, in src/app.ts's server options). Every
// answer is written by src/errors/answer.ts; answers made before Fastify has a reply
// (Node's parser errors, Expect, a missing Host) are in src/errors/raw-answers.ts.
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { payloadTooLarge, repeatedContentType, unsupportedMediaType } from './media-type.js';
import { basePath, declaredHeaderNames } from '../contract/spec.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { ApiError, errorBody, type ErrorCode, type ErrorDetail } from './catalogue.js';
import { allowedMethods, indexRoutes } from '../http/allowed-methods.js';
import { sendError } from './answer.js';
import { validationBody } from './validation-messages.js';

// Fastify's own errors (body parsing), as the catalogue's: the code, the message, and for a
// 400 about the body as a field, its details.
const EMPTY = 'is empty: send a JSON object';
const fastifyCodes: Record<string, [ErrorCode, string, ErrorDetail[]?]> = {
  FST_ERR_CTP_EMPTY_JSON_BODY: ['bad_request', `Body ${EMPTY}`, [{ location: 'body', field: '', rule: 'required', message: EMPTY }]],
  FST_ERR_CTP_INVALID_JSON_BODY: ['bad_request', 'Body is not valid JSON'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', 'Content-Type must be application/json'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['bad_request', 'Content-Length does not match the body'],
  FST_ERR_CTP_INVALID_TYPE: ['unsupported_media_type', 'Content-Type must be application/json'],
};

// @fastify/static (/docs/static): If-Match or If-Unmodified-Since not met, a Range past the
// end of the file; anything else a plugin raises with a 4xx status.
const genericCodes: Record<number, ErrorCode> = {
  400: 'bad_request',
  404: 'not_found',
  412: 'precondition_failed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  416: 'range_not_satisfiable',
};

function notFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const fullPath = request.url.split('?')[0] ?? '';
  const path = fullPath.slice(0, 200);
  const allowed = allowedMethods(request, fullPath);
  // A method the path takes that still found nothing (a static file that does not exist)
  // is a 404 like any other.
  if (allowed.length > 0 && !allowed.includes(request.method)) {
    return sendError(reply, errorBody('method_not_allowed', `${request.method} is not allowed on ${path}; it allows ${allowed.join(', ')}`), { allow: allowed.join(', ') });
  }
  return sendError(reply, errorBody('not_found', `No operation ${request.method} ${path}${hint(request, fullPath)}`));
}

/** What a client probably meant by a path that names no operation: its base URL without /v1, or a trailing slash. */
function hint(request: FastifyRequest, path: string): string {
  const takes = (candidate: string) => allowedMethods(request, candidate).includes(request.method);
  if (path !== basePath && !path.startsWith(`${basePath}/`) && takes(`${basePath}${path}`)) {
    return `; the API is under ${basePath}: ${request.method} ${basePath}${path.slice(0, 200)} (a client's base URL ends with ${basePath})`;
  }
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed !== path && trimmed !== '' && takes(trimmed)) return `; remove the trailing slash: ${request.method} ${trimmed.slice(0, 200)}`;
  return '';
}

/**
 * Errors Fastify raises before routing (`frameworkErrors`): a path that is not validly
 * percent-encoded, or a path segment over `maxParamLength`. Such a path names no operation
 * of the contract, so the answer is the contract's 404.
 */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    const why = error.code === 'FST_ERR_BAD_URL' ? 'it is not validly percent-encoded' : 'a path segment is too long';
    return sendError(reply, errorBody('not_found', `No operation at this path: ${why}`));
  }
  return handleError(error, request, reply);
}

export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // A route the contract does not have is a 404, even when its body could not be parsed
  // (Fastify parses bodies of unknown OPTIONS/DELETE/... requests before routing to 404).
  if (request.is404) return notFound(request, reply);
  if (error.validation) return sendError(reply, validationBody(error, declaredHeaderNames));
  // Ours: hooks, parsers and plugins raise ApiError (src/errors/catalogue.ts).
  if (error instanceof ApiError) return sendError(reply, error.body, error.headers);

  // The client went away mid-request (the request stream failed with this very error): not
  // an outage, nor anything to warn an operator about. Nobody reads the answer; the access
  // log (src/http/access-log.ts) writes the request's one line, with this error.
  if (request.raw.errored === error) return sendError(reply, errorBody('bad_request', 'The request was not received completely'));

  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: { message: error.message, code: error.code } }, 'database unavailable');
    return sendError(reply, errorBody('unavailable', 'Service temporarily unavailable, retry later'));
  }

  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendError(reply, payloadTooLarge(request).body);
  const known = error.code ? fastifyCodes[error.code] : undefined;
  if (known?.[0] === 'unsupported_media_type') {
    const repeated = repeatedContentType(request);
    if (repeated) return sendError(reply, repeated.body);
    return sendError(reply, unsupportedMediaType(request).body);
  }
  if (known) return sendError(reply, errorBody(known[0], known[1], known[2]));
  // @fastify/static refuses a path that climbs out of /docs/static with 403: there is
  // nothing to forbid, only no such page.
  if (error.statusCode === 403) return notFound(request, reply);

  // Other plugins' client errors (@fastify/static's 412 and 416) keep their status, with
  // the catalogue's code for it and HTTP's wording.
  const status = error.statusCode ?? 500;
  const code = status >= 400 && status < 500 ? (genericCodes[status] ?? 'bad_request') : undefined;
  if (code !== undefined) {
    // A 416 says how long the file is (RFC 9110 §15.5.17), as @fastify/send put it.
    const range = status === 416 ? (error as FastifyError & { headers?: Record<string, string> }).headers?.['Content-Range'] : undefined;
    return sendError(reply, { ...errorBody(code, STATUS_CODES[status] ?? 'Bad request'), status }, range ? { 'content-range': range } : {});
  }
  if (status === 503) return sendError(reply, errorBody('unavailable', 'Service temporarily unavailable, retry later'));

  request.log.error({ err: error }, 'unexpected error');
  return sendError(reply, errorBody('internal', 'Internal server error'));
}

export default fp(
  async function errors(fastify: FastifyInstance) {
    fastify.setErrorHandler(handleError);
    fastify.setNotFoundHandler(notFound);
    indexRoutes(fastify);
  },
  { name: 'errors' },
);
