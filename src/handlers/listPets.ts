import { operationPath, spec } from '../contract/spec.js';
import type { Handler } from '../contract/handler.js';
import { errorBody } from '../errors.js';
import { InvalidCursorError } from '../pagination/cursor.js';
import type { Services } from './services.js';

// The validator fills in the default; this covers callers that bypass it (none over HTTP).
const defaultLimit = spec.components.parameters.Limit.schema.default;
const listPath = operationPath('listPets');

// Keyset pagination: one row more than asked tells whether a next page exists, and the
// next page starts after the last id returned, so concurrent inserts (which get higher
// ids) never shift or repeat what a client has already seen.
export const listPets: Handler<'listPets', Services> = async ({ query, context }, { store, cursors, recentWriters }) => {
  const limit = query.limit ?? defaultLimit;
  let after = 0;
  if (query.cursor !== undefined) {
    try {
      after = await cursors.decode(query.cursor, query.status);
    } catch (error) {
      if (!(error instanceof InvalidCursorError)) throw error;
      const message = `query parameter cursor: ${error.message}`;
      return { status: 400, body: errorBody('bad_request', 400, message, [{ location: 'query', field: 'cursor', rule: 'cursor', message: error.message }]) };
    }
  }
  const rows = await store.listPets(limit + 1, query.status, after, recentWriters.readFrom(context.apiKeyId));
  const pets = rows.slice(0, limit);
  const last = pets[pets.length - 1];
  if (rows.length <= limit || !last) return { status: 200, body: pets };

  // Nothing here needs percent-encoding (a number, a status from the enum, a cursor in
  // base64url and '.'), so the query is written as it is, not built through URLSearchParams.
  const cursor = await cursors.encode({ after: last.id, status: query.status });
  const next = `${listPath}?limit=${limit}${query.status ? `&status=${query.status}` : ''}&cursor=${cursor}`;
  return { status: 200, body: pets, headers: { Link: `<${next}>; rel="next"` } };
};
