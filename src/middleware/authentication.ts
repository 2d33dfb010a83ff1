// Each operation authenticates as its `security` requirement says, with the handler of
// each scheme it names, before its body is read or validated: an unauthenticated caller
// learns nothing about validation (the contract puts 401 first). A scheme without a
// handler, or a requirement this service cannot enforce, stops the start-up.
import type { onRequestHookHandler } from 'fastify';
import type { OperationMiddleware } from '../contract/middleware.js';

export function authentication(schemes: Readonly<Record<string, onRequestHookHandler>>): OperationMiddleware {
  return {
    name: 'authentication',
    hooks(operation) {
      const { operationId, security } = operation;
      // No requirement, or an empty alternative: the operation is public.
      if (security.length === 0 || security.some((alternative) => alternative.schemes.length === 0)) return undefined;
      if (security.length > 1) throw new Error(`${operationId}: security alternatives (one of several schemes) are not supported`);
      const onRequest = (security[0]?.schemes ?? []).map((scheme) => {
        const handler = schemes[scheme];
        if (!handler) throw new Error(`${operationId}: no handler for security scheme ${scheme}`);
        return handler;
      });
      return { onRequest };
    },
  };
}
