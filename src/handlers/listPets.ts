import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';
import { listPaging, refused } from '../pagination/page.js';
import { parseOrder } from '../catalogue/pet-find.js';

const paging = listPaging('listPets');

// Keyset pages (src/pagination/page.ts, src/catalogue/pets.ts). In id order, every pet
// exactly once to a client following rel="next", even while pets are being added. With `q`,
// `tag` or `orderBy`, a page of src/catalogue/pet-find.ts's statements, the cursor carrying
// the last pet's sort keys.
export const listPets: Handler<'listPets'> = async ({ query, context }, { pets, cursors }) => {
  const terms = parseOrder(query.orderBy, query.q !== undefined);
  if ('refused' in terms) {
    const message = `query parameter orderBy: ${terms.refused}`;
    return errorAnswer('bad_request', message, [{ location: 'query', field: 'orderBy', rule: 'orderBy', message: terms.refused }]);
  }
  const started = await paging.start(query, cursors);
  if (refused(started)) return started;
  if (query.q !== undefined || query.tag !== undefined || query.orderBy !== undefined) {
    const filters = { q: query.q, status: query.status, categoryId: query.categoryId, ids: query.id, tags: query.tag };
    const page = await pets.find(filters, terms, started.limit, query.cursor === undefined ? undefined : started.key, context.readFrom);
    return paging.answer(query, started, page.pets, page.next, cursors);
  }
  const request = { limit: started.limit, status: query.status, categoryId: query.categoryId, after: started.after };
  const page = query.id ? await pets.listByIds(query.id, request, context.readFrom) : await pets.list(request, context.readFrom);
  return paging.answer(query, started, page.pets, page.next, cursors);
};
