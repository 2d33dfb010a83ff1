import type { Handler } from '../contract/handler.js';
import { callerOf } from './caller.js';
import type { Services } from './services.js';
import { endpointNotFound, urlRefusal } from './webhookUrl.js';

// A merge patch of url, eventTypes, description and enabled, in one statement
// (src/db/webhook-endpoints.ts). A new URL is checked as on creation. Disabling drops the
// endpoint's pending deliveries; enabling delivers the events written from then on.
export const updateWebhookEndpoint: Handler<'updateWebhookEndpoint', Services> = async ({ params, body, context }, { webhookEndpoints, webhookUrls }) => {
  const refusal = body.url === undefined ? undefined : await webhookUrls.check(body.url);
  if (refusal) return urlRefusal(refusal);
  const endpoint = await webhookEndpoints.update(callerOf(context), params.endpointId, body);
  if (!endpoint) return endpointNotFound(params.endpointId);
  return { status: 200, body: endpoint };
};
