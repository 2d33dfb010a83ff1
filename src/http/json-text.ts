// What JSON.parse does not keep of a JSON text and the contract rules on (openapi/v1.yaml,
// "Numbers"): how deeply it nests, and numbers no double holds exactly. For request bodies
// (src/routes/json-body.ts) and for each line of an NDJSON import
// (src/catalogue/pet-import-rows.ts), which answer each in their own words.
import { isSafeNumber } from 'lossless-json';

/**
 * How deeply a text may nest arrays and objects. The contract's bodies nest at most
 * CONTRACT_DEPTH levels; far deeper input is refused before any parser or check recurses
 * into it (their limit would be the engine's stack, and their words the engine's).
 */
export const MAX_DEPTH = 64;
export const CONTRACT_DEPTH = 3;

/** Whether `text` opens more than `limit` arrays or objects inside each other (outside strings). */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

// A digit followed by a fraction or an exponent: only then can JSON.parse have rounded a
// number into range (integer digits past 2^53 - 1 round to 2^53 or more).
export const INEXACT_NUMBER = /\d[.eE]/;
const INTEGER_DIGITS = /^-?\d+$/;

/**
 * Whether JSON.parse rounds the number written `digits` to one that a schema's bounds
 * could take: integer digits past 2^53 - 1 round to 2^53 or more, never into range, and
 * the schema's `maximum` refuses them by name.
 */
export function roundedIntoRange(digits: string): boolean {
  return !isSafeNumber(digits) && !INTEGER_DIGITS.test(digits);
}

/** A number JSON.parse rounds into range, as written. */
export class RoundedNumber {
  constructor(readonly digits: string) {}
}

/** What a number rounded into range is told. */
export const roundedMessage = (digits: string): string => `must be a number held exactly: ${digits.slice(0, 40)} would be rounded`;

/** JSON.parse's reviver, with the source text of each primitive value (Node 22 and later). */
type SourceReviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;
const markRounded: SourceReviver = (_key, value, context) =>
  typeof value === 'number' && context?.source !== undefined && roundedIntoRange(context.source) ? new RoundedNumber(context.source) : value;

// Without the source text, every rounded number would pass: the service does not start.
if (JSON.parse('[1.0]', (_key: string, value: unknown, context?: { source?: string }) => (typeof value === 'number' ? context?.source : value) as unknown)?.[0] !== '1.0') {
  throw new Error("This Node's JSON.parse gives a reviver no source text (context.source): run Node 22 or 24, as package.json's engines says");
}

/**
 * JSON.parse's value of `text` (a text JSON.parse takes), each number it rounds into range
 * left as a RoundedNumber. A property named twice counts as JSON.parse counts it: the last.
 */
export function parseMarkingRounded(text: string): unknown {
  return JSON.parse(text, markRounded as (this: unknown, key: string, value: unknown) => unknown);
}

/**
 * A number JSON.parse rounds into range in `text` (a text JSON.parse takes, nesting at most
 * MAX_DEPTH), with its JSON pointer; undefined when none.
 */
export function inexactNumber(text: string): { pointer: string; message: string } | undefined {
  if (!INEXACT_NUMBER.test(text)) return undefined;
  const stack: [unknown, string][] = [[parseMarkingRounded(text), '']];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, pointer] = next;
    if (item instanceof RoundedNumber) return { pointer, message: roundedMessage(item.digits) };
    if (Array.isArray(item)) item.forEach((element, i) => stack.push([element, `${pointer}/${i}`]));
    else if (item !== null && typeof item === 'object') {
      for (const [key, element] of Object.entries(item)) stack.push([element, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`]);
    }
  }
  return undefined;
}
