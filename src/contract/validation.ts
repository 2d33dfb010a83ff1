// Request validation compiled from the contract's schemas. Two Ajv instances because the
// parts of a request need different rules:
// - query and path parameters arrive as strings and are coerced ("20" -> 20);
// - bodies are JSON and are taken as sent: `"categoryId": "5"` is a 400, not a 5.
// Neither removes unknown properties: NewPet's `additionalProperties: false` must refuse
// them (Fastify's default would silently drop them).
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

const common: Options = {
  // The spec carries documentation keywords (`examples`, `x-extensible-enum`, ...) that
  // are not JSON Schema validation keywords; they must not stop the compiler.
  strict: false,
  useDefaults: true,
  removeAdditional: false,
  allErrors: false,
};

function createAjv(options: Options): Ajv {
  const ajv = new Ajv({ ...common, ...options });
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
  properties?: Record<string, { type?: unknown }>;
}

function withPlainIntegers(validate: ValidateFunction, schema: ParameterSchema): ValidateFunction | ((data: Record<string, unknown>) => boolean) {
  const integers = Object.entries(schema.properties ?? {})
    .filter(([, property]) => property.type === 'integer')
    .map(([name]) => name);
  if (integers.length === 0) return validate;
  const check = (data: Record<string, unknown>): boolean => {
    for (const name of integers) {
      const given = data[name];
      if (typeof given === 'string' && !DECIMAL.test(given)) {
        const error: ErrorObject = { keyword: 'type', instancePath: `/${name}`, schemaPath: '', params: { type: 'integer' }, message: 'must be an integer in plain decimal digits' };
        check.errors = [error];
        return false;
      }
    }
    const valid = validate(data);
    check.errors = validate.errors;
    return valid;
  };
  check.errors = null as ErrorObject[] | null | undefined;
  return check;
}

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  httpPart === 'body' ? forBodies.compile(schema) : withPlainIntegers(forParameters.compile(schema), schema as ParameterSchema);
