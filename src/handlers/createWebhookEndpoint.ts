import type { Handler } from '../contract/handler.js';
import { operationPath } from '../contract/spec.js';
import { callerOf } from './caller.js';
import type { Services } from './services.js';
import { newWebhookSecret, urlRefusal } from './webhookUrl.js';

const collection = operationPath('listWebhookEndpoints');

// The URL is checked before anything is stored (https, no user info, a public address or a
// name that resolves only to public ones: src/webhooks/target.ts). The secret is in this
// answer only. Deliveries start with the events written from now on.
export const createWebhookEndpoint: Handler<'createWebhookEndpoint', Services> = async ({ body, context }, { webhookEndpoints, webhookUrls }) => {
  const refusal = await webhookUrls.check(body.url);
  if (refusal) return urlRefusal(refusal);
  const secret = newWebhookSecret();
  const endpoint = await webhookEndpoints.create({ apiKeyId: callerOf(context), url: body.url, eventTypes: body.eventTypes, secret, ...(body.description === undefined ? {} : { description: body.description }) });
  return { status: 201, body: { ...endpoint, secret }, headers: { Location: `${collection}/${endpoint.id}` } };
};
