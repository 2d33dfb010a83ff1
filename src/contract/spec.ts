// Facts the server reads from the contract at start-up. The spec is the only place they
// are written: the base path comes from `servers`, each operation's middleware from its
// parameters, security, request body and `deprecated` / `x-sunset` / `x-deprecated-since`
// / `x-successor` (src/contract/operations.ts composes them).
import type { FastifyRequest } from 'fastify';
import openapi from '../../generated/openapi.js';
import type { OperationId } from './handler.js';

export const spec = openapi;

interface Parameter {
  $ref?: string;
  name?: string;
  in?: string;
  required?: boolean;
  schema?: { type?: string; $ref?: string };
}

interface Operation {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; $ref?: string };
  responses?: Record<string, { $ref?: string; headers?: Record<string, unknown> }>;
  security?: Record<string, string[]>[];
  deprecated?: boolean;
  'x-sunset'?: string;
  'x-deprecated-since'?: string;
  'x-successor'?: string;
  'x-successor-query'?: string;
}

export interface OperationInfo {
  operationId: OperationId;
  /** Upper case: `GET`. */
  method: string;
  /** The contract's path, under the base path: `/pets/{petId}`. */
  path: string;
  operation: Operation;
  /** Every parameter it declares, `$ref`s resolved; `list` when it takes several values. */
  parameters: { name: string; in: string; required: boolean; list: boolean }[];
  /** The security schemes it requires (all of one alternative); empty for a public one. */
  security: { schemes: string[] }[];
}

const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

function resolveParameter(parameter: Parameter): OperationInfo['parameters'][number] {
  const resolved = parameter.$ref ? (spec.components.parameters as Record<string, Parameter>)[parameter.$ref.split('/').pop() ?? ''] : parameter;
  if (!resolved?.name || !resolved.in) throw new Error(`The contract has a parameter without name or location: ${JSON.stringify(parameter)}`);
  const schema = resolved.schema?.$ref ? (spec.components.schemas as Record<string, { type?: string }>)[resolved.schema.$ref.split('/').pop() ?? ''] : resolved.schema;
  return { name: resolved.name, in: resolved.in, required: resolved.required === true, list: schema?.type === 'array' };
}

const globalSecurity = (spec as { security?: Record<string, string[]>[] }).security ?? [];

export const operations: OperationInfo[] = Object.entries(spec.paths as Record<string, Record<string, Operation | undefined>>).flatMap(([path, item]) =>
  methods.flatMap((method) => {
    const operation = item[method];
    if (!operation?.operationId) return [];
    return [
      {
        operationId: operation.operationId as OperationId,
        method: method.toUpperCase(),
        path,
        operation,
        parameters: (operation.parameters ?? []).map(resolveParameter),
        security: (operation.security ?? globalSecurity).map((requirement) => ({ schemes: Object.keys(requirement) })),
      },
    ];
  }),
);

/** The operation of this id; throws when the contract has none. */
export function operationInfo(operationId: string): OperationInfo {
  const found = operations.find((o) => o.operationId === operationId);
  if (!found) throw new Error(`The contract has no operation ${operationId}`);
  return found;
}

/** `/v1`: the path of the first server URL, with its variables at their defaults. */
export const basePath: string = (() => {
  const server = spec.servers[0] as { url: string; variables?: Record<string, { default: string }> };
  const url = server.url.replace(/\{(\w+)\}/g, (_, name: string) => server.variables?.[name]?.default ?? name);
  return new URL(url).pathname.replace(/\/$/, '');
})();

/** The path under `basePath` of an operation, with its `{parameters}` as written. */
export function operationPath(operationId: string): string {
  return `${basePath}${operationInfo(operationId).path}`;
}

/** The header parameters of an operation, by their names in the contract. */
export function headerParameters(operation: OperationInfo): string[] {
  return operation.parameters.filter((p) => p.in === 'header').map((p) => p.name);
}

/** Whether the operation accepts an Idempotency-Key header (directly or through a $ref). */
export function isIdempotent(operation: OperationInfo): boolean {
  return headerParameters(operation).includes('Idempotency-Key');
}

/** Whether the operation takes a body, and whether the contract requires it (`$ref`s resolved). */
export function requestBodyOf(info: OperationInfo): { required: boolean } | undefined {
  const body = info.operation.requestBody;
  if (!body) return undefined;
  const resolved = body.$ref ? (spec.components as { requestBodies?: Record<string, { required?: boolean }> }).requestBodies?.[body.$ref.split('/').pop() ?? ''] : body;
  return { required: resolved?.required === true };
}

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
  type Declared = Parameter & { schema?: { $ref?: string; type?: string } };
  const resolve = <T>(ref: string | undefined, from: Record<string, T>): T | undefined => (ref ? from[ref.split('/').pop() ?? ''] : undefined);
  const parameter = (info.operation.parameters ?? [])
    .map((p) => resolve(p.$ref, spec.components.parameters as Record<string, Declared>) ?? (p as Declared))
    .find((p) => p.name === name && p.in === 'path');
  const schema = resolve(parameter?.schema?.$ref, spec.components.schemas as Record<string, { type?: string }>) ?? parameter?.schema;
  return schema?.type === 'integer' ? (value) => POSITIVE.test(value) && Number.isSafeInteger(Number(value)) : (value) => TOKEN.test(value);
}

/** For a deprecated operation, what its answers announce; undefined for any other. */
export function deprecationOf(info: OperationInfo): Deprecation | undefined {
  const { operationId, operation } = info;
  if (operation.deprecated !== true) return undefined;
  const sunset = parseDate(operation['x-sunset'] ?? '', `${operationId} x-sunset`);
  const since = parseDate(operation['x-deprecated-since'] ?? '', `${operationId} x-deprecated-since`);
  const headers = { deprecation: `@${Math.floor(since.getTime() / 1000)}`, sunset: sunset.toUTCString() };
  const successor = operation['x-successor'];
  if (!successor) return { headers };
  const path = operationPath(successor);
  const plain = `<${path}>; rel="successor-version"`;
  const query = operation['x-successor-query'];
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

/** The default the contract gives a parameter of an operation (undefined: none). */
export function parameterDefault(operationId: string, name: string): unknown {
  type WithDefault = Parameter & { schema?: { default?: unknown } };
  const declared = (operationInfo(operationId).operation.parameters ?? [])
    .map((p) => (p.$ref ? (spec.components.parameters as Record<string, WithDefault>)[p.$ref.split('/').pop() ?? ''] : (p as WithDefault)))
    .find((p) => p?.name === name);
  return declared?.schema?.default;
}
