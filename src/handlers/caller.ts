import type { RequestContext } from '../contract/handler.js';

/**
 * The API key of an authenticated request. Every operation of the contract requires one
 * (authentication runs before the handler); an operation made public by mistake fails here
 * instead of serving another key's data.
 */
export function callerOf(context: RequestContext): number {
  if (context.apiKeyId === undefined) throw new Error('this operation needs an authenticated API key');
  return context.apiKeyId;
}
