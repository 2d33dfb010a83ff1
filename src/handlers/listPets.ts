import type { Handler } from '../contract/handler.js';
import { listPaging, refused } from '../pagination/page.js';

const paging = listPaging('listPets');

// Keyset pages (src/pagination/page.ts): in ascending id order, every pet exactly once to a
// client following rel="next", even while pets are being added (src/catalogue/pets.ts); in
// another order, every pet untouched during the walk once (src/catalogue/pet-orders.ts).
export const listPets: Handler<'listPets'> = async ({ query, context }, { pets, cursors }) => {
  const started = await paging.start(query, cursors);
  if (refused(started)) return started;
  const request = { limit: started.limit, status: query.status, categoryId: query.categoryId, tags: query.tag };
  if (query.orderBy !== undefined && query.orderBy !== 'id') {
    const page = await pets.listOrdered({ ...request, order: query.orderBy, key: started.key, ids: query.id }, context.readFrom);
    return paging.answer(query, started, page.pets, page.next, cursors);
  }
  const idOrder = { ...request, after: started.after };
  const page = query.id ? await pets.listByIds(query.id, idOrder, context.readFrom) : await pets.list(idOrder, context.readFrom);
  return paging.answer(query, started, page.pets, page.next, cursors);
};
