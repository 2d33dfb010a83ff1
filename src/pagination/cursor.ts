// Opaque keyset cursors for listPets and listOrders: `<payload>.<signature>`, both
// base64url. The payload says where the next page starts (after which id) and for which
// list and filters (`filter`, a string each list writes its own way); the HMAC (with a
// secret every instance reads from the database) makes a tampered or invented cursor
// detectable, so it is a 400 rather than a page of something else.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface CursorPosition {
  /** The last id of the previous page. */
  after: number;
  /**
   * The list and filters the cursor was made for (undefined: listPets without filters).
   * listPets with only `status` writes the status alone, as cursors always have.
   */
  filter?: string | undefined;
}

export class InvalidCursorError extends Error {}

export function createCursorCodec(secret: Buffer) {
  const sign = (payload: string): string => createHmac('sha256', secret).update(payload).digest().subarray(0, 16).toString('base64url');

  // A cursor depends only on its position, and the same few (the first pages of each
  // filter) are asked for over and over: remember them rather than sign again. Bounded;
  // starts over when full.
  const made = new Map<string, string>();
  // And the other way: a cursor this process signed is the next page a client asks for, so
  // decoding it looks its position up instead of checking its signature again. Only exact
  // strings this codec produced are in it, so nothing unsigned gets past. Bounded the same way.
  const issued = new Map<string, CursorPosition>();
  const MADE_MAX = 10_000;

  return {
    encode(position: CursorPosition): string {
      const memo = `${position.after}:${position.filter ?? ''}`;
      const known = made.get(memo);
      if (known !== undefined) return known;
      const payload = Buffer.from(JSON.stringify(position.filter ? { a: position.after, s: position.filter } : { a: position.after })).toString('base64url');
      const cursor = `${payload}.${sign(payload)}`;
      if (made.size >= MADE_MAX) made.clear();
      made.set(memo, cursor);
      if (issued.size >= MADE_MAX) issued.clear();
      issued.set(cursor, { after: position.after, filter: position.filter });
      return cursor;
    },

    /**
     * The position in `cursor`, which must have been made for `filter`; `filters` names
     * them in the message when it was not (`status filter`).
     */
    decode(cursor: string, filter: string | undefined, filters: string): number {
      const known = issued.get(cursor);
      if (known !== undefined) return checkFilter(known.after, known.filter, filter, filters);
      const [payload, signature, extra] = cursor.split('.');
      if (!payload || !signature || extra !== undefined) throw new InvalidCursorError('is not a cursor from this API');
      const expected = Buffer.from(sign(payload));
      const given = Buffer.from(signature);
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw new InvalidCursorError('was altered or comes from elsewhere');
      let decoded: { a?: unknown; s?: unknown };
      try {
        decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { a?: unknown; s?: unknown };
      } catch {
        throw new InvalidCursorError('is not a cursor from this API');
      }
      if (typeof decoded.a !== 'number' || !Number.isSafeInteger(decoded.a) || decoded.a < 0) throw new InvalidCursorError('is not a cursor from this API');
      return checkFilter(decoded.a, typeof decoded.s === 'string' ? decoded.s : undefined, filter, filters);
    },
  };
}

/** `after`, if the cursor was made for `filter` (an empty filter is none). */
function checkFilter(after: number, madeFor: string | undefined, filter: string | undefined, filters: string): number {
  if ((madeFor || undefined) !== (filter || undefined)) throw new InvalidCursorError(`belongs to another ${filters}; start again without cursor`);
  return after;
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
    decode: async (cursor: string, filter: string | undefined, filters: string) => (await get()).decode(cursor, filter, filters),
  };
}

export type LazyCursorCodec = ReturnType<typeof lazyCursorCodec>;
