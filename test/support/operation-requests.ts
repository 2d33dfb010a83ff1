// One request for each operation of the contract, read from the generated operation table,
// so that tests that go through every operation (authentication, scopes, keys of earlier
// versions) need no edit when an operation is added.
import { basePath, operationTable, type OperationEntry, type PathOperationId } from '../../generated/operations.js';
import type { ApiRequest } from '../helper.js';

/** An id no row has: a lookup of it is 404, a change of it changes nothing. */
export const UNKNOWN_ID = 999999;

/**
 * The operation's method on its path, every path parameter an unknown id, and `{}` as the
 * body of an operation that takes one. Authentication and scopes are decided before the body
 * is validated, so such a request reaches them; past them it is a 400 or a 404 that changes
 * nothing.
 */
export function requestFor(operationId: PathOperationId): ApiRequest {
  const { method, path, requestBody }: OperationEntry = operationTable[operationId];
  const url = basePath + path.replace(/\{[^}]+\}/g, String(UNKNOWN_ID));
  return requestBody ? { method, url, headers: { 'content-type': 'application/json' }, payload: '{}' } : { method, url };
}

/** Every operation of the contract's paths, in its order, with its request. */
export const everyOperation: [PathOperationId, ApiRequest][] = (Object.keys(operationTable) as PathOperationId[]).map((operationId) => [operationId, requestFor(operationId)]);

/**
 * The scopes that give an operation: one per alternative of its security requirement (none
 * for an operation every key may call).
 */
export function scopesOf(operationId: PathOperationId): string[] {
  const { security }: OperationEntry = operationTable[operationId];
  return security.flatMap((requirement) => requirement.scopes.bearerAuth ?? []);
}
