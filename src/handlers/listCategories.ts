import type { Handler } from '../contract/handler.js';
import { listPaging, refused } from '../pagination/page.js';

const paging = listPaging('listCategories');

// Keyset pages in id order (src/pagination/page.ts). The ids are the clients', and a
// category named while a client pages shows up on a later page or not at all, never twice.
export const listCategories: Handler<'listCategories'> = async ({ query }, { categories, cursors }) => {
  const started = await paging.start(query, cursors);
  if (refused(started)) return started;
  const page = await categories.list(started.after, started.limit);
  return paging.answer(query, started, page.categories, page.next, cursors);
};
