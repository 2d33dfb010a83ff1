// The `bearerAuth` security scheme of the contract (RFC 6750), and the one reading of an
// Authorization header that everything else uses too (/metrics, the rate limiter's key).
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import { repeatsHeader } from '../http-message.js';
import type { ApiKeyVerifier } from './apiKeys.js';

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
  unknown: { message: 'Invalid or revoked API key', error: 'invalid_token' },
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

/** The `bearerAuth` scheme's handler: an onRequest hook that sets `request.apiKey` or refuses. */
export function bearerAuth(verifier: ApiKeyVerifier) {
  return async function authenticate(request: FastifyRequest): Promise<void> {
    const token = bearerOf(request);
    if (typeof token !== 'string') throw refused(token);
    const identity = await verifier.verify(token);
    if (!identity) throw refused(refusals.unknown);
    request.apiKey = identity;
  };
}
