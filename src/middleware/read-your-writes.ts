// Read-your-writes with a replica (src/db/consistency.ts): a caller whose write succeeded
// reads from the primary for READ_YOUR_WRITES_MS, so its own new data shows at once on the
// instance that wrote it. Reads are the GET operations, writes the others. Without a
// replica there is nothing to route, and no operation is wrapped.
import type { OperationMiddleware } from '../routes/middleware.js';
import type { RecentWriters } from '../db/consistency.js';

export function readYourWrites(writers: RecentWriters): OperationMiddleware {
  return {
    name: 'read-your-writes',
    wrap(next, operation) {
      if (!writers.enabled) return next;
      if (operation.method === 'GET') {
        return (input) => {
          input.context.readFrom = writers.readFrom(input.context.apiKeyId);
          return next(input);
        };
      }
      return async (input) => {
        const answer = await next(input);
        const { apiKeyId } = input.context;
        if (answer.status < 300 && apiKeyId !== undefined) writers.wrote(apiKeyId);
        return answer;
      };
    },
  };
}
