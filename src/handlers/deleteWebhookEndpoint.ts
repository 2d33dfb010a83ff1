import type { Handler } from '../contract/handler.js';
import { callerOf } from '../api-keys/caller.js';
import { endpointNotFound } from '../events/webhooks/answers.js';

// Removes the endpoint with its pending deliveries and its attempt log; an attempt in flight
// ends without anything written (src/events/webhooks/messages.ts, finish).
export const deleteWebhookEndpoint: Handler<'deleteWebhookEndpoint'> = async ({ params, context }, { webhookEndpoints }) => {
  if (!(await webhookEndpoints.delete(callerOf(context), params.endpointId))) return endpointNotFound(params.endpointId);
  return { status: 204, body: undefined };
};
