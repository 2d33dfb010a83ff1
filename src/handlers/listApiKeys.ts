import type { Handler } from '../contract/handler.js';
import { listPaging, refused } from '../pagination/page.js';

const paging = listPaging('listApiKeys');

// Every key of the deployment, revoked and expired ones included, never a secret; paged
// like every list (src/pagination/page.ts). A page stops before the first key that a
// transaction still running could precede (src/db/append-order.ts).
export const listApiKeys: Handler<'listApiKeys'> = async ({ query }, { apiKeys, cursors }) => {
  const started = await paging.start(query, cursors);
  if (refused(started)) return started;
  const page = await apiKeys.list(started.after, started.limit);
  return paging.answer(query, started, page.keys, page.next, cursors);
};
