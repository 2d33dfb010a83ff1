// Facts the server reads from the contract at start-up. The spec is the only place they
// are written: the base path comes from `servers`, the deprecation headers from
// `deprecated` / `x-deprecated-since` / `x-sunset` / `x-successor`.
import type { FastifyRequest } from 'fastify';
import openapi from '../../generated/openapi.js';

export const spec = openapi;

type Operation = {
  operationId?: string;
  parameters?: { $ref?: string; name?: string; in?: string }[];
  requestBody?: { required?: boolean };
  deprecated?: boolean;
  'x-sunset'?: string;
  'x-deprecated-since'?: string;
  'x-successor'?: string;
};

export interface OperationInfo {
  operationId: string;
  method: string;
  path: string;
  operation: Operation;
}

const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

export const operations: OperationInfo[] = Object.entries(spec.paths as Record<string, Record<string, Operation | undefined>>).flatMap(
  ([path, item]) =>
    methods.flatMap((method) => {
      const operation = item[method];
      return operation?.operationId ? [{ operationId: operation.operationId, method: method.toUpperCase(), path, operation }] : [];
    }),
);

/** `/v1`: the path of the first server URL, with its variables at their defaults. */
export const basePath: string = (() => {
  const server = spec.servers[0] as { url: string; variables?: Record<string, { default: string }> };
  const url = server.url.replace(/\{(\w+)\}/g, (_, name: string) => server.variables?.[name]?.default ?? name);
  return new URL(url).pathname.replace(/\/$/, '');
})();

/** The path under `basePath` of an operation, in Fastify's `:param` form left as-is. */
export function operationPath(operationId: string): string {
  const found = operations.find((o) => o.operationId === operationId);
  if (!found) throw new Error(`The contract has no operation ${operationId}`);
  return `${basePath}${found.path}`;
}

function parseDate(value: string, what: string): Date {
  const date = new Date(`${value}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(date.getTime())) throw new Error(`${what} is not a YYYY-MM-DD date: ${value}`);
  return date;
}

/**
 * For each deprecated operation, the headers every answer must carry:
 * Deprecation (RFC 9745), Sunset (RFC 8594), Link (RFC 8288) to the successor.
 */
export const deprecationHeaders: ReadonlyMap<string, Readonly<Record<string, string>>> = new Map(
  operations
    .filter((o) => o.operation.deprecated === true)
    .map((o) => {
      const { operationId, operation } = o;
      const sunset = parseDate(operation['x-sunset'] ?? '', `${operationId} x-sunset`);
      const since = parseDate(operation['x-deprecated-since'] ?? '', `${operationId} x-deprecated-since`);
      const headers: Record<string, string> = {
        deprecation: `@${Math.floor(since.getTime() / 1000)}`,
        sunset: sunset.toUTCString(),
      };
      if (operation['x-successor']) headers.link = `<${operationPath(operation['x-successor'])}>; rel="successor-version"`;
      return [operationId, headers] as const;
    }),
);

/** Operations whose request body the contract marks required. */
export const bodyRequired: ReadonlySet<string> = new Set(
  operations.filter((o) => o.operation.requestBody?.required === true).map((o) => o.operationId),
);

/** Operations that accept an Idempotency-Key header (directly or through a $ref). */
export const idempotentOperations: ReadonlySet<string> = new Set(
  operations
    .filter((o) =>
      (o.operation.parameters ?? []).some((p) => {
        const resolved = p.$ref
          ? (spec.components.parameters as Record<string, { name?: string; in?: string }>)[p.$ref.split('/').pop() ?? '']
          : p;
        return resolved?.in === 'header' && resolved.name === 'Idempotency-Key';
      }),
    )
    .map((o) => o.operationId),
);

/** The operationId of the route a request was matched to (undefined outside the contract). */
export function operationIdOf(request: FastifyRequest): string | undefined {
  return (request.routeOptions.schema as { operationId?: string } | undefined)?.operationId;
}

/** The operation a request was for: its operationId, else its route, else `unmatched`. */
export function operationOf(request: FastifyRequest): string {
  return operationIdOf(request) ?? request.routeOptions.url ?? 'unmatched';
}
