// Checks any response against openapi/v1.yaml: the status must be one the operation
// declares, the body must match the schema declared for it, and the declared required
// headers must be present and valid. The schemas come from the contract, never from
// shapes written in tests, so the whole suite doubles as a conformance check: what each
// operation declares from the operation table that `npm run generate` wrote
// (generated/operations.ts, every `$ref` of a response or header resolved), the schemas
// those name from the spec file.
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { basePath, operationTable, type HeaderEntry, type JsonSchema, type OperationEntry } from '../generated/operations.js';

type Json = Record<string, any>;
export const specDocument: Json = parse(readFileSync(new URL('../openapi/v1.yaml', import.meta.url), 'utf8'));

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema({ $id: 'spec', components: specDocument.components });
const compiled = new Map<string, ValidateFunction>();

function validator(pointer: string, schema: JsonSchema): ValidateFunction {
  let fn = compiled.get(pointer);
  if (!fn) {
    fn = ajv.compile(rebase(schema));
    compiled.set(pointer, fn);
  }
  return fn;
}

/** Inline schemas refer to `#/components/...`; point them at the registered spec. */
function rebase(schema: JsonSchema): Json {
  return JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, '"$ref":"spec#/'));
}

const tableOperations: readonly OperationEntry[] = Object.values(operationTable);
// Each operation's path as a pattern, a `{parameter}` standing for one segment.
const patterns = new Map(tableOperations.map((o) => [o, new RegExp(`^${o.path.replace(/\{[^}]+\}/g, '[^/]*')}$`)] as const));

export interface MatchedOperation {
  operationId: string;
  operation: OperationEntry;
}

/** The operation of the contract that a method and URL address, if any. */
export function findOperation(method: string, url: string): MatchedOperation | undefined {
  const path = url.split(/[?#]/)[0] ?? '';
  if (!path.startsWith(`${basePath}/`)) return undefined;
  const rest = path.slice(basePath.length);
  try {
    decodeURIComponent(rest);
  } catch {
    return undefined; // a path that cannot be decoded names no operation
  }
  // HEAD is answered wherever GET is (RFC 9110 §9.3.2): GET's operation, without a body.
  const wanted = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  const operation = tableOperations.find((o) => o.method === wanted && patterns.get(o)?.test(rest));
  return operation && { operationId: operation.operationId, operation };
}

export interface ResponseLike {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** Problems with a response, empty when it conforms. */
export function contractViolations(method: string, url: string, response: ResponseLike): string[] {
  const problems: string[] = [];
  const head = method.toUpperCase() === 'HEAD';
  if (head && response.body !== '') return [`HEAD ${url} answered a body: ${response.body.slice(0, 100)}`];
  const matched = findOperation(method, url);
  const status = String(response.statusCode);
  let declared: { headers: readonly HeaderEntry[]; json?: JsonSchema; streamed?: readonly string[] } | undefined;
  let where: string;
  if (matched) {
    where = `${matched.operationId} ${status}`;
    declared = matched.operation.responses[status];
    if (!declared) return [`${matched.operationId} does not declare status ${status}`];
  } else if (/^\/(v1\/openapi\.(json|yaml)|healthz|readyz|docs(\/.*)?)?$/.test(url.split(/[?#]/)[0] ?? '') && (method === 'GET' || head)) {
    // Beside the operations: the root, the contract itself, the probes and the docs (tested
    // in test/api/served-contract.test.ts and test/api/service.test.ts).
    return [];
  } else {
    // Outside the contract's operations the only answers are 404 (no such path) and 405 (a
    // path with another method; Allow names them), with the Error body.
    where = `${method} ${url} ${status}`;
    if (response.statusCode !== 404 && response.statusCode !== 405) return [`${method} ${url} is not in the contract but answered ${status}`];
    declared = {
      headers: response.statusCode === 405 ? [{ name: 'Allow', required: true, type: 'string', schema: { type: 'string', pattern: '^[A-Z]+(, [A-Z]+)*$' } }] : [],
      json: { $ref: '#/components/schemas/Error' },
    };
  }

  for (const { name, required, type, schema } of declared.headers) {
    const value = response.headers[name.toLowerCase()];
    if (value === undefined) {
      if (required) problems.push(`${where}: missing header ${name}`);
      continue;
    }
    const typed = type === 'integer' ? Number(value) : value;
    const check = validator(`header:${matched?.operationId}:${status}:${name}`, schema);
    if (!check(typed)) problems.push(`${where}: header ${name}=${String(value)} ${ajv.errorsText(check.errors)}`);
  }

  const schema = declared.json;
  if (head) {
    // GET's headers and status were checked above; a HEAD answer has no body to check.
    if (schema && !String(response.headers['content-type'] ?? '').startsWith('application/json')) problems.push(`${where}: content-type ${String(response.headers['content-type'])}, not GET's application/json`);
  } else if (schema) {
    const type = String(response.headers['content-type'] ?? '');
    if (!type.startsWith('application/json')) problems.push(`${where}: content-type ${type}, not application/json`);
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      return [...problems, `${where}: body is not JSON: ${response.body.slice(0, 100)}`];
    }
    const check = validator(`body:${matched?.operationId}:${status}`, schema);
    if (!check(body)) problems.push(`${where}: body ${ajv.errorsText(check.errors)}: ${response.body.slice(0, 200)}`);
    if (response.statusCode >= 400 && (body as Json).status !== response.statusCode) {
      problems.push(`${where}: Error.status ${(body as Json).status} differs from the HTTP status`);
    }
  } else if (declared.streamed) {
    // A streamed body (exportPets): one of the media types declared; its text is the test's to read.
    const type = String(response.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
    if (!declared.streamed.includes(type)) problems.push(`${where}: content-type ${type}, not one of ${declared.streamed.join(', ')}`);
  } else if (response.body !== '') {
    problems.push(`${where}: declares no body but got ${response.body.slice(0, 100)}`);
  }
  return problems;
}
