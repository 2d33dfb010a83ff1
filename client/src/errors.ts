// What the client's methods throw: an AnimalStoreError for every error answer (4xx, 5xx,
// after any retries), an AnimalStoreConnectionError when no answer came at all. A caller's
// own abort (AbortSignal) is rethrown as it is.
import type { DeprecationNotice } from './deprecation.js';
import type { components } from './generated/v1.js';
import { retryAfterMs } from './retry.js';
import type { OperationId } from './types.js';

/**
 * The `scope` auth-param of the `WWW-Authenticate` challenge (RFC 6750 §3): the scope a
 * `403 insufficient_scope` names, space-separated if several; undefined without one.
 */
function challengedScope(header: string | null): string | undefined {
  const match = /(?:^|[\s,])scope\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))/i.exec(header ?? '');
  if (!match) return undefined;
  return match[1] !== undefined ? match[1].replace(/\\(.)/g, '$1') : match[2];
}

/** The contract's Error body. */
export type ApiError = components['schemas']['Error'];
export type ErrorDetail = components['schemas']['ErrorDetail'];

/** `code` of an error answer whose body is not the contract's Error (say, a proxy's HTML page). */
export const UNEXPECTED_RESPONSE = 'unexpected_response';

function isApiError(body: unknown): body is ApiError {
  if (typeof body !== 'object' || body === null) return false;
  const { code, message, status } = body as Record<string, unknown>;
  return typeof code === 'string' && typeof message === 'string' && typeof status === 'number';
}

export interface AnimalStoreErrorInit {
  operation: OperationId;
  response: Response;
  /** The answer's body as openapi-fetch read it (parsed JSON, text, or undefined). */
  body: unknown;
  idempotencyKey: string | undefined;
  deprecation: DeprecationNotice | undefined;
}

/** An error answer of the service. `code` is an open set: rely on `status` for codes you do not know. */
export class AnimalStoreError extends Error {
  override readonly name = 'AnimalStoreError';
  /** The HTTP status. */
  readonly status: number;
  /** The Error body's `code` (`not_found`, `rate_limited`, ...), or `unexpected_response`. */
  readonly code: string;
  /** For a 400: the rule the request broke. */
  readonly details: ErrorDetail[] | undefined;
  /** `X-Request-Id` of the answer: quote it when reporting a problem. */
  readonly requestId: string | undefined;
  /** Seconds the service asked to wait (`Retry-After`), when the retries gave up on a 429, 503 or 409. */
  readonly retryAfter: number | undefined;
  /** The Idempotency-Key sent (every attempt sent the same): repeat the call with it to be safe. */
  readonly idempotencyKey: string | undefined;
  /**
   * For a 403 `insufficient_scope`: the scope the API key lacks (`pets:write`), as
   * `WWW-Authenticate` names it (`scope="pets:write"`); createApiKey's 403 names the scope
   * asked for that the calling key does not hold. Undefined on other answers.
   */
  readonly scope: string | undefined;
  /** The operationId that failed. */
  readonly operation: OperationId;
  /** The Error body; synthesized, with code `unexpected_response`, when the answer had none. */
  readonly body: ApiError;
  readonly response: Response;
  /** For a deprecated operation: its notice, sent with errors too. */
  readonly deprecation: DeprecationNotice | undefined;

  constructor(init: AnimalStoreErrorInit) {
    const { response } = init;
    const body: ApiError = isApiError(init.body)
      ? init.body
      : {
          code: UNEXPECTED_RESPONSE,
          status: response.status,
          message: `HTTP ${response.status} without the API's Error body${typeof init.body === 'string' && init.body ? `: ${init.body.slice(0, 200)}` : ''}`,
        };
    const requestId = response.headers.get('x-request-id') ?? undefined;
    super(`${init.operation}: ${response.status} ${body.code}: ${body.message}${requestId ? ` (request ${requestId})` : ''}`);
    const wait = retryAfterMs(response.headers.get('retry-after'));
    this.status = response.status;
    this.code = body.code;
    this.details = body.details;
    this.requestId = requestId;
    this.retryAfter = wait === undefined ? undefined : Math.ceil(wait / 1000);
    this.idempotencyKey = init.idempotencyKey;
    this.scope = challengedScope(response.headers.get('www-authenticate'));
    this.operation = init.operation;
    this.body = body;
    this.response = response;
    this.deprecation = init.deprecation;
  }
}

/** No answer came: the connection failed, every attempt the retries allowed. `cause` is fetch's error. */
export class AnimalStoreConnectionError extends Error {
  override readonly name = 'AnimalStoreConnectionError';
  readonly operation: OperationId;
  /** The Idempotency-Key sent: the request may have been processed, so repeat the call with this key. */
  readonly idempotencyKey: string | undefined;

  constructor(operation: OperationId, idempotencyKey: string | undefined, cause: unknown) {
    super(`${operation}: no answer from the service (${cause instanceof Error ? cause.message : String(cause)})`, { cause });
    this.operation = operation;
    this.idempotencyKey = idempotencyKey;
  }
}
