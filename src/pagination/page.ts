// The one way a list operation pages: keyset pages (in id order, or in an order whose key the
// cursor carries: src/db/keyset.ts), an opaque cursor bound to the operation and its filters,
// and `Link: <...>; rel="next"` while more follow. A list handler names its operation; the
// filters are the query parameters the contract declares for it besides `limit` and
// `cursor` (`orderBy` among them), read from the operation table. A cursor is refused (400,
// naming the parameters that differ) with another operation or other filters.
import { createHash } from 'node:crypto';
import type { OperationId, QueryParams } from '../contract/handler.js';
import { operationInfo, operationPath, parameterDefault } from '../contract/spec.js';
import { errorAnswer } from '../errors/catalogue.js';
import type { Key } from '../db/keyset.js';
import { InvalidCursorError, type LazyCursorCodec } from './cursor.js';

/** A filter's value as a query holds it: a scalar, or the values of a repeated parameter. */
type FilterValue = string | number | readonly (string | number)[];

/** The query of a list operation: `limit`, `cursor` and its filters. */
type ListQuery = { limit?: number; cursor?: string } & Record<string, unknown>;

/**
 * A list of values, in the cursor by a digest: one list of ids (or of event types) is
 * refused with another. Ids are compared as numbers, anything else as strings.
 */
const digest = (values: readonly (string | number)[]): string =>
  createHash('sha256')
    .update(
      (values.every((value) => /^\d+$/.test(String(value))) ? [...new Set(values.map(Number))].sort((a, b) => a - b) : [...new Set(values.map(String))].sort()).join(','),
    )
    .digest('base64url')
    .slice(0, 16);

export interface Paging {
  /** The page's size. */
  limit: number;
  /** The id the page starts after (0: from the first). */
  after: number;
  /** The key the page starts after, in an order other than id's: the last row's sort values, then its id (none: from the first). */
  key: Key | undefined;
  /** The request's filters as its cursors hold them: `status=sold&id=<digest>` (computed once a request). */
  filter: string;
}

