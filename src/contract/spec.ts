// Facts the server needs from the contract, from the operation table that `npm run
// generate` wrote into generated/operations.ts (scripts/generate.ts): the contract is read,
// and its `$ref`s resolved, once, by the generator, never here at run time. The base path
// comes from `servers`; each operation's middleware (src/routes/middleware.ts composes
// it, src/app.ts lists it) from its parameters, security, request body and `deprecated` /
// `x-sunset` / `x-deprecated-since` / `x-successor`. `spec` is the document itself, for
// what needs the whole of it: fastify-openapi-glue's routes, Swagger UI, the served copy.
import type { FastifyRequest } from 'fastify';
import openapi from '../../generated/openapi.js';
import {
  basePath as generatedBasePath,
  operationTable,
  type OperationEntry,
  type OperationTable,
  type ParameterEntry,
  type PathOperationId,
} from '../../generated/operations.js';


export const spec = openapi;

/** An operation the service serves (the contract's top-level `webhooks` are requests it sends). */
export type OperationId = PathOperationId;

/** An operation as the generator resolved it (generated/operations.ts). */
export type OperationInfo = OperationEntry & { readonly operationId: OperationId };

const entries: readonly OperationInfo[] = Object.values(operationTable);

/** Every operation of the contract, in its order. */
export const operations: readonly OperationInfo[] = entries;

/** The operation of this id; throws when the contract has none. */
export function operationInfo(operationId: string): OperationInfo {
  const found = operations.find((o) => o.operationId === operationId);
  if (!found) throw new Error(`The contract has no operation ${operationId}`);
  return found;
}

/** `/v1`: the path of the first server URL, with its variables at their defaults. */
export const basePath: string = generatedBasePath;

/** The path under `basePath` of an operation, with its `{parameters}` as written. */
export function operationPath(operationId: string): string {
  return `${basePath}${operationInfo(operationId).path}`;
}

/** The header parameters of an operation, by their names in the contract. */
export function headerParameters(operation: OperationInfo): string[] {
  return operation.parameters.filter((p) => p.in === 'header').map((p) => p.name);
}

/** Whether the operation accepts an Idempotency-Key header (declared directly or through a `$ref`). */
export function isIdempotent(operation: OperationInfo): boolean {
  return operation.idempotencyKey;
}

/** Whether the operation takes a body, and whether the contract requires it. */
export function requestBodyOf(info: OperationInfo): { required: boolean } | undefined {
  return info.requestBody;
}

type ParameterOf<K extends OperationId> = OperationTable[K]['parameters'][number];
/** The names of an operation's parameters whose schema has a default. */
export type DefaultedParameter<K extends OperationId> = Extract<ParameterOf<K>, { readonly default: unknown }>['name'];
/** The default of that parameter, typed as the contract writes it (`20` for listPets' limit). */
export type ParameterDefault<K extends OperationId, N extends DefaultedParameter<K>> = Extract<ParameterOf<K>, { readonly name: N; readonly default: unknown }>['default'];

/** The contract's default of a parameter: `parameterDefault('listPets', 'limit')` is 20. */
export function parameterDefault<K extends OperationId, N extends DefaultedParameter<K>>(operationId: K, name: N): ParameterDefault<K, N> {
  const parameters: readonly ParameterEntry[] = operationTable[operationId].parameters;
  const found = parameters.find((p) => p.name === name && p.default !== undefined);
  if (found?.default === undefined) throw new Error(`${operationId} has no parameter ${name} with a default`);
  return found.default as ParameterDefault<K, N>;
}

/** The operations that take no request body (deletePet): one sent anyway is read and ignored. */
export const bodilessOperations: ReadonlySet<string> = new Set(operations.filter((o) => requestBodyOf(o) === undefined).map((o) => o.operationId));

