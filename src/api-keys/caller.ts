import { scopeChallenge } from './bearer.js';
import type { Scope } from '../contract/scopes.js';
import type { RequestContext } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';

/**
 * The API key of an authenticated request. Every operation of the contract requires one
 * (authentication runs before the handler); an operation made public by mistake fails here
 * instead of serving another key's data.
 */
export function callerOf(context: RequestContext): number {
  if (context.apiKeyId === undefined) throw new Error('this operation needs an authenticated API key');
  return context.apiKeyId;
}

/** The scopes the request's API key holds (as authenticated), on the same terms as `callerOf`. */
export function callerScopesOf(context: RequestContext): ReadonlySet<Scope> {
  if (context.apiKeyScopes === undefined) throw new Error('this operation needs an authenticated API key');
  return context.apiKeyScopes;
}

/** The key's expiry (ms since the epoch, Infinity: never), whether the secret sent is its previous one, and that secret's hash, on the same terms as `callerOf`. */
export function callerSecretOf(context: RequestContext): { expiresAt: number; previousSecret: boolean; hash: Buffer } {
  if (context.apiKeyExpiresAt === undefined || context.apiKeyPreviousSecret === undefined || context.apiKeySecretHash === undefined) {
    throw new Error('this operation needs an authenticated API key');
  }
  return { expiresAt: context.apiKeyExpiresAt, previousSecret: context.apiKeyPreviousSecret, hash: context.apiKeySecretHash };
}

/** A 403 for a scope the caller lacks to do what it asked, with the challenge naming that scope. */
export function scopeRefusal(message: string, scope: Scope): ReturnType<typeof errorAnswer<'insufficient_scope'>> & { headers: Record<string, string> } {
  return { ...errorAnswer('insufficient_scope', message), headers: { 'WWW-Authenticate': scopeChallenge([scope]) } };
}

/** Which events the request's API key may see (src/events/feed.ts): its id and its two read scopes. */
export function viewerOf(context: RequestContext): { key: number; petsRead: boolean; ordersRead: boolean } {
  const scopes = callerScopesOf(context);
  return { key: callerOf(context), petsRead: scopes.has('pets:read'), ordersRead: scopes.has('orders:read') };
}
