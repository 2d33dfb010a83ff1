import type { Handler } from '../contract/handler.js';
import { listPaging, refused } from '../pagination/page.js';
import { callerOf } from '../api-keys/caller.js';

const paging = listPaging('listOrders');

// The caller's orders, paged like every list (src/pagination/page.ts). A page stops before
// the first order that a transaction still running could precede (src/db/append-order.ts):
// then it may be short, even empty, and still carries rel="next", from where it stopped.
export const listOrders: Handler<'listOrders'> = async ({ query, context }, { orders, cursors }) => {
  const started = await paging.start(query, cursors, { 'API key': callerOf(context) });
  if (refused(started)) return started;
  const page = await orders.list({ apiKeyId: callerOf(context), after: started.after, limit: started.limit, status: query.status, petId: query.petId });
  return paging.answer(query, started, page.orders, page.next, cursors);
};
