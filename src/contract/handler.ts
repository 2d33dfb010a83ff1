// What each operation's handler receives and may answer, derived from the generated
// `operations` type. A handler typed `Handler<'getPet'>` cannot answer a status the
// contract does not declare, nor a body of the wrong shape: change the spec, run
// `npm run generate`, and the compiler points at every handler that must follow.
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';

import type { operations } from '../../generated/v1.js';
import type { Scope } from './scopes.js';
import type { OperationId } from './spec.js';
import type { ReadFrom } from '../db/consistency.js';
import type { Transaction } from '../db/transaction.js';
import type { Serialized } from '../db/serialized.js';

export type { OperationId };
type Operation<K extends OperationId> = operations[K];

type Present<T> = [Exclude<T, undefined>] extends [never] ? Record<string, never> : Exclude<T, undefined>;
type JsonOf<T> = T extends { content: { 'application/json': infer Body } } ? Body : undefined;

/** Declared keys of an object type, without its `[name: string]: unknown` index signature. */
type Declared<T> = { [P in keyof T as string extends P ? never : P]: T[P] };

/**
 * Headers the handler must set itself. Those added by middleware and hooks (authentication
 * challenge, retry hints, deprecation notices, idempotent replays, the rate limit's counts)
 * are not the handler's job.
 */
type CrossCuttingHeader =
  | 'WWW-Authenticate'
  | 'Retry-After'
  | 'Deprecation'
  | 'Sunset'
  | 'Link'
  | 'Idempotent-Replayed'
  | 'RateLimit-Limit'
  | 'RateLimit-Remaining'
  | 'RateLimit-Reset'
  | 'RateLimit-Policy'
  | 'RateLimit';
type HandlerHeaders<R> = R extends { headers: infer H } ? Omit<Declared<H>, CrossCuttingHeader> : Record<string, never>;

export type PathParams<K extends OperationId> = Present<Operation<K>['parameters']['path']>;
export type QueryParams<K extends OperationId> = Present<Operation<K>['parameters']['query']>;
/** The header parameters the operation declares, by their names in the contract. */
export type HeaderParams<K extends OperationId> = Present<Operation<K>['parameters']['header']>;
/** A request body as the handler takes it: a streamed one (`text/csv`, `application/x-ndjson`) as the stream of its bytes, read as it arrives. */
type BodyOf<B> = Streamed<B> extends true ? Readable : JsonOf<B>;

/** The body the operation takes; `undefined` too when the contract makes it optional (nothing was sent). */
export type RequestBody<K extends OperationId> = Operation<K> extends { requestBody: infer B }
  ? BodyOf<B>
  : Operation<K> extends { requestBody?: infer B }
    ? BodyOf<Exclude<B, undefined>> | undefined
    : undefined;

export type Responses<K extends OperationId> = Operation<K>['responses'];
export type DeclaredStatus<K extends OperationId> = keyof Responses<K> & number;

/** Whether the answer's body is streamed text (`text/csv`, `application/x-ndjson`): the handler gives a stream. */
type Streamed<T> = T extends { content: { 'text/csv': unknown } } ? true : T extends { content: { 'application/x-ndjson': unknown } } ? true : false;

/**
 * A declared body, as a value to serialize or as its JSON already written (src/db/serialized.ts),
 * or, for a streamed one, the stream of its text (its Content-Type among the answer's headers).
 */
type AnswerBody<R> = Streamed<R> extends true ? Readable : [JsonOf<R>] extends [undefined] ? undefined : JsonOf<R> | Serialized<JsonOf<R>>;

/** One answer: a status the operation declares, with the body and headers declared for it. */
export type HandlerResult<K extends OperationId> = {
  [S in DeclaredStatus<K>]: keyof HandlerHeaders<Responses<K>[S]> extends never
    ? { status: S; body: AnswerBody<Responses<K>[S]>; headers?: Record<string, string> }
    : { status: S; body: AnswerBody<Responses<K>[S]>; headers: HandlerHeaders<Responses<K>[S]> & Record<string, string> };
}[DeclaredStatus<K>];

/** Facts about the request that middleware establishes before the handler runs. */
export interface RequestContext {
  /** The API key the request was authenticated with (every operation requires one). */
  apiKeyId?: number;
  /** The scopes the secret sent holds (set with `apiKeyId`). */
  apiKeyScopes?: ReadonlySet<Scope>;
  /** When that key expires, in ms since the epoch (Infinity: never); set with `apiKeyId`. */
  apiKeyExpiresAt?: number;
  /** Whether the secret sent is the key's previous one, in its rotation's grace; set with `apiKeyId`. */
  apiKeyPreviousSecret?: boolean;
  /** The SHA-256 hash of the secret sent; set with `apiKeyId`. */
  apiKeySecretHash?: Buffer;
  /** The request's logger (its lines carry the request id). */
  log: FastifyBaseLogger;
  /** The request's `Accept` header, for an operation that answers in more than one media type (exportPets). */
  accept?: string;
  /** The media type of a streamed body (its Content-Type without parameters): createPetImport's, CSV or NDJSON. */
  mediaType?: string;
  /** The body's length as `Content-Length` declares it (absent when chunked), for a streamed body read by its handler. */
  contentLength?: number;
  /**
   * Where the request's reads go: set by the read-your-writes middleware when a replica is
   * configured (src/middleware/read-your-writes.ts); undefined reads from the replica if any.
   */
  readFrom?: ReadFrom;
  /**
   * The transaction the request's writes belong in, when middleware opened one (the
   * idempotency middleware stores the answer in it, so writes and answer commit together).
   * A handler that writes must write in it when it is set.
   */
  transaction?: Transaction;
}

export interface HandlerInput<K extends OperationId> {
  params: PathParams<K>;
  query: QueryParams<K>;
  headers: HeaderParams<K>;
  body: RequestBody<K>;
  context: RequestContext;
}

/**
 * A handler: typed input in, a declared answer out. What it uses is what the app's feature
 * plugins decorate the instance with (the repositories, `config`, `cursors`...), as
 * fastify/demo's handlers do: each plugin declares its decorations on FastifyInstance.
 */
export type Handler<K extends OperationId> = (input: HandlerInput<K>, app: FastifyInstance) => Promise<HandlerResult<K>>;
