import type { Handler } from '../contract/handler.js';
import { callerOf } from '../api-keys/caller.js';
import { endpointNotFound } from '../events/webhooks/answers.js';

// The caller's endpoint, never its secret; another key's is not found.
export const getWebhookEndpoint: Handler<'getWebhookEndpoint'> = async ({ params, context }, { webhookEndpoints }) => {
  const endpoint = await webhookEndpoints.get(callerOf(context), params.endpointId);
  if (!endpoint) return endpointNotFound(params.endpointId);
  return { status: 200, body: endpoint };
};
