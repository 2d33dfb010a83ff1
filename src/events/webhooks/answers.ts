import { randomBytes } from 'node:crypto';
import type { Scope } from '../../contract/scopes.js';
import type { EventType } from '../feed.js';
import { ENDPOINTS_PER_KEY } from './endpoints.js';
import { errorAnswer } from '../../errors/catalogue.js';
import type { UrlRefusal } from './target.js';
import { scopeRefusal } from '../../api-keys/caller.js';

/** A new signing secret as Standard Webhooks writes it: `whsec_` and 24 random bytes in base64 (38 characters). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** The 400 for a URL deliveries may not use, with the rule it broke. */
export function urlRefusal(refusal: UrlRefusal): ReturnType<typeof errorAnswer<'bad_request'>> {
  return errorAnswer('bad_request', `body /url: ${refusal.message}`, [{ location: 'body', field: '/url', rule: refusal.rule, message: refusal.message }]);
}

/** The 404 for an endpoint the caller's key does not have (another key's included). */
export const endpointNotFound = (id: number) => errorAnswer('not_found', `Webhook endpoint ${id} does not exist`);

/** The scope a key needs to see events of a type (src/events/feed.ts keyMaySee): orders:read for order events, pets:read for the others. */
const scopeToSee = (type: EventType): Scope => (type.startsWith('order.') ? 'orders:read' : 'pets:read');

/**
 * The 403 for event types the caller's key may not see (an endpoint of it could never
 * receive them), naming the scope it lacks, as createApiKey names a scope it cannot grant.
 */
export function eventTypesRefusal(types: readonly EventType[], held: ReadonlySet<Scope>): ReturnType<typeof scopeRefusal> | undefined {
  const unseen = types.find((type) => !held.has(scopeToSee(type)));
  if (unseen === undefined) return undefined;
  const scope = scopeToSee(unseen);
  return scopeRefusal(`This API key lacks the scope ${scope}, so its endpoints cannot receive ${unseen}: ask only for event types it may see`, scope);
}

/** The 409 for a key that has as many endpoints as it may. */
export const endpointLimit = () =>
  errorAnswer('webhook_endpoint_limit', `This API key has ${ENDPOINTS_PER_KEY} webhook endpoints, the most it may have: delete one it no longer needs first`);
