// Each operation authenticates as its `security` requirement says, with the handler of
// each scheme it names, given the scopes the requirement lists for that scheme: composed
// once, at start-up, so a request costs no lookup of its operation or its scopes. It runs
// before the body is read or validated: the contract puts 401 first, then 403, then 400.
// Alternatives (`security: [{bearerAuth: [a]}, {bearerAuth: [b]}]`) are taken when they
// name one and the same scheme: its handler gets each alternative's scopes, and a key
// passes with any one of them. A scheme without a handler, or a requirement this service
// cannot enforce (alternatives over several schemes), stops the start-up.
import type { onRequestHookHandler } from 'fastify';
import type { OperationMiddleware } from '../routes/middleware.js';

/** A scheme's handler for one operation, given the scopes of each alternative (one list, or several of which any one suffices). */
export type SchemeHandler = (operationId: string, alternatives: readonly (readonly string[])[]) => onRequestHookHandler;

export function authentication(schemes: Readonly<Record<string, SchemeHandler>>): OperationMiddleware {
  return {
    name: 'authentication',
    hooks(operation) {
      const { operationId, security } = operation;
      // No requirement, or an empty alternative: the operation is public.
      if (security.length === 0 || security.some((alternative) => alternative.schemes.length === 0)) return undefined;
      const names = security[0]?.schemes ?? [];
      if (security.length > 1 && !security.every((alternative) => alternative.schemes.length === 1 && alternative.schemes[0] === names[0])) {
        throw new Error(`${operationId}: security alternatives are supported over one scheme only`);
      }
      const onRequest = names.map((scheme) => {
        const handler = schemes[scheme];
        if (!handler) throw new Error(`${operationId}: no handler for security scheme ${scheme}`);
        return handler(
          operationId,
          security.map((alternative) => alternative.scopes[scheme] ?? []),
        );
      });
      return { onRequest };
    },
  };
}
