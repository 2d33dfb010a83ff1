// Request validation compiled from the contract's schemas, in the contract's own dialect:
// OpenAPI 3.1 schemas are JSON Schema 2020-12, so Ajv2020 (the suite's response checks use
// the same). Two instances because the parts of a request need different rules:
// - path, query and header parameters arrive as strings and are coerced ("20" -> 20);
// - bodies are JSON and are taken as sent: `"categoryId": "5"` is a 400, not a 5.
// Neither removes unknown properties: NewPet's `additionalProperties: false` must refuse
// them (Fastify's default would silently drop them).
//
// Every parameter the contract declares is validated here, headers included. Node gives
// header names in lower case and Fastify lower-cases the header schema only for its own
// compiler, so this one does it for its own (`Idempotency-Key` is `idempotency-key` to it).
import { Ajv2020, type ErrorObject, type Options, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

const common: Options = {
  // The spec carries documentation keywords (`examples`, `x-extensible-enum`, ...) that
  // are not JSON Schema validation keywords; they must not stop the compiler.
  strict: false,
  useDefaults: true,
  removeAdditional: false,
  // Every problem of a request is reported (src/errors/validation-messages.ts bounds how many
  // are listed); bodies are at most BODY_LIMIT bytes, so the work is bounded too.
  allErrors: true,
  // Errors carry the schema they broke, so that a pattern is said in the words of its
  // `x-pattern-description` (src/errors/validation-messages.ts).
  verbose: true,
};

function createAjv(options: Options): Ajv2020 {
  const ajv = new Ajv2020({ ...common, ...options });
  addFormats.default(ajv);
  return ajv;
}

const forParameters = createAjv({ coerceTypes: 'array' });
const forBodies = createAjv({ coerceTypes: false });

// Ajv coerces what Number() accepts ("0x1", "+1", " 1", "1e2", "1.0000000000000001"); an
// integer in a path or query must be plain decimal digits (openapi/v1.yaml, "Numbers").
// Any number of digits: a value past 2^53 - 1 rounds to 2^53 or more, which the schema's
// `maximum` refuses by name.
const DECIMAL = /^-?(?:0|[1-9][0-9]*)$/;

interface ParameterSchema {
  properties?: Record<string, { type?: unknown; items?: { type?: unknown } }>;
  required?: string[];
}

/** Every value given for an integer parameter (or an item of an array of them) that is not plain decimal digits. */
function notPlainDecimal(data: Record<string, unknown>, integers: readonly string[], arrays: readonly string[], inPath: boolean): ErrorObject[] {
  const refused = (instancePath: string, message: string): ErrorObject => ({ keyword: 'type', instancePath, schemaPath: '', params: { type: 'integer' }, message });
  const errors: ErrorObject[] = [];
  for (const name of integers) {
    const given = data[name];
    if (typeof given !== 'string' || DECIMAL.test(given)) continue;
    // `/v1/pets/`: the route of one pet, reached with nothing where its id goes; `?petId=`: a
    // query parameter given without its value.
    const empty = inPath ? 'is empty (the URL ends with a slash where it goes): give it, or remove the slash to reach the collection' : 'is empty: give an integer, or leave the parameter out';
    errors.push(refused(`/${name}`, given === '' ? empty : 'must be an integer in plain decimal digits'));
  }
  for (const name of arrays) {
    const given = data[name];
    (Array.isArray(given) ? given : [given]).forEach((item, at) => {
      if (typeof item !== 'string' || DECIMAL.test(item)) return;
      // `?id=1,2`: the parameter is repeated for several values (`?id=1&id=2`), never a list.
      const message = /^[0-9]+(,[0-9]*)+$/.test(item)
        ? `takes one integer per parameter: repeat it (${name}=${item.split(',').filter(Boolean).join(`&${name}=`)}), not a comma-separated list`
        : 'must be an integer in plain decimal digits';
      errors.push(refused(`/${name}/${at}`, message));
    });
  }
  return errors;
}

function withPlainIntegers(validate: ValidateFunction, schema: ParameterSchema, inPath: boolean): ValidateFunction | ((data: Record<string, unknown>) => boolean) {
  const properties = Object.entries(schema.properties ?? {});
  const integers = properties.filter(([, property]) => property.type === 'integer').map(([name]) => name);
  const arrays = properties.filter(([, property]) => property.type === 'array' && property.items?.type === 'integer').map(([name]) => name);
  if (integers.length === 0 && arrays.length === 0) return validate;
  const plain = (value: unknown): boolean => typeof value !== 'string' || DECIMAL.test(value);
  const check = (data: Record<string, unknown>): boolean => {
    // Every value plain (the usual case): Ajv alone, nothing allocated.
    if (integers.every((name) => plain(data[name])) && arrays.every((name) => (Array.isArray(data[name]) ? (data[name] as unknown[]).every(plain) : plain(data[name])))) {
      const valid = validate(data);
      check.errors = validate.errors;
      return valid;
    }
    const refused = notPlainDecimal(data, integers, arrays, inPath);
    const valid = validate(data);
    if (refused.length === 0) {
      check.errors = validate.errors;
      return valid;
    }
    // Ajv's own words about a value refused here (it would coerce `0x1`, or call `1,2` not an
    // integer) are left out: ours say what to send instead.
    const ours = new Set(refused.map((e) => e.instancePath));
    check.errors = [...refused, ...(validate.errors ?? []).filter((e) => !ours.has(e.instancePath) && ![...ours].some((path) => e.instancePath.startsWith(`${path}/`)))];
    return false;
  };
  check.errors = null as ErrorObject[] | null | undefined;
  return check;
}

/** The header schema with its names in lower case, as Node gives them. */
function lowerCaseHeaders(schema: ParameterSchema): ParameterSchema {
  return {
    ...schema,
    ...(schema.properties ? { properties: Object.fromEntries(Object.entries(schema.properties).map(([name, property]) => [name.toLowerCase(), property])) } : {}),
    ...(schema.required ? { required: schema.required.map((name) => name.toLowerCase()) } : {}),
  };
}

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  if (httpPart === 'body') return forBodies.compile(schema);
  const parameters = httpPart === 'headers' ? lowerCaseHeaders(schema as ParameterSchema) : (schema as ParameterSchema);
  return withPlainIntegers(forParameters.compile(parameters), parameters, httpPart === 'params');
};
