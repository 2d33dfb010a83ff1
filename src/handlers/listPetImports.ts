import type { Handler } from '../contract/handler.js';
import { listPaging, refused } from '../pagination/page.js';

const paging = listPaging('listPetImports');

// Every import, paged like every list (src/pagination/page.ts), each once while imports are
// submitted on any instance (the append order, src/db/append-order.ts).
export const listPetImports: Handler<'listPetImports'> = async ({ query }, { petImports, cursors }) => {
  const started = await paging.start(query, cursors);
  if (refused(started)) return started;
  const page = await petImports.list(started.after, started.limit);
  return paging.answer(query, started, page.imports, page.next, cursors);
};
