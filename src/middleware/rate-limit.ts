// Every operation spends from its caller's rate-limit budget (src/plugins/rate-limit.ts),
// before authentication: an over-budget caller is refused without further work.
import type { onRequestHookHandler } from 'fastify';
import type { OperationMiddleware } from '../contract/middleware.js';

export function rateLimit(limiter: onRequestHookHandler): OperationMiddleware {
  return { name: 'rate-limit', hooks: () => ({ onRequest: [limiter] }) };
}
