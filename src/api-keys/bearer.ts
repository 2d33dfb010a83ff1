// The `bearerAuth` security scheme of the contract (RFC 6750), and the one reading of an
// Authorization header that everything else uses too (/metrics, the rate limiter's key).
import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { ApiError } from '../errors/catalogue.js';
import { repeatsHeader } from '../http/message.js';
import type { ApiKeyVerifier, KeyUsage } from './verifier.js';
import { isScope, type Scope } from '../contract/scopes.js';

const REALM = 'animal-store';

/** Why a request carries no bearer token that counts; `error` is RFC 6750's error code. */
export interface BearerRefusal {
  readonly message: string;
  readonly error?: 'invalid_request' | 'invalid_token';
}

// Fixed objects: a refusal allocates nothing.
export const refusals = {
  missing: { message: 'Missing API key: send Authorization: Bearer <API_KEY>' },
  // Node keeps the first of several Authorization headers, so which one counts is ambiguous.
  repeated: { message: 'Send one Authorization header, not several', error: 'invalid_request' },
  malformed: { message: 'Malformed bearer token: send Authorization: Bearer <API_KEY>, the key as it was issued (ask_...)', error: 'invalid_token' },
  // Swagger UI's Authorize, given "Bearer ask_..." instead of the key alone, sends it twice.
  doubled: { message: 'The scheme is given twice ("Bearer Bearer ..."): send Authorization: Bearer <API_KEY> once (in /docs, Authorize takes the key alone)', error: 'invalid_request' },
  otherScheme: { message: 'Authorization must use the Bearer scheme' },
  unknown: { message: 'Unknown, revoked or expired API key: send a current key', error: 'invalid_token' },
} as const satisfies Record<string, BearerRefusal>;

// RFC 7235: the scheme is case-insensitive; RFC 6750 b64token syntax for the credential.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const BEARER_SCHEME = /^Bearer(\s|$)/i;
const DOUBLED = /^Bearer +Bearer(\s|$)/i;

/** The bearer token of a request's one Authorization header, or why there is none. */
export function bearerOf(request: Pick<FastifyRequest, 'headers' | 'raw'>): string | BearerRefusal {
  const header = request.headers.authorization;
  if (header === undefined) return refusals.missing;
  if (repeatsHeader(request.raw.rawHeaders, 'authorization')) return refusals.repeated;
  if (header === '') return refusals.missing;
  const match = BEARER.exec(header);
  if (match) return match[1] as string;
  if (DOUBLED.test(header)) return refusals.doubled;
  return BEARER_SCHEME.test(header) ? refusals.malformed : refusals.otherScheme;
}

/** The bearer token of a request, if it carries exactly one well-formed one. */
export function bearerToken(request: Pick<FastifyRequest, 'headers' | 'raw'>): string | undefined {
  const token = bearerOf(request);
  return typeof token === 'string' ? token : undefined;
}

/** The WWW-Authenticate challenge for a refusal (RFC 6750 §3). */
export function challenge(realm: string, refusal?: BearerRefusal): string {
  const scheme = `Bearer realm="${realm}"`;
  return refusal?.error ? `${scheme}, error="${refusal.error}"` : scheme;
}

/** A refused credential: 401 with its WWW-Authenticate challenge. */
function refused(refusal: BearerRefusal): ApiError {
  return new ApiError('unauthorized', refusal.message, { headers: { 'www-authenticate': challenge(REALM, refusal) } });
}

/** The WWW-Authenticate challenge of a key that lacks `scopes` (RFC 6750 §3.1). */
export function scopeChallenge(scopes: readonly Scope[]): string {
  return `Bearer realm="${REALM}", error="insufficient_scope", scope="${scopes.join(' ')}"`;
}

/** A 403 naming the scope the key lacks, with the challenge naming every scope the request needs. */
export function insufficientScope(message: string, needed: readonly Scope[]): ApiError {
  return new ApiError('insufficient_scope', message, { headers: { 'www-authenticate': scopeChallenge(needed) } });
}

/** Why a previous secret, in its rotation's grace, may not do what the key itself may. */
const previousLacks = (id: number, scope: Scope, operationId: string): string =>
  `This is the previous secret of API key ${id}, in its rotation's grace, and a previous secret does not hold ${scope}, which ${operationId} needs: use the current secret`;

/**
 * The `bearerAuth` scheme's handler. Given an operation and the scopes of each alternative of
 * its requirement (once, at start-up), an onRequest hook that sets `request.apiKey`, records
 * the key's use, and refuses: 401 without a key in force, then 403 when the key holds no
 * alternative whole (naming what the first alternative lacks; the challenge names every
 * scope that would do). A scope the contract's `Scope` schema does not list stops the start-up.
 */
export function bearerAuth(verifier: ApiKeyVerifier, usage: Pick<KeyUsage, 'record'>) {
  return function forOperation(operationId: string, alternatives: readonly (readonly string[])[]): onRequestHookHandler {
    const options = alternatives.map((required) =>
      required.map((scope) => {
        if (!isScope(scope)) throw new Error(`${operationId}: scope ${scope} is not one of the contract's Scope values`);
        return scope;
      }),
    );
    const named = [...new Set(options.flat())];
    const either = options.length > 1 ? ` (or ${options.slice(1).map((o) => o.join(' and ')).join(', or ')})` : '';
    const lacking = new Map(named.map((scope) => [scope, `This API key lacks the scope ${scope}, which ${operationId} needs${either}: use a key that holds it`] as const));
    const first = options[0] ?? [];
    const holdsOne = options.length === 1 ? undefined : (held: ReadonlySet<Scope>) => options.some((option) => option.every((scope) => held.has(scope)));
    return async function authenticate(request: FastifyRequest): Promise<void> {
      const token = bearerOf(request);
      if (typeof token !== 'string') throw refused(token);
      const now = Date.now();
      const identity = await verifier.verify(token, now);
      if (!identity) throw refused(refusals.unknown);
      request.apiKey = identity;
      usage.record(identity.id, now);
      if (holdsOne?.(identity.scopes)) return;
      for (const scope of first) {
        if (identity.scopes.has(scope)) continue;
        if (identity.previousSecret && identity.keyScopes.has(scope)) throw insufficientScope(previousLacks(identity.id, scope, operationId), named);
        throw insufficientScope(lacking.get(scope) as string, named);
      }
    };
  };
}
