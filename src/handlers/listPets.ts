import { createHash } from 'node:crypto';
import { operationPath, spec } from '../contract/spec.js';
import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors.js';
import { InvalidCursorError } from '../pagination/cursor.js';
import type { Services } from './services.js';

// The validator fills in the default; this covers callers that bypass it (none over HTTP).
const defaultLimit = spec.components.parameters.Limit.schema.default;
const listPath = operationPath('listPets');

/**
 * What a cursor is made for: the status alone, as cursors have always said, and with `id`
 * a digest of the ids too (a cursor of one id list is refused with another).
 */
function filterOf(status: string | undefined, ids: readonly number[] | undefined): string | undefined {
  if (!ids) return status;
  const digest = createHash('sha256').update([...new Set(ids)].sort((a, b) => a - b).join(',')).digest('base64url').slice(0, 16);
  return `${status ?? ''}|id:${digest}`;
}

// Keyset pagination (src/db/pets.ts): the next page starts after the last id returned, so
// concurrent inserts (which get higher ids) never shift or repeat what a client has seen.
export const listPets: Handler<'listPets', Services> = async ({ query, context }, { pets, cursors }) => {
  const limit = query.limit ?? defaultLimit;
  const filter = filterOf(query.status, query.id);
  let after = 0;
  if (query.cursor !== undefined) {
    try {
      after = await cursors.decode(query.cursor, filter, 'status filter or id list');
    } catch (error) {
      if (!(error instanceof InvalidCursorError)) throw error;
      const message = `query parameter cursor: ${error.message}`;
      return errorAnswer('bad_request', message, [{ location: 'query', field: 'cursor', rule: 'cursor', message: error.message }]);
    }
  }
  const request = { limit, status: query.status, after };
  const page = query.id ? await pets.listByIds(query.id, request, context.readFrom) : await pets.list(request, context.readFrom);
  if (page.next === undefined) return { status: 200, body: page.pets };

  // Nothing here needs percent-encoding (numbers, a status from the enum, a cursor in
  // base64url and '.'), so the query is written as it is, not built through URLSearchParams.
  const cursor = await cursors.encode({ after: page.next, filter });
  const ids = query.id ? query.id.map((id) => `&id=${id}`).join('') : '';
  const next = `${listPath}?limit=${limit}${query.status ? `&status=${query.status}` : ''}${ids}&cursor=${cursor}`;
  return { status: 200, body: page.pets, headers: { Link: `<${next}>; rel="next"` } };
};
