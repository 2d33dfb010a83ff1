import type { Handler } from '../contract/handler.js';
import { operationPath } from '../contract/spec.js';
import { callerOf, callerScopesOf } from '../api-keys/caller.js';
import { endpointLimit, eventTypesRefusal, newWebhookSecret, urlRefusal } from '../events/webhooks/answers.js';

const collection = operationPath('listWebhookEndpoints');

// Event types the key may not see are refused (403), and a key has at most 16 endpoints
// (409: checked before the URL, and again, for good, as the endpoint is stored). The URL is
// checked before anything is stored (https, no user info, a public address or a name that
// resolves only to public ones: src/events/webhooks/target.ts). The secret is in this answer only.
// Deliveries start with the events written from now on.
export const createWebhookEndpoint: Handler<'createWebhookEndpoint'> = async ({ body, context }, { webhookEndpoints, webhookUrls }) => {
  const unseen = eventTypesRefusal(body.eventTypes, callerScopesOf(context));
  if (unseen) return unseen;
  if (await webhookEndpoints.full(callerOf(context))) return endpointLimit();
  const refusal = await webhookUrls.check(body.url);
  if (refusal) return urlRefusal(refusal);
  const secret = newWebhookSecret();
  const endpoint = await webhookEndpoints.create({ apiKeyId: callerOf(context), url: body.url, eventTypes: body.eventTypes, secret, ...(body.description === undefined ? {} : { description: body.description }) });
  if (!endpoint) return endpointLimit();
  return { status: 201, body: { ...endpoint, secret }, headers: { Location: `${collection}/${endpoint.id}` } };
};
