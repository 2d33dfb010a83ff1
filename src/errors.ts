// The catalogue of errors this service answers with. Every error response carries the
// contract's Error body {code, message, status}; the codes are listed on the Error schema
// in openapi/v1.yaml, and clients must tolerate new ones.
import createError from '@fastify/error';

export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'not_found'
  | 'request_timeout'
  | 'idempotency_in_flight'
  | 'payload_too_large'
  | 'precondition_failed'
  | 'unsupported_media_type'
  | 'range_not_satisfiable'
  | 'expectation_failed'
  | 'idempotency_key_reused'
  | 'rate_limited'
  | 'headers_too_large'
  | 'internal'
  | 'not_implemented'
  | 'unavailable';

export interface ErrorDetail {
  location: string;
  field: string;
  rule: string;
  message: string;
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
  details?: ErrorDetail[];
}

/**
 * Errors thrown from hooks, where no typed handler answer is possible. (Handlers return
 * their error answers, typed by the contract; the error handler builds the others.)
 */
export const errors = {
  idempotencyInFlight: createError('idempotency_in_flight', 'A request with this Idempotency-Key is still being processed', 409),
  idempotencyKeyReused: createError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request body', 422),
};

const codes: ReadonlySet<string> = new Set<ErrorCode>([
  'bad_request', 'unauthorized', 'not_found', 'request_timeout', 'idempotency_in_flight', 'payload_too_large', 'precondition_failed',
  'unsupported_media_type', 'range_not_satisfiable', 'expectation_failed', 'idempotency_key_reused', 'rate_limited',
  'headers_too_large', 'internal', 'not_implemented', 'unavailable',
]);

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && codes.has(value);
}

export function errorBody(code: ErrorCode, status: number, message: string, details?: ErrorDetail[]): ErrorBody {
  return details && details.length > 0 ? { code, message, status, details } : { code, message, status };
}

/** An error whose answer is already known, details included (thrown from parsers and hooks). */
export class ContractError extends Error {
  readonly statusCode: number;
  constructor(readonly body: ErrorBody) {
    super(body.message);
    this.statusCode = body.status;
  }
}
