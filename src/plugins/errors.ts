// One error handler: every failure becomes the contract's Error body, with the status the
// contract declares for it. Nothing internal (stack, SQL, driver messages) reaches the
// client; unexpected errors are logged with the request id and answered with a generic 500.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { SecurityError } from 'fastify-openapi-glue';
import { BearerError } from '../auth/bearer.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { errorBody, isErrorCode, type ErrorBody, type ErrorCode, type ErrorDetail } from '../errors.js';

const RETRY_AFTER_SECONDS = '1';

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

const locations: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };
const nouns: Record<string, string> = { body: 'body', query: 'query parameter', path: 'path parameter', header: 'header' };

function validationBody(error: FastifyError): ErrorBody {
  const location = locations[error.validationContext ?? 'body'] ?? 'body';
  const details: ErrorDetail[] = (error.validation as AjvError[]).map((v) => {
    let pointer = v.instancePath;
    if (v.keyword === 'required' && v.params.missingProperty !== undefined) pointer += `/${String(v.params.missingProperty)}`;
    if (v.keyword === 'additionalProperties') pointer += `/${String(v.params.additionalProperty)}`;
    const field = location === 'body' ? pointer : pointer.replace(/^\//, '');
    let message = v.message ?? 'is invalid';
    if (v.keyword === 'additionalProperties') message = `must NOT have the unknown property '${String(v.params.additionalProperty)}'`;
    if (v.keyword === 'enum' && Array.isArray(v.params.allowedValues)) message += `: ${v.params.allowedValues.join(', ')}`;
    return { location, field, rule: v.keyword, message };
  });
  const first = details[0];
  const summary = first ? `${nouns[location]}${first.field ? ` ${first.field}` : ''}: ${first.message}` : 'Invalid request';
  return errorBody('bad_request', 400, summary, details);
}

const fastifyCodes: Record<string, [ErrorCode, number, string]> = {
  FST_ERR_CTP_EMPTY_JSON_BODY: ['bad_request', 400, 'Body is empty; send a JSON object'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['bad_request', 400, 'Body is not valid JSON'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['payload_too_large', 413, 'Request body is larger than the limit'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', 415, 'Content-Type must be application/json'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['bad_request', 400, 'Content-Length does not match the body'],
  FST_ERR_CTP_INVALID_TYPE: ['unsupported_media_type', 415, 'Content-Type must be application/json'],
};

const genericCodes: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  404: 'not_found',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  501: 'not_implemented',
  503: 'unavailable',
};

function send(reply: FastifyReply, body: ErrorBody, headers: Record<string, string> = {}): FastifyReply {
  return reply.code(body.status).headers(headers).type('application/json; charset=utf-8').send(body);
}

// glue's package types SecurityError as an interface only, so it is recognised by shape.
function isSecurityError(error: unknown): error is SecurityError {
  return error instanceof Error && Array.isArray((error as Partial<SecurityError>).errors);
}

function notFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0]?.slice(0, 200) ?? '';
  return send(reply, errorBody('not_found', 404, `No operation ${request.method} ${path}`));
}

/**
 * Errors Fastify raises before routing (`frameworkErrors`): a path that is not validly
 * percent-encoded, or a path segment over `maxParamLength`. Such a path names no operation
 * of the contract, so the answer is the contract's 404.
 */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.header('x-request-id', request.id);
  if (error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    const why = error.code === 'FST_ERR_BAD_URL' ? 'it is not validly percent-encoded' : 'a path segment is too long';
    return send(reply, errorBody('not_found', 404, `No operation at this path: ${why}`));
  }
  return handleError(error, request, reply);
}

export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // A route the contract does not have is a 404, even when its body could not be parsed
  // (Fastify parses bodies of unknown OPTIONS/DELETE/... requests before routing to 404).
  if (request.is404) return notFound(request, reply);
  if (error.validation) return send(reply, validationBody(error));

  if (isSecurityError(error)) {
    // glue wraps what the scheme handler threw; a database failure is not a bad key.
    const causes: unknown[] = error.errors;
    const refused = causes.find((c): c is BearerError => c instanceof BearerError);
    const other = causes.find((c) => !(c instanceof BearerError));
    if (other !== undefined) return handleError(other as FastifyError, request, reply);
    return send(reply, errorBody('unauthorized', 401, refused?.message ?? 'Missing or invalid API key'), {
      'www-authenticate': refused?.challenge ?? 'Bearer realm="animal-store"',
    });
  }

  // The client went away mid-request (the request stream failed with this very error): not
  // an outage, nor anything to warn an operator about. Nobody reads the answer.
  if (request.raw.errored === error) {
    request.log.info({ err: { message: error.message, code: error.code } }, 'request aborted by the client');
    return send(reply, errorBody('bad_request', 400, 'The request was not received completely'));
  }

  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: { message: error.message, code: error.code } }, 'database unavailable');
    return send(reply, errorBody('unavailable', 503, 'Service temporarily unavailable, retry later'), { 'retry-after': RETRY_AFTER_SECONDS });
  }

  const known = error.code ? fastifyCodes[error.code] : undefined;
  if (known) return send(reply, errorBody(known[0], known[1], known[2]));

  // Errors from the catalogue (src/errors.ts) carry their code and status.
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    // Our own errors (src/errors.ts, the rate limiter) carry a code of the catalogue and a
    // message meant for clients; anything else gets a generic one. (@fastify/error upper-
    // cases codes.)
    const own = String(error.code ?? '').toLowerCase();
    if (isErrorCode(own)) return send(reply, errorBody(own, status, error.message));
    return send(reply, errorBody(genericCodes[status] ?? 'bad_request', status, 'Bad request'));
  }
  if (status === 501 || status === 503) {
    const code = genericCodes[status] as ErrorCode;
    return send(reply, errorBody(code, status, error.message), status === 503 ? { 'retry-after': RETRY_AFTER_SECONDS } : {});
  }

  request.log.error({ err: error }, 'unexpected error');
  return send(reply, errorBody('internal', 500, 'Internal server error'));
}

export default fp(
  async function errors(fastify: FastifyInstance) {
    fastify.setErrorHandler(handleError);
    fastify.setNotFoundHandler(notFound);
  },
  { name: 'errors' },
);
