import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';

// Only the name goes: pets keep their categoryId (nothing references the categories table).
export const deleteCategory: Handler<'deleteCategory'> = async ({ params }, { categories }) => {
  if (!(await categories.remove(params.categoryId))) return errorAnswer('not_found', `Category ${params.categoryId} has no name`);
  return { status: 204, body: undefined };
};
