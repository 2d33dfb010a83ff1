// What each operation takes and returns, derived from the generated types of the contract,
// so that an operation added to the contract needs no hand-written type here.
import type { operationTable } from './generated/operations.js';
import type { operations } from './generated/v1.js';

/** Every operationId of the contract. */
export type OperationId = keyof operations & keyof typeof operationTable;

type Parameters<K extends OperationId> = operations[K]['parameters'];
/** False for a part the operation does not have (`query?: never`). */
type Has<T> = [NonNullable<T>] extends [never] ? false : true;

/** The query parameters of an operation (never when it takes none). */
export type QueryOf<K extends OperationId> = NonNullable<Parameters<K>['query']>;
/** The path parameters of an operation (never when it takes none). */
export type PathOf<K extends OperationId> = NonNullable<Parameters<K>['path']>;
/** The JSON request body of an operation (never when it takes none). */
export type BodyOf<K extends OperationId> = NonNullable<operations[K]['requestBody']> extends { content: { 'application/json': infer B } } ? B : never;

type Responses<K extends OperationId> = operations[K]['responses'];
type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 206;
/** The body of an operation's success answer (never while it has none, like listOrders today). */
export type DataOf<K extends OperationId> = {
  [S in keyof Responses<K> & SuccessStatus]: Responses<K>[S] extends { content: { 'application/json': infer T } }
    ? T
    : Responses<K>[S] extends { content: { 'text/csv': unknown } }
      ? ReadableStream<Uint8Array>
      : undefined;
}[keyof Responses<K> & SuccessStatus];

/** True when the contract declares an `ETag` header on the operation's success answer (getPet, createPet, updatePet). */
export type AnswersETag<K extends OperationId> = true extends {
  [S in keyof Responses<K> & SuccessStatus]: Responses<K>[S] extends { headers: { ETag: unknown } } ? true : false;
}[keyof Responses<K> & SuccessStatus]
  ? true
  : false;

/** The operations whose success answer carries an `ETag`. */
export type ETagOperationId = { [K in OperationId]: AnswersETag<K> extends true ? K : never }[OperationId];

/** True when the contract gives the operation an `If-Match` header (updatePet, deletePet). */
export type TakesIfMatch<K extends OperationId> =
  Has<Parameters<K>['header']> extends true ? ('If-Match' extends keyof NonNullable<Parameters<K>['header']> ? true : false) : false;

/** True when the contract gives the operation an `Idempotency-Key` header. */
export type TakesIdempotencyKey<K extends OperationId> =
  Has<Parameters<K>['header']> extends true ? ('Idempotency-Key' extends keyof NonNullable<Parameters<K>['header']> ? true : false) : false;

/** True when the contract marks the operation `deprecated`. */
export type IsDeprecated<K extends OperationId> = (typeof operationTable)[K]['deprecated'];

/** Operations that page with a `cursor` (and announce the next page in `Link: rel="next"`). */
export type PaginatedOperationId = {
  [K in OperationId]: Has<Parameters<K>['query']> extends true ? ('cursor' extends keyof QueryOf<K> ? K : never) : never;
}[OperationId];

/** One element of a paginated operation's array body. */
export type ItemOf<K extends OperationId> = DataOf<K> extends readonly (infer T)[] ? T : never;

/**
 * What `call` takes for an operation: its path parameters, its query and its JSON body, each
 * where the contract has them (required where the contract requires them).
 */
export type ParamsOf<K extends OperationId> = ([PathOf<K>] extends [never] ? unknown : { path: PathOf<K> }) &
  ([QueryOf<K>] extends [never] ? unknown : { query?: QueryOf<K> }) &
  ([BodyOf<K>] extends [never] ? unknown : undefined extends operations[K]['requestBody'] ? { body?: BodyOf<K> } : { body: BodyOf<K> });
