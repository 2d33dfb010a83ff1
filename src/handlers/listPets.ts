import type { Handler } from '../contract/handler.js';
import { listPaging, refused } from '../pagination/page.js';

const paging = listPaging('listPets');

// Keyset pages in id order (src/pagination/page.ts, src/catalogue/pets.ts): every pet exactly once
// to a client following rel="next", even while pets are being added.
export const listPets: Handler<'listPets'> = async ({ query, context }, { pets, cursors }) => {
  const started = await paging.start(query, cursors);
  if (refused(started)) return started;
  const request = { limit: started.limit, status: query.status, categoryId: query.categoryId, tags: query.tag, after: started.after };
  const page = query.id ? await pets.listByIds(query.id, request, context.readFrom) : await pets.list(request, context.readFrom);
  return paging.answer(query, started, page.pets, page.next, cursors);
};
