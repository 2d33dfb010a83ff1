// What each operation's handler receives and may answer, derived from the generated
// `operations` type. A handler typed `Handler<'getPet'>` cannot answer a status the
// contract does not declare, nor a body of the wrong shape: change the spec, run
// `npm run generate`, and the compiler points at every handler that must follow.
import type { operations } from '../../generated/v1.js';

export type OperationId = keyof operations;
type Operation<K extends OperationId> = operations[K];

type Present<T> = [Exclude<T, undefined>] extends [never] ? Record<string, never> : Exclude<T, undefined>;
type JsonOf<T> = T extends { content: { 'application/json': infer Body } } ? Body : undefined;

/** Declared keys of an object type, without its `[name: string]: unknown` index signature. */
type Declared<T> = { [P in keyof T as string extends P ? never : P]: T[P] };

/**
 * Headers the handler must set itself. Those added for every answer by cross-cutting hooks
 * (authentication challenge, retry hints, deprecation notices) are not the handler's job.
 */
type CrossCuttingHeader = 'WWW-Authenticate' | 'Retry-After' | 'Deprecation' | 'Sunset' | 'Link';
type HandlerHeaders<R> = R extends { headers: infer H } ? Omit<Declared<H>, CrossCuttingHeader> : Record<string, never>;

export type PathParams<K extends OperationId> = Present<Operation<K>['parameters']['path']>;
export type QueryParams<K extends OperationId> = Present<Operation<K>['parameters']['query']>;
export type RequestBody<K extends OperationId> = Operation<K> extends { requestBody: infer B } ? JsonOf<B> : undefined;

export type Responses<K extends OperationId> = Operation<K>['responses'];
export type DeclaredStatus<K extends OperationId> = keyof Responses<K> & number;

/** One answer: a status the operation declares, with the body and headers declared for it. */
export type HandlerResult<K extends OperationId> = {
  [S in DeclaredStatus<K>]: keyof HandlerHeaders<Responses<K>[S]> extends never
    ? { status: S; body: JsonOf<Responses<K>[S]>; headers?: Record<string, string> }
    : { status: S; body: JsonOf<Responses<K>[S]>; headers: HandlerHeaders<Responses<K>[S]> & Record<string, string> };
}[DeclaredStatus<K>];

/** Facts about the request that cross-cutting plugins establish before the handler runs. */
export interface RequestContext {
  /** The API key the request was authenticated with (every operation requires one). */
  apiKeyId?: number;
  /** Set when the request carries an Idempotency-Key that this request has claimed. */
  idempotency?: { apiKeyId: number; key: string };
}

export interface HandlerInput<K extends OperationId> {
  params: PathParams<K>;
  query: QueryParams<K>;
  body: RequestBody<K>;
  context: RequestContext;
}

/** A handler: typed input in, a declared answer out. `Services` is what the app provides. */
export type Handler<K extends OperationId, Services = unknown> = (
  input: HandlerInput<K>,
  services: Services,
) => Promise<HandlerResult<K>>;
