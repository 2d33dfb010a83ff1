// What a request that fails the contract's schemas is told: Ajv's errors (the validators
// compile with `allErrors` and `verbose`: src/routes/validation.ts) as the Error body's
// details, one per rule broken, each naming where (body, query, path, header), which field,
// and why in words a client can act on. At most MAX_DETAILS are listed, so that hostile
// input (a body of thousands of unknown properties) gets a bounded answer; the message says
// how many there were. A name the client sent (an unknown property) is repeated `shown`, at
// most 60 characters and `...`, so that the answer's size does not grow with the request's.
import type { FastifyError } from 'fastify';
import { errorBody, shown, type ErrorBody, type ErrorDetail } from './catalogue.js';

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  /** The schema the rule belongs to. */
  parentSchema?: { 'x-pattern-description'?: string };
  /** The value that broke it. */
  data?: unknown;
}

/** The most details one answer lists (the contract's `Error.details` maxItems). */
export const MAX_DETAILS = 20;

/** What to say of a broken rule, where Ajv's words would not say what to do (also of an import's rows: src/catalogue/pet-import-rows.ts). */
export function ruleMessage(v: AjvError): string {
  switch (v.keyword) {
    case 'additionalProperties':
      return `must NOT have the unknown property '${shown(String(v.params.additionalProperty))}'`;
    // `null` among them (PetPatch's status) is named, not left as an empty item.
    case 'enum':
      return Array.isArray(v.params.allowedValues)
        ? `${v.message ?? 'is invalid'}: ${(v.params.allowedValues as unknown[]).map((value) => (value === null ? 'null' : String(value))).join(', ')}`
        : (v.message ?? 'is invalid');
    // A pattern is said in words where the contract gives them, never as the expression;
    // one that refuses characters (`^[^...]*$`) also names the first refused, by position.
    case 'pattern': {
      const rule = `must be ${v.parentSchema?.['x-pattern-description'] ?? 'in the format the contract gives'}`;
      const refused = typeof v.data === 'string' && typeof v.params.pattern === 'string' ? firstRefused(v.params.pattern, v.data) : undefined;
      return refused ? `${rule}: character ${refused.position} is U+${refused.codePoint}; remove it` : rule;
    }
    case 'maxProperties':
      if (v.params.limit === 0 && v.data !== null && typeof v.data === 'object') {
        const fields = Object.keys(v.data).slice(0, 5).map((key) => `'${shown(key)}'`);
        return `takes no fields (send {} or no body): remove ${fields.join(', ')}`;
      }
      return v.message ?? 'is invalid';
    default:
      return v.message ?? 'is invalid';
  }
}

/** A pattern that only refuses characters: `^[^...]*$` (one class: no `]` inside it). */
const REFUSING_CLASS = /^\^\[\^[^\]]*\]\*\$$/;

/**
 * The first character of `text` that the character-refusing `pattern` refuses: its position
 * (1 for the first, counted in Unicode code points) and its code point in hex.
 */
function firstRefused(pattern: string, text: string): { position: number; codePoint: string } | undefined {
  if (!REFUSING_CLASS.test(pattern)) return undefined;
  const allowed = new RegExp(pattern, 'u');
  let position = 0;
  for (const character of text) {
    position++;
    if (!allowed.test(character)) return { position, codePoint: (character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0') };
  }
  return undefined;
}

const locations: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };
const nouns: Record<string, string> = { body: 'body', query: 'query parameter', path: 'path parameter', header: 'header' };

/**
 * The 400 for Fastify's validation error. `headerNames` gives a header its name as the
 * contract spells it, by the lower-case name Node gives it (`idempotency-key` →
 * `Idempotency-Key`).
 */
export function validationBody(error: FastifyError, headerNames: ReadonlyMap<string, string>): ErrorBody {
  const location = locations[error.validationContext ?? 'body'] ?? 'body';
  // One problem per field: the first rule it broke (Ajv reports `1.5` as both not an
  // integer and not of format int64).
  const all = ((error.validation ?? []) as AjvError[]).map((v) => {
    let pointer = v.instancePath;
    if (v.keyword === 'required' && v.params.missingProperty !== undefined) pointer += `/${String(v.params.missingProperty)}`;
    if (v.keyword === 'additionalProperties') pointer += `/${String(v.params.additionalProperty)}`;
    // A parameter by its name; a header by the name the contract gives it (Node's is lower case).
    const name = pointer.replace(/^\//, '');
    const field = location === 'body' ? pointer : location === 'header' ? (headerNames.get(name) ?? name) : name;
    return { location, field, rule: v.keyword, message: ruleMessage(v) };
  });
  return problemsBody(location, all);
}

/**
 * The 400 for the problems found in one part of a request (`body`, `query`, `path` or
 * `header`), each naming its field: one per field (the first found), the first in the
 * message, at most MAX_DETAILS in details, and the message says how many there were. The
 * body parser's findings (src/routes/json-body.ts) are answered the same way.
 */
export function problemsBody(location: string, problems: readonly ErrorDetail[]): ErrorBody {
  const seen = new Set<string>();
  // An object that takes no fields says so once, not once more for each field it has.
  const empty = new Set(problems.filter((d) => d.rule === 'maxProperties' && d.message.startsWith('takes no fields')).map((d) => d.field));
  const broken = problems.filter((detail) => {
    if (seen.has(detail.field) || (detail.rule === 'additionalProperties' && empty.has(detail.field.replace(/\/[^/]*$/, '')))) return false;
    seen.add(detail.field);
    return true;
  });
  const details: ErrorDetail[] = broken.slice(0, MAX_DETAILS).map((detail) => ({ ...detail, field: shown(detail.field) }));
  const first = details[0];
  if (!first) return errorBody('bad_request', 'Invalid request');
  const more = broken.length - 1;
  const also = more === 0 ? '' : broken.length > MAX_DETAILS ? ` (and ${more} more problems; details lists the first ${MAX_DETAILS})` : ` (and ${more} more ${more === 1 ? 'problem' : 'problems'}, in details)`;
  return errorBody('bad_request', `${nouns[location] ?? location}${first.field ? ` ${first.field}` : ''}: ${first.message}${also}`, details);
}
