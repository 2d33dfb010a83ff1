// Each operation authenticates as its `security` requirement says, with the handler of
// each scheme it names, given the scopes the requirement lists for that scheme: composed
// once, at start-up, so a request costs no lookup of its operation or its scopes. It runs
// before the body is read or validated: the contract puts 401 first, then 403, then 400.
// A scheme without a handler, or a requirement this service cannot enforce, stops the
// start-up.
import type { onRequestHookHandler } from 'fastify';
import type { OperationMiddleware } from '../contract/middleware.js';

/** A scheme's handler for one operation, given the scopes its requirement names. */
export type SchemeHandler = (operationId: string, scopes: readonly string[]) => onRequestHookHandler;

export function authentication(schemes: Readonly<Record<string, SchemeHandler>>): OperationMiddleware {
  return {
    name: 'authentication',
    hooks(operation) {
      const { operationId, security } = operation;
      // No requirement, or an empty alternative: the operation is public.
      if (security.length === 0 || security.some((alternative) => alternative.schemes.length === 0)) return undefined;
      if (security.length > 1) throw new Error(`${operationId}: security alternatives (one of several schemes) are not supported`);
      const requirement = security[0];
      const onRequest = (requirement?.schemes ?? []).map((scheme) => {
        const handler = schemes[scheme];
        if (!handler) throw new Error(`${operationId}: no handler for security scheme ${scheme}`);
        return handler(operationId, requirement?.scopes[scheme] ?? []);
      });
      return { onRequest };
    },
  };
}
