// The catalogue of errors this service answers with: the one place where an error code is
// defined, with its HTTP status. Every error response carries the contract's Error body
// {code, message, status}; the same codes are listed on the Error schema of
// openapi/v1.yaml (test/contract/errors.test.ts compares the two), and clients must
// tolerate new ones.
//
// Errors are raised one way: `throw new ApiError(code, message)`, from a hook, a parser or
// a plugin; the error handler (src/errors/plugin.ts) answers with its body. A handler
// returns its error answers instead (`errorAnswer`), typed by the contract like any other
// answer. Either way, one function writes the answer (src/errors/answer.ts).

export const ERROR_CATALOGUE = {
  bad_request: { status: 400 },
  unauthorized: { status: 401 },
  insufficient_scope: { status: 403 },
  forbidden: { status: 403 },
  not_found: { status: 404 },
  method_not_allowed: { status: 405 },
  not_acceptable: { status: 406 },
  request_timeout: { status: 408 },
  idempotency_in_flight: { status: 409, retryAfter: 1 },
  pet_not_available: { status: 409 },
  pet_reserved: { status: 409 },
  order_closed: { status: 409 },
  import_finished: { status: 409 },
  category_name_taken: { status: 409 },
  api_key_inactive: { status: 409 },
  api_key_limit: { status: 409 },
  webhook_endpoint_limit: { status: 409 },
  cursor_expired: { status: 410 },
  precondition_failed: { status: 412 },
  payload_too_large: { status: 413 },
  unsupported_media_type: { status: 415 },
  range_not_satisfiable: { status: 416 },
  expectation_failed: { status: 417 },
  idempotency_key_reused: { status: 422 },
  pet_not_found: { status: 422 },
  rate_limited: { status: 429 },
  headers_too_large: { status: 431 },
  internal: { status: 500 },
  not_implemented: { status: 501 },
  unavailable: { status: 503, retryAfter: 1 },
} as const satisfies Record<string, { status: number; retryAfter?: number }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;
/** The HTTP status of an error code, as a literal type (`'not_found'` → `404`). */
export type StatusOf<C extends ErrorCode> = (typeof ERROR_CATALOGUE)[C]['status'];

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
 * The longest strings an Error body holds, as the contract bounds them (openapi/v1.yaml:
 * `Error.message`, `ErrorDetail.field` and `ErrorDetail.message`). What a client sent is
 * repeated `shown` (at most 63 characters), so no answer comes near them; `errorBody` holds
 * every answer to them all the same.
 */
export const ERROR_LENGTHS = { message: 1024, field: 128, detailMessage: 512 } as const;

/** The first `length` characters of `text` and `...` (one fewer rather than half a surrogate pair). */
function cut(text: string, length: number): string {
  const last = text.charCodeAt(length - 1);
  return `${text.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length)}...`;
}

/** `text`, or when it is longer than `max` characters, cut to fit, ending in `...`. */
function clipped(text: string, max: number): string {
  return text.length <= max ? text : cut(text, max - 3);
}

/**
 * A name as the client sent it (a query parameter, a property, a JSON Pointer into the
 * body), short enough to repeat in an answer: its first 60 characters and `...`, however
 * long it was.
 */
export function shown(name: string): string {
  return name.length > 60 ? cut(name, 60) : name;
}

/** The Error body of a code: its status comes from the catalogue. */
export function errorBody(code: ErrorCode, message: string, details?: ErrorDetail[]): ErrorBody {
  const status = ERROR_CATALOGUE[code].status;
  const said = clipped(message, ERROR_LENGTHS.message);
  if (!details || details.length === 0) return { code, message: said, status };
  const listed = details.map((d) =>
    d.field.length <= ERROR_LENGTHS.field && d.message.length <= ERROR_LENGTHS.detailMessage
      ? d
      : { ...d, field: clipped(d.field, ERROR_LENGTHS.field), message: clipped(d.message, ERROR_LENGTHS.detailMessage) },
  );
  return { code, message: said, status, details: listed };
}

/**
 * A handler's error answer, `{ status, body }`: the status is the code's, as a literal, so
 * the compiler refuses a code whose status the operation does not declare.
 */
export function errorAnswer<C extends ErrorCode>(code: C, message: string, details?: ErrorDetail[]): { status: StatusOf<C>; body: ErrorBody } {
  return { status: ERROR_CATALOGUE[code].status, body: errorBody(code, message, details) };
}

/** Headers the contract declares with a code's answers (`Retry-After` with 409 and 503). */
export function errorHeaders(code: ErrorCode): Readonly<Record<string, string>> {
  // Undefined for a code this version does not have: an answer stored by an older one and
  // replayed for its Idempotency-Key.
  const entry: { status: number; retryAfter?: number } | undefined = ERROR_CATALOGUE[code];
  return entry?.retryAfter === undefined ? NO_HEADERS : { 'retry-after': String(entry.retryAfter) };
}
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * An error whose answer is known: the code's status, this message, and optionally the
 * details and headers to answer with (a WWW-Authenticate challenge, say).
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly body: ErrorBody;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, options: { details?: ErrorDetail[]; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.body = errorBody(code, message, options.details);
    this.statusCode = this.body.status;
    this.headers = options.headers ? { ...errorHeaders(code), ...options.headers } : errorHeaders(code);
  }
}
