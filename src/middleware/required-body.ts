// Fastify validates a body against the schema of its media type; a request with no body
// and no Content-Type has none, so the validator never runs. For an operation whose
// contract marks the body required, its absence is the same 400 a validation failure gets.
import type { preValidationHookHandler } from 'fastify';
import type { OperationMiddleware } from '../routes/middleware.js';
import { requestBodyOf } from '../contract/spec.js';
import { ApiError } from '../errors/catalogue.js';
import { declaredMediaTypes } from '../errors/media-type.js';

const requireBody: preValidationHookHandler = (request, _reply, done) => {
  if (request.body !== undefined) return done();
  // Named by the media types the operation reads: JSON, or createPetImport's CSV or NDJSON.
  const declared = declaredMediaTypes(request).filter((type) => type !== 'application/merge-patch+json');
  const missing = declared.length === 0 || declared.includes('application/json') ? 'a JSON body is required' : `a body is required (${declared.join(' or ')})`;
  done(new ApiError('bad_request', `body: ${missing}`, { details: [{ location: 'body', field: '', rule: 'required', message: missing }] }));
};

export function requiredBody(): OperationMiddleware {
  return {
    name: 'required-body',
    hooks: (operation) => (requestBodyOf(operation)?.required ? { preValidation: [requireBody] } : undefined),
  };
}
