// What JSON.parse does not keep of a JSON text and the contract rules on (openapi/v1.yaml,
// "Numbers"): how deeply it nests, and numbers no double holds exactly. For request bodies
// (src/routes/json-body.ts) and for each line of an NDJSON import
// (src/catalogue/pet-import-rows.ts), which answer each in their own words.
import { isLosslessNumber, isSafeNumber, parse } from 'lossless-json';

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

/**
 * What the number rules refuse in `text` (a JSON text JSON.parse took, nesting at most
 * MAX_DEPTH), with its JSON pointer: a number JSON.parse rounds into range, or, where a
 * number could be rounded, a repeated property name (read again without JSON.parse, it
 * cannot be told which value counts, as the body parser refuses it too); undefined when none.
 */
export function inexactNumber(text: string): { pointer: string; message: string } | undefined {
  if (!INEXACT_NUMBER.test(text)) return undefined;
  let value: unknown;
  try {
    value = parse(text);
  } catch {
    // JSON.parse took it, so this is lossless-json's stricter rule: a repeated key.
    return { pointer: '', message: 'must not repeat a property name' };
  }
  const stack: [unknown, string][] = [[value, '']];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, pointer] = next;
    if (isLosslessNumber(item)) {
      if (roundedIntoRange(item.value)) return { pointer, message: `must be a number held exactly: ${item.value.slice(0, 40)} would be rounded` };
    } else if (Array.isArray(item)) {
      item.forEach((element, i) => stack.push([element, `${pointer}/${i}`]));
    } else if (item !== null && typeof item === 'object') {
      for (const [key, element] of Object.entries(item)) stack.push([element, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`]);
    }
  }
  return undefined;
}
