import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';
import { listPaging, refused } from '../pagination/page.js';

// Without orderBy: relevance with q, id without (the contract's PetOrderBy).
const paging = listPaging('listPets', { implied: (query) => ({ orderBy: query.q === undefined ? 'id' : 'relevance' }) });

/** The most words a q may have (the contract's SearchQuery): each word is a condition on every pet walked. */
const MAX_WORDS = 8;
/** The most bytes a q may have in UTF-8 (the contract's SearchQuery): the next page's Link carries it. */
const MAX_BYTES = 300;

/**
 * A word of q as the database counts it (search_words: the symbols unaccent would spell with
 * letters, `©` `½`, separate words; then unaccent, then runs of what its locale calls letters
 * and digits): letters, decimal digits and Unicode's alphabetic marks (the vowel signs of
 * Indic scripts), with the accents unaccent removes inside it (`Re\u0301e` is one word, as
 * `Renée` is). Any other mark or symbol separates words, as the database splits there
 * (U+1DC0; the combining Latin letters U+0363-U+036F, which unaccent keeps). A letter the
 * locale does not know splits a word in the database alone: it searches a q by its first
 * MAX_WORDS words (search_query, migrations/1763700000030).
 */
const WORD = /[\u0300-\u0362\u20DD-\u20E0\u20E2-\u20E4]*(?![\u0363-\u036F])[\p{Alphabetic}\p{Nd}](?:(?![\u0363-\u036F])[\p{Alphabetic}\p{Nd}]|[\u0300-\u0362\u20DD-\u20E0\u20E2-\u20E4])*/gu;

/** A 400 naming the parameter and what to give instead. */
const bad = (field: 'q' | 'orderBy', rule: string, message: string) => errorAnswer('bad_request', `query parameter ${field}: ${message}`, [{ location: 'query', field, rule, message }]);

// Keyset pages (src/pagination/page.ts): in ascending id order, every pet exactly once to a
// client following rel="next", even while pets are being added (src/catalogue/pets.ts); in
// another order, every pet untouched during the walk once (src/catalogue/pet-orders.ts,
// and by relevance the function pet_search_page, docs/decisions/0011-pet-search.md).
export const listPets: Handler<'listPets'> = async ({ query, context }, { pets, cursors }) => {
  const q = query.q;
  const words = q === undefined ? 0 : (q.match(WORD)?.length ?? 0);
  // Words are runs of letters and digits (the database's search_words): a q without one would
  // match nothing. The contract's pattern refuses ASCII punctuation alone; this, any other
  // (emoji, `½`, `①`: numbers that are not digits).
  if (q !== undefined && words === 0) return bad('q', 'pattern', 'must be text with at least one letter or digit and no control characters (punctuation only separates words)');
  if (q !== undefined && Buffer.byteLength(q) > MAX_BYTES) return bad('q', 'bytes', `is over ${MAX_BYTES} bytes in UTF-8 (characters beyond U+FFFF, as emoji, take 4): search with fewer characters`);
  if (words > MAX_WORDS) return bad('q', 'words', `has more than ${MAX_WORDS} words: search with fewer`);
  const order = query.orderBy ?? (q === undefined ? 'id' : 'relevance');
  if (order === 'relevance' && q === undefined) return bad('orderBy', 'q', 'relevance ranks the matches of q; give q, or another orderBy');
  const started = await paging.start(query, cursors);
  if (refused(started)) return started;
  const request = { limit: started.limit, status: query.status, categoryId: query.categoryId, tags: query.tag };
  if (order === 'relevance' && q !== undefined) {
    const page = await pets.search({ ...request, q, key: started.key, ids: query.id }, context.readFrom);
    return paging.answer(query, started, page.pets, page.next, cursors);
  }
  if (order !== 'id' && order !== 'relevance') {
    const page = await pets.listOrdered({ ...request, order, key: started.key, ids: query.id, q }, context.readFrom);
    return paging.answer(query, started, page.pets, page.next, cursors);
  }
  const idOrder = { ...request, after: started.after, q };
  const page = query.id ? await pets.listByIds(query.id, idOrder, context.readFrom) : await pets.list(idOrder, context.readFrom);
  return paging.answer(query, started, page.pets, page.next, cursors);
};
