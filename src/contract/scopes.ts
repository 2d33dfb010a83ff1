// The scopes an API key may hold: the contract's `Scope` schema, read from the generated
// document (never listed here). Each operation names the one it needs in its `security`
// requirement (src/middleware/authentication.ts reads it from the operation table).
import type { components } from '../../generated/v1.js';
import { spec } from './spec.js';

export type Scope = components['schemas']['Scope'];

/** Every scope, in the contract's order (the order keys store and answer them in). */
export const SCOPES: readonly Scope[] = Object.freeze([...(spec.components.schemas.Scope.enum as Scope[])]);

const known: ReadonlySet<string> = new Set(SCOPES);

export function isScope(value: string): value is Scope {
  return known.has(value);
}

/** `scopes` without repeats, in the contract's order. */
export function canonicalScopes(scopes: Iterable<Scope>): Scope[] {
  const held = new Set(scopes);
  return SCOPES.filter((scope) => held.has(scope));
}

/** The first scope of `wanted` (in the contract's order) that `held` lacks, if any. */
export function firstMissing(wanted: Iterable<Scope>, held: ReadonlySet<Scope>): Scope | undefined {
  return canonicalScopes(wanted).find((scope) => !held.has(scope));
}

/**
 * The scopes a previous secret, in its rotation's grace, does not hold: the contract's
 * `x-scopes-not-held-by-previous-secrets` of the bearer scheme. A leaked previous secret
 * serves the key's ordinary operations until its grace ends, and cannot make keys or
 * endpoints that outlive it (docs/security.md, "What each key can do").
 */
export const NOT_HELD_BY_PREVIOUS_SECRETS: ReadonlySet<Scope> = new Set(
  (spec.components.securitySchemes.bearerAuth['x-scopes-not-held-by-previous-secrets'] as readonly string[]).filter(isScope),
);
