// The answers to a body the service does not read: its size, its Content-Type, its
// encoding. The JSON body parser (src/routes/json-body.ts) and the error handler
// (src/errors/plugin.ts) both give them, for what each sees first.
import type { FastifyRequest } from 'fastify';
import { repeatsHeader } from '../http/message.js';
import { ApiError, shown } from './catalogue.js';

/** Request bodies above this are refused with 413 (documented in the contract). */
export const BODY_LIMIT = 64 * 1024;

/**
 * The operations that take a larger body, each with its limit (documented on the operation):
 * batchCreatePets, 1,000 of the largest NewPets written without padding.
 */
export const OPERATION_BODY_LIMITS: Readonly<Record<string, number>> = { batchCreatePets: 1024 * 1024 };

/** The 413 for an import's body (a stream, checked as it arrives) over `limit` bytes. */
export function streamTooLarge(limit: number): ApiError {
  return new ApiError('payload_too_large', `Request body is larger than ${limit} bytes: split the file, and import each part`);
}

/** The 413 for a body over the limit of the route it was sent to. */
export function payloadTooLarge(request: FastifyRequest): ApiError {
  const limit = request.routeOptions.bodyLimit ?? BODY_LIMIT;
  return new ApiError('payload_too_large', `Request body is larger than ${limit} bytes: send at most ${limit}`);
}

/** Several Content-Type headers (also when the first is not JSON). */
export function repeatedContentType(request: FastifyRequest): ApiError | undefined {
  if (!repeatsHeader(request.raw.rawHeaders, 'content-type')) return undefined;
  const message = 'is sent more than once: send it once';
  return new ApiError('bad_request', `header Content-Type: ${message}`, { details: [{ location: 'header', field: 'Content-Type', rule: 'once', message }] });
}

/** The media types the request's operation declares for its body (none: it takes no body). */
export function declaredMediaTypes(request: FastifyRequest): string[] {
  const body = (request.routeOptions.schema as { body?: { content?: Record<string, unknown> } } | undefined)?.body;
  return Object.keys(body?.content ?? {});
}

/**
 * The 415 for a body whose media type the operation does not read: it names those it
 * does (`application/json` where it takes no body, as for any other media type).
 */
export function unsupportedMediaType(request: FastifyRequest): ApiError {
  const declared = declaredMediaTypes(request);
  const named = declared.length > 0 ? declared.join(' or ') : 'application/json';
  return new ApiError('unsupported_media_type', `Content-Type must be ${named}`);
}

/** The 415 for a body sent compressed (any Content-Encoding but identity), or undefined. */
export function encodedBody(request: FastifyRequest): ApiError | undefined {
  const encoding = request.headers['content-encoding']?.trim();
  if (encoding === undefined || encoding === '' || encoding.toLowerCase() === 'identity') return undefined;
  return new ApiError('unsupported_media_type', `Content-Encoding ${shown(encoding)} is not accepted: send the body uncompressed, without Content-Encoding`);
}
