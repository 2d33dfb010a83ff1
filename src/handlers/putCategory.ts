import { operationPath } from '../contract/spec.js';
import type { Handler } from '../contract/handler.js';
import { errorAnswer, shown } from '../errors/catalogue.js';

// A named category's Location is its item under the categories' collection path.
const collection = operationPath('listCategories');

// 201 when the id had no name, 200 when it is renamed (or named the same again, in any letter
// case). Names are unique ignoring case, whoever writes (the table's unique index decides,
// also between instances): a name another id holds is 409, naming that id.
export const putCategory: Handler<'putCategory'> = async ({ params, body }, { categories }) => {
  const put = await categories.put(params.categoryId, body.name);
  switch (put.outcome) {
    case 'created':
      return { status: 201, body: put.category, headers: { Location: `${collection}/${put.category.id}` } };
    case 'renamed':
      return { status: 200, body: put.category };
    case 'name-taken': {
      const { id, name } = put.holder;
      return errorAnswer(
        'category_name_taken',
        `Category ${id} is already named "${shown(name)}" (names are unique ignoring case): choose another name, or rename or remove category ${id} first`,
      );
    }
    case 'contended':
      return errorAnswer('unavailable', `Category ${params.categoryId} was not named: the name "${shown(body.name)}" kept changing hands under other requests; retry`);
  }
};
