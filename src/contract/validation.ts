// Request validation compiled from the contract's schemas. Two Ajv instances because the
// parts of a request need different rules:
// - query and path parameters arrive as strings and are coerced ("20" -> 20);
// - bodies are JSON and are taken as sent: `"categoryId": "5"` is a 400, not a 5.
// Neither removes unknown properties: NewPet's `additionalProperties: false` must refuse
// them (Fastify's default would silently drop them).
import { Ajv, type Options } from 'ajv';
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

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  httpPart === 'body' ? forBodies.compile(schema) : forParameters.compile(schema);
