import { randomBytes } from 'node:crypto';
import { errorAnswer } from '../errors.js';
import type { UrlRefusal } from '../webhooks/target.js';

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
