// Fastify validates a body against the schema of its media type; a request with no body
// and no Content-Type has none, so the validator never runs. For an operation whose
// contract marks the body required, its absence is the same 400 a validation failure gets.
import type { preValidationHookHandler } from 'fastify';
import type { OperationMiddleware } from '../routes/middleware.js';
import { requestBodyOf } from '../contract/spec.js';
import { ApiError } from '../errors/catalogue.js';

const MISSING = 'a JSON body is required';

const requireBody: preValidationHookHandler = (request, _reply, done) => {
  if (request.body !== undefined) return done();
  done(new ApiError('bad_request', `body: ${MISSING}`, { details: [{ location: 'body', field: '', rule: 'required', message: MISSING }] }));
};

export function requiredBody(): OperationMiddleware {
  return {
    name: 'required-body',
    hooks: (operation) => (requestBodyOf(operation)?.required ? { preValidation: [requireBody] } : undefined),
  };
}
