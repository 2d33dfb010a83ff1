import type { Handler } from '../contract/handler.js';
import { listPaging, refused } from '../pagination/page.js';
import { callerOf } from '../api-keys/caller.js';
import { endpointNotFound } from '../events/webhooks/answers.js';

const paging = listPaging('listWebhookDeliveries');

// The caller's endpoint's attempts, in the order they were made, paged like every list.
// The next link names this endpoint (the operation's path has it as a parameter).
export const listWebhookDeliveries: Handler<'listWebhookDeliveries'> = async ({ params, query, context }, { webhookEndpoints, webhookDeliveries, cursors }) => {
  const id = params.endpointId;
  if (!(await webhookEndpoints.get(callerOf(context), id))) return endpointNotFound(id);
  const started = await paging.start(query, cursors, { 'webhook endpoint': id });
  if (refused(started)) return started;
  const page = await webhookDeliveries.list(id, started.after, started.limit);
  return paging.answer(query, started, page.deliveries, page.next, cursors, { endpointId: id });
};
