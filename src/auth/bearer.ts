// The `bearerAuth` security scheme of the contract (RFC 6750).
import type { FastifyRequest } from 'fastify';
import type { ApiKeyIdentity, ApiKeyVerifier } from './apiKeys.js';

const REALM = 'Bearer realm="animal-store"';

/** A refused credential; `challenge` is the WWW-Authenticate value to answer with. */
export class BearerError extends Error {
  constructor(
    message: string,
    readonly challenge: string,
  ) {
    super(message);
  }
}

// RFC 7235: the scheme is case-insensitive; RFC 6750 b64token syntax for the credential.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The bearer token of an Authorization header, if it is well-formed. */
export function bearerToken(header: string | undefined): string | undefined {
  return header === undefined ? undefined : BEARER.exec(header)?.[1];
}

/** More than one Authorization header: Node keeps the first, so which one counts is ambiguous. */
function repeatsAuthorization(rawHeaders: string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === 13 && name.toLowerCase() === 'authorization') {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}

export function bearerAuth(verifier: ApiKeyVerifier) {
  return async function authenticate(request: FastifyRequest): Promise<ApiKeyIdentity> {
    if (repeatsAuthorization(request.raw.rawHeaders)) {
      throw new BearerError('Send one Authorization header, not several', `${REALM}, error="invalid_request"`);
    }
    const header = request.headers.authorization;
    if (header === undefined || header === '') {
      throw new BearerError('Missing API key: send Authorization: Bearer <API_KEY>', REALM);
    }
    const match = BEARER.exec(header);
    if (!match) {
      const isBearer = /^Bearer(\s|$)/i.test(header);
      throw isBearer
        ? new BearerError('Malformed bearer token', `${REALM}, error="invalid_token"`)
        : new BearerError('Authorization must use the Bearer scheme', REALM);
    }
    const identity = await verifier.verify(match[1] as string);
    if (!identity) throw new BearerError('Invalid or revoked API key', `${REALM}, error="invalid_token"`);
    request.apiKey = identity;
    return identity;
  };
}
