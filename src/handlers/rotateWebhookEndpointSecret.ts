import type { Handler } from '../contract/handler.js';
import { callerOf } from '../api-keys/caller.js';
import { endpointNotFound, newWebhookSecret } from '../events/webhooks/answers.js';

/** How long the replaced secret keeps signing, beside the new one (the contract's 24 hours). */
const PREVIOUS_SECRET_SECONDS = 24 * 3600;

// A new secret, shown in this answer only; the replaced one also signs for 24 hours (a
// rotation ends any earlier previous secret at once).
export const rotateWebhookEndpointSecret: Handler<'rotateWebhookEndpointSecret'> = async ({ params, context }, { webhookEndpoints }) => {
  const secret = newWebhookSecret();
  const endpoint = await webhookEndpoints.rotate(callerOf(context), params.endpointId, secret, PREVIOUS_SECRET_SECONDS);
  if (!endpoint) return endpointNotFound(params.endpointId);
  return { status: 200, body: { ...endpoint, secret } };
};
