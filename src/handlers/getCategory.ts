import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';

// An id without a name is 404; pets may still carry it (a category is only a name).
export const getCategory: Handler<'getCategory'> = async ({ params }, { categories }) => {
  const category = await categories.get(params.categoryId);
  if (!category) return errorAnswer('not_found', `Category ${params.categoryId} has no name`);
  return { status: 200, body: category };
};