/** Paging for `operationId`, composed once: its path, its filters, its default size. */
export function listPaging<K extends OperationId>(operationId: K, { implied }: { implied?: (query: ListQuery) => Readonly<Record<string, unknown>> } = {}) {
  const path = operationPath(operationId);
  const declared = operationInfo(operationId).parameters.filter((p) => p.in === 'query' && p.name !== 'limit' && p.name !== 'cursor');
  const filters = declared.map((p) => p.name);
  /**
   * A filter given as its default is the filter not given: one cursor, one link, for both.
   * The default is the schema's, or the one `implied` gives for the rest of the query (`orderBy`: `relevance` with `q`, `id` without).
   */
  const defaults = new Map(declared.filter((p) => p.default !== undefined).map((p) => [p.name, p.default]));
  /** Each filter's default for this query (`implied` asked once). */
  const defaultsOf = (query: ListQuery) => {
    const given = implied?.(query);
    return (name: string): unknown => given?.[name] ?? defaults.get(name);
  };
  const defaultLimit: number = parameterDefault(operationId, 'limit');
  /** What differs between a cursor's filters and the request's, in words: `tag filter and orderBy`. */
  const differing = (held: string, given: string): string => {
    const pairs = (canonical: string) => new Map(canonical.split('&').filter(Boolean).map((pair) => pair.split('=', 2) as [string, string]));
    const [a, b] = [pairs(held), pairs(given)];
    const names = filters.filter((name) => a.get(name) !== b.get(name));
    const words = (names.length > 0 ? names : filters).map((name) => (name === 'orderBy' ? name : `${name} filter`));
    return names.length > 0 ? words.join(' and ').replace(/ and (?=.* and )/g, ', ') : words.join(' or ');
  };
  /**
   * The filters as the cursor holds them: `status=sold&id=<digest>`. A value of other
   * characters than letters, digits, spaces, `.`, `_` and `-`, or longer than 32 (free text:
   * `q`), is held by its digest, `#<digest>`: no value can read as two filters
   * (`q=lab&orderBy=name` given as one `q`), and a cursor stays short.
   */
  const canonical = (query: ListQuery): string => {
    const defaultOf = defaultsOf(query);
    let filter = '';
    for (const name of filters) {
      const value = query[name] as FilterValue | undefined;
      if (value === undefined || value === defaultOf(name)) continue;
      const held = Array.isArray(value) ? digest(value) : /^[A-Za-z0-9 ._-]{1,32}$/.test(String(value)) ? String(value) : `#${digest([String(value)])}`;
      filter += `${filter ? '&' : ''}${name}=${held}`;
    }
    return filter;
  };
  /** The filters as the next link's query carries them: `&status=sold&id=1&id=2`. */
  const carried = (query: ListQuery): string => {
    const defaultOf = defaultsOf(query);
    let parameters = '';
    for (const name of filters) {
      const value = query[name] as FilterValue | undefined;
      if (value === undefined || value === defaultOf(name)) continue;
      for (const one of Array.isArray(value) ? value : [value]) parameters += `&${name}=${encodeURIComponent(String(one))}`;
    }
    return parameters;
  };
  const refuse = (message: string) =>
    errorAnswer('bad_request', `query parameter cursor: ${message}`, [{ location: 'query', field: 'cursor', rule: 'cursor', message }]);

  return {
    /**
     * Where the page starts and its size; a 400 answer when the cursor is not for this
     * request. `owner`: whose list it is, when it is not everyone's (`{ 'API key': 7 }`,
     * `{ 'webhook endpoint': 3 }`): a cursor of another owner's list is refused, as it would
     * page this one from where that one stopped. The cursor holds it after the filters, past a
     * line end no filter holds; a cursor made before owners were held has none, and pages on.
     */
    async start(query: QueryParams<K> & ListQuery, cursors: LazyCursorCodec, owner: Readonly<Record<string, string | number>> = {}): Promise<Paging | ReturnType<typeof refuse>> {
      const limit = query.limit ?? defaultLimit;
      const filters = canonical(query);
      const whose = Object.entries(owner).map(([name, value]) => `${name}=${value}`).join('&');
      const filter = whose ? `${filters}\n${whose}` : filters;
      if (query.cursor === undefined) return { limit, after: 0, key: undefined, filter };
      try {
        const position = await cursors.decode(query.cursor);
        if (position.operation !== operationId) return refuse(`belongs to ${position.operation}, not ${operationId}; start again without cursor`);
        const [heldFilters = '', heldOwner] = position.filter.split('\n', 2);
        if (heldFilters !== filters) return refuse(`belongs to another ${differing(heldFilters, filters)}; start again without cursor`);
        if (heldOwner !== undefined && heldOwner !== whose) return refuse(`belongs to the list of another ${Object.keys(owner).join(' and ')}; start again without cursor`);
        return { limit, after: position.after, key: { values: position.values, id: position.after }, filter };
      } catch (error) {
        if (!(error instanceof InvalidCursorError)) throw error;
        return refuse(`${error.message}; start again without cursor`);
      }
    },

    /**
     * The 200 answer with `body`, and with `Link: rel="next"` when the next page starts
     * after `next` (undefined: this page is the last). `params`: the values of the path's
     * parameters (`{endpointId}`), when it has any.
     */
    async answer<B>(query: QueryParams<K> & ListQuery, paging: Paging, body: B, next: Key | number | undefined, cursors: LazyCursorCodec, params: Readonly<Record<string, string | number>> = {}) {
      if (next === undefined) return { status: 200 as const, body };
      const key = typeof next === 'number' ? { values: [], id: next } : next;
      const cursor = await cursors.encode({ after: key.id, values: key.values, operation: operationId, filter: paging.filter });
      const at = path.replace(/\{([^}]+)\}/g, (whole, name: string) => (name in params ? encodeURIComponent(String(params[name])) : whole));
      return { status: 200 as const, body, headers: { Link: `<${at}?limit=${paging.limit}${carried(query)}&cursor=${cursor}>; rel="next"` } };
    },
  };
}

/** Whether `start` refused the cursor (its answer) rather than giving a page. */
export const refused = <P extends Paging, R extends { status: number }>(started: P | R): started is R => 'status' in started;