/** The operations whose request body the contract marks optional (cancelOrder: nothing, or `{}`). */
export const optionalBodies: ReadonlySet<string> = new Set(operations.filter((o) => requestBodyOf(o)?.required === false).map((o) => o.operationId));

/** The operations that accept an Idempotency-Key header. */
export const idempotentOperations: readonly OperationId[] = operations.filter(isIdempotent).map((o) => o.operationId);

/** Every header parameter of the contract, by its lower-case name (Node's) → the contract's. */
export const declaredHeaderNames: ReadonlyMap<string, string> = new Map(
  operations.flatMap(headerParameters).map((name) => [name.toLowerCase(), name] as const),
);

function parseDate(value: string, what: string): Date {
  const date = new Date(`${value}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(date.getTime())) throw new Error(`${what} is not a YYYY-MM-DD date: ${value}`);
  return date;
}

/** What a deprecated operation announces on every answer. */
export interface Deprecation {
  /** Deprecation (RFC 9745) and Sunset (RFC 8594), the same on every answer. */
  headers: Readonly<Record<string, string>>;
  /**
   * Link (RFC 8288) to the successor, for a request with these path parameters: the
   * successor's path, with `x-successor-query` filled in from them (`/v1/pets?id=42`);
   * without it when a parameter is not a plain value (a petId of `abc`).
   */
  link?: (params: Readonly<Record<string, unknown>>) => string;
}

// A path parameter value that may be written into a query as it is: for an integer
// parameter, a positive integer in plain digits that JSON holds exactly; otherwise a token.
const TOKEN = /^[A-Za-z0-9._~-]{1,64}$/;
const POSITIVE = /^[1-9][0-9]{0,15}$/;
function plainValue(info: OperationInfo, name: string): (value: string) => boolean {
  const parameter = info.parameters.find((p) => p.name === name && p.in === 'path');
  return parameter?.type === 'integer' ? (value) => POSITIVE.test(value) && Number.isSafeInteger(Number(value)) : (value) => TOKEN.test(value);
}

/** For a deprecated operation, what its answers announce; undefined for any other. */
export function deprecationOf(info: OperationInfo): Deprecation | undefined {
  const { operationId } = info;
  if (!info.deprecated) return undefined;
  const sunset = parseDate(info.sunset ?? '', `${operationId} x-sunset`);
  const since = parseDate(info.deprecatedSince ?? '', `${operationId} x-deprecated-since`);
  const headers = { deprecation: `@${Math.floor(since.getTime() / 1000)}`, sunset: sunset.toUTCString() };
  const successor = info.successor;
  if (!successor) return { headers };
  const path = operationPath(successor);
  const plain = `<${path}>; rel="successor-version"`;
  const query = info.successorQuery;
  if (!query) return { headers, link: () => plain };
  // `id={petId}` → the parts between the parameters, and the parameters' names.
  const parts = query.split(/\{(\w+)\}/);
  const isPlain = new Map(parts.filter((_, i) => i % 2 === 1).map((name) => [name, plainValue(info, name)] as const));
  return {
    headers,
    link: (params) => {
      let filled = '';
      for (let i = 0; i < parts.length; i++) {
        if (i % 2 === 0) filled += parts[i];
        else {
          const name = parts[i] as string;
          const value = params[name];
          if ((typeof value !== 'string' && typeof value !== 'number') || !isPlain.get(name)?.(String(value))) return plain;
          filled += String(value);
        }
      }
      return `<${path}?${filled}>; rel="successor-version"`;
    },
  };
}

/** The operationId of the route a request was matched to (undefined outside the contract). */
export function operationIdOf(request: FastifyRequest): string | undefined {
  return (request.routeOptions.schema as { operationId?: string } | undefined)?.operationId;
}

/** The operation a request was for, as logs and metrics name it: its operationId, else its route, else `unmatched`. */
export function operationOf(request: FastifyRequest): string {
  return operationIdOf(request) ?? request.routeOptions.url ?? 'unmatched';
}

