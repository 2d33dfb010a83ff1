import type { Handler } from '../contract/handler.js';
import { callerOf } from './caller.js';
import type { Services } from './services.js';
import { endpointNotFound } from './webhookUrl.js';

// Removes the endpoint with its pending deliveries and its attempt log; an attempt in flight
// ends without anything written (src/db/webhook-messages.ts, finish).
export const deleteWebhookEndpoint: Handler<'deleteWebhookEndpoint', Services> = async ({ params, context }, { webhookEndpoints }) => {
  if (!(await webhookEndpoints.delete(callerOf(context), params.endpointId))) return endpointNotFound(params.endpointId);
  return { status: 204, body: undefined };
};
