// Opaque keyset cursors: `<payload>.<signature>`, both base64url. The payload says where
// the next page starts (after which id), for which operation and which filters; the HMAC
// (with a secret every instance reads from the database) makes a tampered or invented cursor
// detectable, so it is a 400 rather than a page of something else. Only src/pagination/
// page.ts makes and reads them.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface CursorPosition {
  /** The last id of the previous page. */
  after: number;
  /** In an order other than id's: the last row's sort values (src/db/keyset.ts), before its id. */
  values?: readonly (string | number)[] | undefined;
  /** The operation the cursor was made for; absent from cursors made before it was bound. */
  operation?: string | undefined;
  /** Its filters, in the canonical form of src/pagination/page.ts (empty: none). */
  filter?: string | undefined;
}

export class InvalidCursorError extends Error {}

interface Payload {
  a?: unknown;
  k?: unknown;
  o?: unknown;
  s?: unknown;
}

/**
 * Cursors made before they named their operation (contract 1.2.0): listOrders' filters read
 * `orders|<status>|<petId>`, listPets' `<status>` or `<status>|id:<digest>`. They are read
 * as the canonical form, so a client that kept one across an upgrade goes on paging.
 */
function legacy(filter: string | undefined): { operation: string; filter: string } {
  const canonical = (pairs: [string, string | undefined][]) => pairs.filter(([, v]) => v).map(([k, v]) => `${k}=${v}`).join('&');
  if (filter?.startsWith('orders|')) {
    const [, status, petId] = filter.split('|');
    return { operation: 'listOrders', filter: canonical([['status', status], ['petId', petId]]) };
  }
  const ids = /^(.*)\|id:(.+)$/.exec(filter ?? '');
  return { operation: 'listPets', filter: ids ? canonical([['status', ids[1]], ['id', ids[2]]]) : canonical([['status', filter]]) };
}

export function createCursorCodec(secret: Buffer) {
  const sign = (payload: string): string => createHmac('sha256', secret).update(payload).digest().subarray(0, 16).toString('base64url');

  // The same few cursors (the first pages of each filter) are made over and over, and a
  // cursor this process signed is the next page a client asks for: both directions are
  // remembered (only exact strings this codec produced, so nothing unsigned gets past).
  // Bounded; each starts over when full.
  const made = new Map<string, string>();
  const issued = new Map<string, Required<CursorPosition>>();
  const MADE_MAX = 10_000;

  return {
    encode(position: CursorPosition): string {
      const values = position.values && position.values.length > 0 ? position.values : undefined;
      const memo = `${position.after}:${position.operation ?? ''}:${position.filter ?? ''}${values ? `:${JSON.stringify(values)}` : ''}`;
      const known = made.get(memo);
      if (known !== undefined) return known;
      const payload = Buffer.from(
        JSON.stringify({ a: position.after, ...(values ? { k: values } : {}), ...(position.operation ? { o: position.operation } : {}), ...(position.filter ? { s: position.filter } : {}) }),
      ).toString('base64url');
      const cursor = `${payload}.${sign(payload)}`;
      if (made.size >= MADE_MAX) made.clear();
      made.set(memo, cursor);
      if (issued.size >= MADE_MAX) issued.clear();
      issued.set(cursor, { after: position.after, values: values ?? [], operation: position.operation ?? legacy(position.filter).operation, filter: position.filter ?? '' });
      return cursor;
    },

    /** The position in `cursor`: its operation and filters are the caller's to compare. */
    decode(cursor: string): Required<CursorPosition> {
      const known = issued.get(cursor);
      if (known !== undefined) return known;
      const [payload, signature, extra] = cursor.split('.');
      if (!payload || !signature || extra !== undefined) throw new InvalidCursorError('is not a cursor from this API');
      const expected = Buffer.from(sign(payload));
      const given = Buffer.from(signature);
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw new InvalidCursorError('was altered or comes from elsewhere');
      let decoded: Payload;
      try {
        decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Payload;
      } catch {
        throw new InvalidCursorError('is not a cursor from this API');
      }
      if (typeof decoded.a !== 'number' || !Number.isSafeInteger(decoded.a) || decoded.a < 0) throw new InvalidCursorError('is not a cursor from this API');
      const filter = typeof decoded.s === 'string' ? decoded.s : undefined;
      const values = decoded.k === undefined ? [] : decoded.k;
      if (!Array.isArray(values) || !values.every((v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)))) throw new InvalidCursorError('is not a cursor from this API');
      if (typeof decoded.o === 'string') return { after: decoded.a, values: values as (string | number)[], operation: decoded.o, filter: filter ?? '' };
      return { after: decoded.a, values: [], ...legacy(filter) };
    },
  };
}

export type CursorCodec = ReturnType<typeof createCursorCodec>;

/**
 * The codec, with its secret read from the database on first use (so the service starts
 * while the database is down; a failed read is retried on the next request).
 */
export function lazyCursorCodec(loadSecret: () => Promise<Buffer>) {
  let codec: Promise<CursorCodec> | undefined;
  const get = (): Promise<CursorCodec> => {
    codec ??= loadSecret().then(createCursorCodec, (error: unknown) => {
      codec = undefined;
      throw error;
    });
    return codec;
  };
  return {
    encode: async (position: CursorPosition) => (await get()).encode(position),
    decode: async (cursor: string) => (await get()).decode(cursor),
  };
}

export type LazyCursorCodec = ReturnType<typeof lazyCursorCodec>;
