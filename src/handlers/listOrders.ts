import { operationPath, spec } from '../contract/spec.js';
import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors.js';
import { InvalidCursorError } from '../pagination/cursor.js';
import { callerOf } from './caller.js';
import type { Services } from './services.js';

const defaultLimit = spec.components.parameters.Limit.schema.default;
const listPath = operationPath('listOrders');

// Keyset pagination as for pets, over the caller's orders only. A page stops before the
// first order that a transaction still running could precede (src/db/orders.ts): then it
// may be short, even empty, and still carries rel="next", from where it stopped.
export const listOrders: Handler<'listOrders', Services> = async ({ query, context }, { orders, cursors }) => {
  const limit = query.limit ?? defaultLimit;
  // Cursors of this list never fit listPets (whose filters are a bare status, or `|id:`).
  const filter = `orders|${query.status ?? ''}|${query.petId ?? ''}`;
  let after = 0;
  if (query.cursor !== undefined) {
    try {
      after = await cursors.decode(query.cursor, filter, 'list or status or petId filter');
    } catch (error) {
      if (!(error instanceof InvalidCursorError)) throw error;
      const message = `query parameter cursor: ${error.message}`;
      return errorAnswer('bad_request', message, [{ location: 'query', field: 'cursor', rule: 'cursor', message: error.message }]);
    }
  }
  const { orders: page, more } = await orders.list({ apiKeyId: callerOf(context), after, limit: limit + 1, status: query.status, petId: query.petId });
  const answer = page.slice(0, limit);
  if (!more && page.length <= limit) return { status: 200, body: answer };

  const cursor = await cursors.encode({ after: answer[answer.length - 1]?.id ?? after, filter });
  const next = `${listPath}?limit=${limit}${query.status ? `&status=${query.status}` : ''}${query.petId !== undefined ? `&petId=${query.petId}` : ''}&cursor=${cursor}`;
  return { status: 200, body: answer, headers: { Link: `<${next}>; rel="next"` } };
};
