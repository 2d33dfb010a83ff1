// What a request that fails the contract's schemas is told: Ajv's errors (the validators
// compile with its `verbose`: src/contract/validation.ts) as the Error body's details, one
// per rule broken, each naming where (body, query, path, header), which field, and why in
// words a client can act on.
import type { FastifyError } from 'fastify';
import { errorBody, type ErrorBody, type ErrorDetail } from '../errors.js';

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  /** The schema the rule belongs to. */
  parentSchema?: { 'x-pattern-description'?: string };
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
  const details: ErrorDetail[] = ((error.validation ?? []) as AjvError[]).map((v) => {
    let pointer = v.instancePath;
    if (v.keyword === 'required' && v.params.missingProperty !== undefined) pointer += `/${String(v.params.missingProperty)}`;
    if (v.keyword === 'additionalProperties') pointer += `/${String(v.params.additionalProperty)}`;
    // A parameter by its name; a header by the name the contract gives it (Node's is lower case).
    const name = pointer.replace(/^\//, '');
    const field = location === 'body' ? pointer : location === 'header' ? (headerNames.get(name) ?? name) : name;
    let message = v.message ?? 'is invalid';
    if (v.keyword === 'additionalProperties') message = `must NOT have the unknown property '${String(v.params.additionalProperty)}'`;
    if (v.keyword === 'enum' && Array.isArray(v.params.allowedValues)) message += `: ${v.params.allowedValues.join(', ')}`;
    // A pattern is said in words where the contract gives them, never as the expression.
    if (v.keyword === 'pattern') message = `must be ${v.parentSchema?.['x-pattern-description'] ?? 'in the format the contract gives'}`;
    return { location, field, rule: v.keyword, message };
  });
  const first = details[0];
  const summary = first ? `${nouns[location]}${first.field ? ` ${first.field}` : ''}: ${first.message}` : 'Invalid request';
  return errorBody('bad_request', summary, details);
}
