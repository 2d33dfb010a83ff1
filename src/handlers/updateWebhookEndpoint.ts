import type { Handler } from '../contract/handler.js';
import { callerOf, callerScopesOf } from '../api-keys/caller.js';
import { endpointNotFound, eventTypesRefusal, urlRefusal } from '../events/webhooks/answers.js';

// A merge patch of url, eventTypes, description and enabled, in one statement
// (src/events/webhooks/endpoints.ts). New event types and a new URL are checked as on creation.
// Disabling drops the endpoint's pending deliveries; enabling delivers the events written
// from then on.
export const updateWebhookEndpoint: Handler<'updateWebhookEndpoint'> = async ({ params, body, context }, { webhookEndpoints, webhookUrls }) => {
  const unseen = body.eventTypes === undefined ? undefined : eventTypesRefusal(body.eventTypes, callerScopesOf(context));
  if (unseen) return unseen;
  const refusal = body.url === undefined ? undefined : await webhookUrls.check(body.url);
  if (refusal) return urlRefusal(refusal);
  const endpoint = await webhookEndpoints.update(callerOf(context), params.endpointId, body);
  if (!endpoint) return endpointNotFound(params.endpointId);
  return { status: 200, body: endpoint };
};
