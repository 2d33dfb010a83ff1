// Conditional requests (RFC 9110 §13.1): If-Match and If-None-Match, as the contract's
// IfMatch and IfNoneMatch parameters take them. Their syntax is the contract's pattern,
// checked before a handler runs (a malformed one is 400): `*`, or entity tags in double
// quotes, each maybe weak (`W/"..."`), separated by commas. A tag's characters exclude `"`
// but include `,`, so tags are read as quoted strings, never split on commas.

/** `*`, or the tags given, each with whether it is weak. */
export type EntityTags = '*' | readonly { weak: boolean; tag: string }[];

const TAG = /(W\/)?("[^"]*")/g;

/** The tags of a validated If-Match or If-None-Match value; undefined when absent. */
export function entityTags(value: string | undefined): EntityTags | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '*') return '*';
  return [...value.matchAll(TAG)].map((m) => ({ weak: m[1] !== undefined, tag: m[2] as string }));
}

/**
 * If-Match as a condition on a write: undefined when there is none (absent, or `*`, which
 * holds for any pet that exists), else the strong tags it names, one of which must be the
 * pet's current tag. Comparison is strong (§13.1.1): a weak tag never matches, so a value
 * of weak tags only is a condition no pet meets.
 */
export function ifMatchCondition(value: string | undefined): readonly string[] | undefined {
  const tags = entityTags(value);
  if (tags === undefined || tags === '*') return undefined;
  return tags.filter((t) => !t.weak).map((t) => t.tag);
}

/** Whether If-None-Match names `etag` (compared weakly, §13.1.2) or is `*`: then a GET answers 304. */
export function noneMatch(value: string | undefined, etag: string): boolean {
  const tags = entityTags(value);
  if (tags === undefined) return false;
  return tags === '*' || tags.some((t) => t.tag === etag);
}
