import type { Handler } from '../contract/handler.js';
import { listPaging, refused } from '../pagination/page.js';
import { callerOf } from '../api-keys/caller.js';

const paging = listPaging('listWebhookEndpoints');

// The caller's endpoints, paged like every list, never a secret.
export const listWebhookEndpoints: Handler<'listWebhookEndpoints'> = async ({ query, context }, { webhookEndpoints, cursors }) => {
  const started = await paging.start(query, cursors, { 'API key': callerOf(context) });
  if (refused(started)) return started;
  const page = await webhookEndpoints.list(callerOf(context), started.after, started.limit);
  return paging.answer(query, started, page.endpoints, page.next, cursors);
};
