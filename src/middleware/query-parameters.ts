// The query is what the operation declares, nothing else: a parameter it does not declare
// is 400, naming it and the ones it takes (a typo such as `?stauts=sold` would otherwise be
// ignored, and the client would get unfiltered data and no error), and so is a parameter
// given several times where one value is expected (`?limit=1&limit=2`: which one counts?).
// Before validation, so that the answer says this rather than a schema rule.
import type { preValidationHookHandler } from 'fastify';
import type { OperationMiddleware } from '../routes/middleware.js';
import { ApiError, shown } from '../errors/catalogue.js';

export function queryParameters(): OperationMiddleware {
  return {
    name: 'query-parameters',
    hooks(operation) {
      const declared = operation.parameters.filter((p) => p.in === 'query');
      const names = new Set(declared.map((p) => p.name));
      const single = new Set(declared.filter((p) => !p.list).map((p) => p.name));
      const takes = declared.length > 0 ? `it takes ${declared.map((p) => p.name).join(', ')}` : 'it takes none';
      const refuse = (name: string, rule: string, message: string): ApiError =>
        new ApiError('bad_request', `query parameter ${shown(name)}: ${message}`, { details: [{ location: 'query', field: shown(name), rule, message }] });
      const check: preValidationHookHandler = (request, _reply, done) => {
        const query = request.query as Record<string, unknown>;
        for (const name in query) {
          if (!names.has(name)) return done(refuse(name, 'unknown', `is not a parameter of ${operation.operationId} (${takes})`));
          const value = query[name];
          if (single.has(name) && Array.isArray(value)) return done(refuse(name, 'once', `must be given once, not ${value.length} times`));
        }
        done();
      };
      return { preValidation: [check] };
    },
  };
}
