// `npm run spec:breaking` on pairs of contracts: the released one (or a variant of it) as
// base, a copy with one edit as head. Each breaking edit names the rule that must report
// it; each harmless edit must pass with no finding at all. The edits run through the
// checker in-process (milliseconds each); a few run through the command end to end.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { Node } from '../../scripts/breaking/document.js';
import { exists } from '../../scripts/breaking/document.js';
import { compareDocuments } from '../../scripts/breaking/operations.js';
import { RULES } from '../../scripts/breaking/rules.js';
import { fileURLToPath } from 'node:url';
import { checkFiles, rulesReport } from '../../scripts/spec-breaking.js';
import { runTs } from '../process.js';

type Spec = Record<string, any>;
// The rules are tried on variants of contract 1.0.0, kept here as it was released (the
// released contract itself moves on with each release).
const released = parse(readFileSync(new URL('./released-1.0.0.yaml', import.meta.url), 'utf8')) as Spec;
const BEFORE_SUNSET = '2026-11-21';
const AFTER_SUNSET = '2030-12-06';

interface Case {
  /** Changes to both sides first (to build a base the released contract does not have). */
  both?: (spec: Spec) => void;
  head: (spec: Spec) => void;
  today?: string;
  /** The rule that must report the edit, or `harmless`. */
  want: string;
}

function pair({ both, head }: Case): { base: Spec; changed: Spec } {
  const base = structuredClone(released);
  both?.(base);
  const changed = structuredClone(base);
  head(changed);
  return { base, changed };
}

const check = (c: Case) => {
  const { base, changed } = pair(c);
  return { base, changed, findings: compareDocuments(base as Node, changed as Node, c.today ?? BEFORE_SUNSET) };
};

const schemas = (s: Spec) => s.components.schemas;
const params = (s: Spec) => s.components.parameters;
const listPets = (s: Spec) => s.paths['/pets'].get;
const createPet = (s: Spec) => s.paths['/pets'].post;
const getPet = (s: Spec) => s.paths['/pets/{petId}'].get;
const newPet = (s: Spec) => schemas(s).NewPet;
const pet = (s: Spec) => schemas(s).Pet;
const created = (s: Spec) => createPet(s).responses['201'];
const petsBody = (s: Spec) => listPets(s).responses['200'].content['application/json'];
const bodySchema = (s: Spec) => createPet(s).requestBody.content['application/json'];
const query = (name: string, extra: Spec = {}) => ({ name, in: 'query', required: false, schema: { type: 'string' }, ...extra });
const addQuery = (extra: Spec = {}) => (s: Spec) => listPets(s).parameters.push(query('q', extra));
const lastParam = (s: Spec) => listPets(s).parameters.at(-1);
const oauth = (s: Spec) =>
  (s.components.securitySchemes.oauth = { type: 'oauth2', flows: { clientCredentials: { tokenUrl: 'https://auth.example/token', scopes: { read: 'read', write: 'write' } } } });
const apiKeyScheme = { type: 'apiKey', in: 'header', name: 'X-API-Key' };
const oneOfBody = (key: 'oneOf' | 'anyOf', extra: Spec = {}) => (s: Spec) => (bodySchema(s).schema = { [key]: [{ $ref: '#/components/schemas/NewPet' }, { type: 'string' }], ...extra });
const petsOrError = (extra: Spec = {}) => (s: Spec) =>
  (petsBody(s).schema = { oneOf: [{ $ref: '#/components/schemas/Pets' }, { $ref: '#/components/schemas/Error' }], ...extra });
const getPetBody = (s: Spec) => getPet(s).responses['200'].content['application/json'];
/** A property replaced by a $ref to a new schema `name`, a copy of it with `extra`. */
const viaNewSchema = (owner: (s: Spec) => Spec, property: string, name: string, extra: Spec) => (s: Spec) => {
  schemas(s)[name] = { ...structuredClone(owner(s).properties[property]), ...extra };
  owner(s).properties[property] = { $ref: `#/components/schemas/${name}` };
};
/** Each server with its variables at their defaults, written out in full (no template). */
const writtenOut = (s: Spec): Spec[] =>
  s.servers.map((server: Spec) => ({ url: server.url.replace(/\{(\w+)\}/g, (_: string, name: string) => server.variables[name].default), description: server.description }));
const publicListPets = (s: Spec) => (listPets(s).security = []);
const deprecatedStatus = (s: Spec) => Object.assign(pet(s).properties.status, { deprecated: true, 'x-sunset': '2030-01-01' });

const breaking: [string, Case][] = [
  // Operations and our lifecycle policy.
  ['removing an operation', { head: (s) => delete s.paths['/pets'].post, want: 'api-removed-without-deprecation' }],
  ['moving an operation to another method (POST -> PUT)', { head: (s) => ((s.paths['/pets'].put = createPet(s)), delete s.paths['/pets'].post), want: 'api-removed-without-deprecation' }],
  ['renaming a path (/pets -> /animals)', { head: (s) => ((s.paths['/animals'] = s.paths['/pets']), delete s.paths['/pets']), want: 'api-removed-without-deprecation' }],
  ['removing a non-deprecated operation after the sunset date all the same', { head: (s) => delete s.paths['/pets'].get, today: AFTER_SUNSET, want: 'api-removed-without-deprecation' }],
  ['removing deprecated getPet before its sunset', { head: (s) => delete s.paths['/pets/{petId}'], want: 'api-removed-before-sunset' }],
  ['renaming an operationId (createPet -> addPet)', { head: (s) => (createPet(s).operationId = 'addPet'), want: 'api-operation-id-changed' }],
  ['marking a stable operation experimental', { head: (s) => (listPets(s)['x-stability'] = 'experimental'), want: 'api-stability-decreased' }],
  ['an unknown stability level', { head: (s) => (listPets(s)['x-stability'] = 'beta'), want: 'api-invalid-stability-level' }],
  ["moving getPet's x-sunset earlier", { head: (s) => (getPet(s)['x-sunset'] = '2029-01-01'), want: 'api-sunset-date-changed-too-small' }],
  ["deleting getPet's x-sunset", { head: (s) => delete getPet(s)['x-sunset'], want: 'api-sunset-deleted' }],
  ['an x-sunset that is not a date', { head: (s) => (getPet(s)['x-sunset'] = 'soon'), want: 'api-sunset-parse' }],
  ['deprecating an operation without x-sunset', { head: (s) => (listPets(s).deprecated = true), want: 'api-deprecated-sunset-missing' }],
  ['deprecating an operation with a sunset already past', { head: (s) => Object.assign(listPets(s), { deprecated: true, 'x-sunset': '2020-01-01' }), want: 'api-sunset-date-too-small' }],

  // Security and servers.
  ['the bearer scheme replaced by an API-key header', { head: (s) => (s.components.securitySchemes.bearerAuth = apiKeyScheme), want: 'api-security-scheme-changed' }],
  ['the bearer scheme replaced by basic authentication', { head: (s) => (s.components.securitySchemes.bearerAuth.scheme = 'basic'), want: 'api-security-scheme-changed' }],
  [
    'bearerAuth renamed to apiKeyAuth, an API-key header',
    { head: (s) => ((s.components.securitySchemes = { apiKeyAuth: apiKeyScheme }), (s.security = [{ apiKeyAuth: [] }])), want: 'api-security-requirement-added' },
  ],
  [
    'a second credential required as well',
    { head: (s) => ((s.components.securitySchemes.apiKeyAuth = apiKeyScheme), (s.security = [{ bearerAuth: [], apiKeyAuth: [] }])), want: 'api-security-requirement-added' },
  ],
  [
    'one operation requiring another scheme',
    { head: (s) => ((s.components.securitySchemes.apiKeyAuth = apiKeyScheme), (listPets(s).security = [{ apiKeyAuth: [] }])), want: 'api-security-requirement-added' },
  ],
  ['a scope required of an operation whose requirement named none (bearerAuth: [] -> [pets:read])', { head: (s) => (listPets(s).security = [{ bearerAuth: ['pets:read'] }]), want: 'api-security-scope-added' }],
  [
    'a scope required that x-scopes-of-earlier-credentials does not list',
    { head: (s) => ((s.components.securitySchemes.bearerAuth['x-scopes-of-earlier-credentials'] = ['pets:read']), (createPet(s).security = [{ bearerAuth: ['pets:write'] }])), want: 'api-security-scope-added' },
  ],
  ['an OAuth scope added to a requirement', { both: (s) => (oauth(s), (s.security = [{ oauth: ['read'] }])), head: (s) => (s.security = [{ oauth: ['read', 'write'] }]), want: 'api-security-scope-added' }],
  ['an OAuth scope removed from the scheme', { both: (s) => (oauth(s), (s.security = [{ oauth: ['read'] }])), head: (s) => delete s.components.securitySchemes.oauth.flows.clientCredentials.scopes.read, want: 'api-security-scheme-changed' }],
  ['the base path changed (/v1 -> /v2)', { head: (s) => s.servers.forEach((server: Spec) => (server.url = 'https://{host}/v2')), want: 'api-server-removed' }],
  ['an operation moved to its own server', { head: (s) => (listPets(s).servers = [{ url: 'https://pets.example/v1' }]), want: 'api-server-removed' }],
  ["a server variable's default changed", { head: (s) => (s.servers[0].variables.host.default = 'api.example'), want: 'api-server-variable-changed' }],
  [
    "a server variable's allowed values narrowed",
    { both: (s) => (s.servers[0].variables.host.enum = ['api.animal-store.example', 'eu.animal-store.example']), head: (s) => (s.servers[0].variables.host.enum = ['api.animal-store.example']), want: 'api-server-variable-changed' },
  ],
  ['a public operation (security: []) made to require the bearer token', { both: publicListPets, head: (s) => delete listPets(s).security, want: 'api-security-requirement-added' }],
  ['a public operation given a requirement of its own', { both: publicListPets, head: (s) => (listPets(s).security = [{ bearerAuth: [] }]), want: 'api-security-requirement-added' }],
  ['global security added where there was none', { both: (s) => delete s.security, head: (s) => (s.security = [{ bearerAuth: [] }]), want: 'api-security-requirement-added' }],
  ['optional authentication made mandatory', { both: (s) => s.security.push({}), head: (s) => s.security.pop(), want: 'api-security-requirement-added' }],
  ['a server variable that took any value limited to an enum', { head: (s) => (s.servers[0].variables.host.enum = ['api.animal-store.example']), want: 'api-server-variable-changed' }],
  // Templates written out in full (as openapi/v1.yaml's servers now are): only at the very addresses they named.
  ['a template written out at another address than its default', { head: (s) => (s.servers = [writtenOut(s)[0], { url: 'https://api2.animal-store.example/v1' }]), want: 'api-server-removed' }],
  ["a template written out for its default only, not for each value of its enum", { both: (s) => (s.servers[0].variables.host.enum = ['api.animal-store.example', 'eu.animal-store.example']), head: (s) => (s.servers = writtenOut(s)), want: 'api-server-removed' }],
  ["a written-out address beside the template, whose default moved", { head: (s) => (s.servers = [...writtenOut(s), ...s.servers.map((server: Spec) => ({ ...server, variables: { host: { default: 'moved.animal-store.example' } } }))]), want: 'api-server-variable-changed' }],
  ['a webhook removed', { both: (s) => (s.webhooks = { petAdded: { post: { responses: { '200': { description: 'ok' } } } } }), head: (s) => delete s.webhooks.petAdded, want: 'webhook-removed' }],

  // Parameters.
  ['a new required query parameter', { head: addQuery({ required: true }), want: 'request-parameter-added-required' }],
  ['a new required header', { head: (s) => (createPet(s).parameters = [{ name: 'X-Tenant', in: 'header', required: true, schema: { type: 'string' } }]), want: 'request-parameter-added-required' }],
  ['making a parameter required', { head: (s) => (params(s).StatusFilter.required = true), want: 'request-parameter-became-required' }],
  ['removing a parameter', { head: (s) => listPets(s).parameters.pop(), want: 'request-parameter-removed' }],
  ['moving limit from the query to a header', { head: (s) => (params(s).Limit.in = 'header'), want: 'request-parameter-location-changed' }],
  ['changing how status is serialized (pipeDelimited)', { head: (s) => (params(s).StatusFilter.style = 'pipeDelimited'), want: 'request-parameter-style-changed' }],
  ["changing limit's default (20 -> 10)", { head: (s) => (params(s).Limit.schema.default = 10), want: 'request-parameter-default-value-changed' }],
  ["changing limit's type (integer -> string)", { head: (s) => (params(s).Limit.schema = { type: 'string' }), want: 'request-parameter-type-changed' }],
  ["lowering limit's maximum (100 -> 50)", { head: (s) => (params(s).Limit.schema.maximum = 50), want: 'request-parameter-max-decreased' }],
  ["raising limit's minimum (1 -> 5)", { head: (s) => (params(s).Limit.schema.minimum = 5), want: 'request-parameter-min-increased' }],
  ['an exclusive maximum on limit', { head: (s) => (params(s).Limit.schema.exclusiveMaximum = 100), want: 'request-parameter-max-decreased' }],
  ["limit's maximum 100 -> exclusiveMaximum 100 (100 refused)", { head: (s) => (delete params(s).Limit.schema.maximum, (params(s).Limit.schema.exclusiveMaximum = 100)), want: 'request-parameter-max-decreased' }],
  [
    'a number bound made exclusive (maximum 10 -> exclusiveMaximum 10)',
    { both: addQuery({ schema: { type: 'number', maximum: 10 } }), head: (s) => (delete lastParam(s).schema.maximum, (lastParam(s).schema.exclusiveMaximum = 10)), want: 'request-parameter-max-decreased' },
  ],
  ['narrowing an id format (int64 -> int32)', { head: (s) => (schemas(s).Id.format = 'int32'), want: 'request-parameter-format-changed' }],
  ['removing an enum value a client may send', { head: (s) => (schemas(s).PetStatus.enum = ['available', 'pending']), want: 'request-parameter-enum-value-removed' }],
  ['a pattern on a query parameter', { both: addQuery(), head: (s) => (lastParam(s).schema.pattern = '^[a-z]+$'), want: 'request-parameter-pattern-added' }],
  ['a shorter maxLength on a query parameter', { both: addQuery({ schema: { type: 'string', maxLength: 50 } }), head: (s) => (lastParam(s).schema.maxLength = 10), want: 'request-parameter-max-length-decreased' }],
  ['a longer minLength on a query parameter', { both: addQuery(), head: (s) => (lastParam(s).schema.minLength = 3), want: 'request-parameter-min-length-increased' }],
  ['a query parameter limited to an enum', { both: addQuery(), head: (s) => (lastParam(s).schema.enum = ['a', 'b']), want: 'request-parameter-became-enum' }],
  [
    "a parameter's x-sunset moved earlier",
    { both: addQuery({ deprecated: true, 'x-sunset': '2030-01-01' }), head: (s) => (lastParam(s)['x-sunset'] = '2029-01-01'), want: 'request-parameter-sunset-date-changed-too-small' },
  ],
  ['deprecating a parameter without x-sunset', { head: (s) => (params(s).StatusFilter.deprecated = true), want: 'request-parameter-deprecated-sunset-missing' }],
  ['removing a deprecated parameter before its sunset', { both: addQuery({ deprecated: true, 'x-sunset': '2030-01-01' }), head: (s) => listPets(s).parameters.pop(), want: 'request-parameter-removed' }],

  // Request bodies.
  ['making the request body required', { both: (s) => (createPet(s).requestBody.required = false), head: (s) => (createPet(s).requestBody.required = true), want: 'request-body-became-required' }],
  ['a required request body on an operation without one', { head: (s) => (listPets(s).requestBody = structuredClone(createPet(s).requestBody)), want: 'request-body-added-required' }],
  ['removing the request body', { head: (s) => delete createPet(s).requestBody, want: 'request-body-removed' }],
  [
    'replacing application/json by another media type',
    { head: (s) => (createPet(s).requestBody.content = { 'application/merge-patch+json': bodySchema(s) }), want: 'request-body-media-type-removed' },
  ],
  ['a request body of another type (object -> array)', { head: (s) => (newPet(s).type = 'array'), want: 'request-body-type-changed' }],
  ['a shorter maxLength on a request property (100 -> 50)', { head: (s) => (newPet(s).properties.name.maxLength = 50), want: 'request-property-max-length-decreased' }],
  ['a longer minLength on a request property (1 -> 2)', { head: (s) => (newPet(s).properties.name.minLength = 2), want: 'request-property-min-length-increased' }],
  ['a stricter pattern on a request property', { head: (s) => (newPet(s).properties.name.pattern = '^[A-Za-z]+$'), want: 'request-property-pattern-added' }],
  ['an optional request property made required', { head: (s) => newPet(s).required.push('status'), want: 'request-property-became-required' }],
  ['a new required request property', { head: (s) => ((newPet(s).properties.colour = { type: 'string' }), newPet(s).required.push('colour')), want: 'request-property-added-required' }],
  ['removing a request property from a closed schema', { head: (s) => delete newPet(s).properties.status, want: 'request-property-removed' }],
  ['a request property of another type (string -> integer)', { head: (s) => (newPet(s).properties.name.type = 'integer'), want: 'request-property-type-changed' }],
  ['a request property that no longer takes null', { both: (s) => (newPet(s).properties.name.type = ['string', 'null']), head: (s) => (newPet(s).properties.name.type = 'string'), want: 'request-property-type-changed' }],
  ['refusing unknown request properties', { both: (s) => delete newPet(s).additionalProperties, head: (s) => (newPet(s).additionalProperties = false), want: 'request-body-additional-properties-restricted' }],
  ['a request property made read-only', { head: (s) => (newPet(s).properties.status.readOnly = true), want: 'request-property-became-read-only' }],
  ['Id made read-only, which NewPet.categoryId uses through $ref', { head: (s) => (schemas(s).Id.readOnly = true), want: 'request-property-became-read-only' }],
  ['PetStatus made read-only, which NewPet.status uses through $ref', { head: (s) => (schemas(s).PetStatus.readOnly = true), want: 'request-property-became-read-only' }],
  ['a request property moved to a $ref of a new read-only schema', { head: viaNewSchema(newPet, 'name', 'Name', { readOnly: true }), want: 'request-property-became-read-only' }],
  ['a request property made read-only through allOf', { head: (s) => (newPet(s).properties.name = { allOf: [newPet(s).properties.name, { readOnly: true }] }), want: 'request-property-became-read-only' }],
  [
    'removing a deprecated request property from a closed schema before its sunset',
    { both: (s) => Object.assign(newPet(s).properties.status, { deprecated: true, 'x-sunset': '2030-01-01' }), head: (s) => delete newPet(s).properties.status, want: 'request-property-removed' },
  ],
  ['a lower maximum on an id a client sends', { head: (s) => (schemas(s).Id.maximum = 1000), want: 'request-property-max-decreased' }],
  ['a const on a request property', { head: (s) => (newPet(s).properties.status.const = 'available'), want: 'request-property-const-added' }],
  ['a `not` on a request property', { head: (s) => (newPet(s).properties.name.not = { const: 'Rex' }), want: 'request-property-constraint-added' }],
  ['a oneOf alternative removed from a request body', { both: oneOfBody('oneOf'), head: (s) => bodySchema(s).schema.oneOf.pop(), want: 'request-body-one-of-removed' }],
  ['an anyOf alternative removed from a request body', { both: oneOfBody('anyOf'), head: (s) => bodySchema(s).schema.anyOf.pop(), want: 'request-body-any-of-removed' }],
  [
    'an allOf subschema added to a request body, requiring an optional property',
    { head: (s) => (bodySchema(s).schema = { allOf: [{ $ref: '#/components/schemas/NewPet' }, { required: ['status'] }] }), want: 'request-property-became-required' },
  ],
  [
    'an allOf subschema added to a request body that cannot be merged (a second schema for name)',
    { head: (s) => (bodySchema(s).schema = { allOf: [{ $ref: '#/components/schemas/NewPet' }, { properties: { name: { maxLength: 10 } } }] }), want: 'request-body-constraint-added' },
  ],
  [
    'a request body wrapped in a oneOf whose other alternative also takes objects',
    { head: (s) => (bodySchema(s).schema = { oneOf: [{ $ref: '#/components/schemas/NewPet' }, { type: 'object' }] }), want: 'request-body-constraint-added' },
  ],
  [
    "a request body's discriminator renamed",
    {
      both: oneOfBody('oneOf', { discriminator: { propertyName: 'kind' } }),
      head: (s) => (bodySchema(s).schema.discriminator.propertyName = 'type'),
      want: 'request-body-discriminator-changed',
    },
  ],
  ['a minItems on a request array', { both: (s) => (newPet(s).properties.tags = { type: 'array', items: { type: 'string' } }), head: (s) => (newPet(s).properties.tags.minItems = 1), want: 'request-property-min-items-increased' }],
  [
    'a request array item narrowed',
    { both: (s) => (newPet(s).properties.tags = { type: 'array', items: { type: 'string' } }), head: (s) => (newPet(s).properties.tags.items.maxLength = 10), want: 'request-property-max-length-decreased' },
  ],
  [
    'an x-extensible-enum value removed from a request property',
    { both: (s) => (newPet(s).properties.kind = { type: 'string', 'x-extensible-enum': ['dog', 'cat'] }), head: (s) => (newPet(s).properties.kind['x-extensible-enum'] = ['dog']), want: 'request-property-enum-value-removed' },
  ],
  ["a request property's default changed", { both: (s) => (newPet(s).properties.status.default = 'available'), head: (s) => (newPet(s).properties.status.default = 'pending'), want: 'request-property-default-value-changed' }],
  [
    'unknown request properties narrowed (any string -> at most 10 characters)',
    { both: (s) => (newPet(s).additionalProperties = { type: 'string' }), head: (s) => (newPet(s).additionalProperties.maxLength = 10), want: 'request-property-max-length-decreased' },
  ],
  ['a minProperties on the request body', { head: (s) => (newPet(s).minProperties = 3), want: 'request-body-min-properties-increased' }],
  ['deprecating a request property without x-sunset', { head: (s) => (newPet(s).properties.name.deprecated = true), want: 'request-property-deprecated-sunset-missing' }],
  ['a stable request property made experimental', { head: (s) => (newPet(s).properties.name['x-stability'] = 'experimental'), want: 'request-property-stability-decreased' }],

  // Responses.
  ['a success status changed (201 -> 200)', { head: (s) => ((createPet(s).responses['200'] = created(s)), delete createPet(s).responses['201']), want: 'response-success-status-removed' }],
  ["the required Location header removed from createPet's 201", { head: (s) => delete created(s).headers.Location, want: 'response-header-removed-required' }],
  ['the Location header made optional', { head: (s) => (created(s).headers.Location.required = false), want: 'response-header-became-optional' }],
  ["the Location header's type changed", { head: (s) => (created(s).headers.Location.schema = { type: 'integer' }), want: 'response-header-type-changed' }],
  [
    'an optional response header removed',
    { both: (s) => (listPets(s).responses['200'].headers = { 'X-Total': { schema: { type: 'integer' } } }), head: (s) => delete listPets(s).responses['200'].headers['X-Total'], want: 'response-header-removed-optional' },
  ],
  ["the Deprecation header's pattern removed", { head: (s) => delete s.components.headers.Deprecation.schema.pattern, want: 'response-header-pattern-removed' }],
  ['a response media type replaced', { head: (s) => (listPets(s).responses['200'].content = { 'application/xml': petsBody(s) }), want: 'response-media-type-removed' }],
  ['removing an optional response property', { head: (s) => delete pet(s).properties.status, want: 'response-property-removed-optional' }],
  ['renaming a required response property', { head: (s) => ((pet(s).properties.petName = pet(s).properties.name), delete pet(s).properties.name, (pet(s).required = ['id', 'petName', 'categoryId'])), want: 'response-property-removed-required' }],
  ['a required response property made optional', { head: (s) => (pet(s).required = ['id', 'categoryId']), want: 'response-property-became-optional' }],
  ['a response property that may now be null', { head: (s) => (pet(s).properties.name.type = ['string', 'null']), want: 'response-property-type-changed' }],
  ['an id that may now be fractional (integer -> number)', { head: (s) => (schemas(s).Id.type = 'number'), want: 'response-property-type-changed' }],
  ['an enum value added to a response property', { head: (s) => schemas(s).PetStatus.enum.push('lost'), want: 'response-property-enum-value-added' }],
  ['the enum removed from a response property', { head: (s) => delete schemas(s).PetStatus.enum, want: 'response-property-enum-value-added' }],
  ['a longer maxLength on a response property', { head: (s) => (pet(s).properties.name.maxLength = 200), want: 'response-property-max-length-increased' }],
  ['a shorter minLength on a response property', { head: (s) => (pet(s).properties.name.minLength = 0), want: 'response-property-min-length-decreased' }],
  ['the maximum removed from ids', { head: (s) => delete schemas(s).Id.maximum, want: 'response-property-max-increased' }],
  ["a lower minimum on Error's status", { head: (s) => (schemas(s).Error.properties.status.minimum = 100), want: 'response-property-min-decreased' }],
  ['the format removed from ids', { head: (s) => delete schemas(s).Id.format, want: 'response-property-format-changed' }],
  ['a response property made write-only', { head: (s) => (pet(s).properties.name.writeOnly = true), want: 'response-property-became-write-only' }],
  ['PetStatus made write-only, so Pet.status is no longer returned', { head: (s) => (schemas(s).PetStatus.writeOnly = true), want: 'response-property-became-write-only' }],
  ['Id made write-only, so the required Pet.id is no longer returned', { head: (s) => (schemas(s).Id.writeOnly = true), want: 'response-property-became-write-only' }],
  ['a response property moved to a $ref of a new write-only schema', { head: viaNewSchema(pet, 'name', 'Name', { writeOnly: true }), want: 'response-property-became-write-only' }],
  ['removing a deprecated response property before its sunset', { both: deprecatedStatus, head: (s) => delete pet(s).properties.status, today: '2029-12-31', want: 'response-property-removed-optional' }],
  ['a response wrapped as allOf of a schema that lacks id', { head: (s) => (getPetBody(s).schema = { allOf: [{ $ref: '#/components/schemas/NewPet' }] }), want: 'response-property-removed-required' }],
  ["Error.status's maximum 599 -> exclusiveMaximum 601 (600 may come back)", { head: (s) => (delete schemas(s).Error.properties.status.maximum, (schemas(s).Error.properties.status.exclusiveMaximum = 601)), want: 'response-property-max-increased' }],
  ['unknown properties allowed in a response', { both: (s) => (pet(s).additionalProperties = false), head: (s) => delete pet(s).additionalProperties, want: 'response-body-additional-properties-widened' }],
  ['a response body that may now be null', { head: (s) => (schemas(s).Pets.type = ['array', 'null']), want: 'response-body-type-changed' }],
  ['a pattern removed from a response property', { both: (s) => (pet(s).properties.name.pattern = '^.+$'), head: (s) => delete pet(s).properties.name.pattern, want: 'response-property-pattern-removed' }],
  ['a oneOf alternative added to a response', { both: petsOrError(), head: (s) => petsBody(s).schema.oneOf.push({ type: 'string' }), want: 'response-body-one-of-added' }],
  ['uniqueItems dropped from a response array', { both: (s) => (schemas(s).Pets.uniqueItems = true), head: (s) => delete schemas(s).Pets.uniqueItems, want: 'response-body-constraint-removed' }],
  ['a lower minItems on a response array', { both: (s) => (schemas(s).Pets.minItems = 1), head: (s) => (schemas(s).Pets.minItems = 0), want: 'response-body-min-items-decreased' }],
  ['a higher maxItems on a response array', { both: (s) => (schemas(s).Pets.maxItems = 100), head: (s) => (schemas(s).Pets.maxItems = 200), want: 'response-body-max-items-increased' }],
  ['a const dropped from a response property', { both: (s) => (pet(s).properties.kind = { const: 'pet' }), head: (s) => delete pet(s).properties.kind.const, want: 'response-property-const-removed' }],
  [
    "a response discriminator's mapping extended",
    {
      both: petsOrError({ discriminator: { propertyName: 'kind', mapping: { pets: '#/components/schemas/Pets' } } }),
      head: (s) => (petsBody(s).schema.discriminator.mapping.error = '#/components/schemas/Error'),
      want: 'response-body-discriminator-changed',
    },
  ],
  ['deprecating a response property without x-sunset', { head: (s) => (pet(s).properties.status.deprecated = true), want: 'response-property-deprecated-sunset-missing' }],
  [
    "a response property's x-sunset that is not a date",
    { both: (s) => Object.assign(pet(s).properties.name, { deprecated: true, 'x-sunset': '2031-01-01' }), head: (s) => (pet(s).properties.name['x-sunset'] = 'later'), want: 'response-property-sunset-parse' },
  ],
];

const harmless: [string, Case][] = [
  ['the same contract', { head: () => {}, want: 'harmless' }],
  ['adding an optional response property', { head: (s) => (pet(s).properties.nickname = { type: 'string' }), want: 'harmless' }],
  ['adding an optional parameter', { head: addQuery(), want: 'harmless' }],
  ['adding an operation', { head: (s) => (s.paths['/categories'] = { get: { ...structuredClone(listPets(s)), operationId: 'listCategories', parameters: [] } }), want: 'harmless' }],
  ['adding an enum value to a request-only parameter', { both: addQuery({ schema: { type: 'string', enum: ['id'] } }), head: (s) => lastParam(s).schema.enum.push('name'), want: 'harmless' }],
  ['editing descriptions, summaries, examples and tags', { head: (s) => ((s.info.description += '\nMore.'), (listPets(s).summary = 'List'), (pet(s).description = 'An animal.'), (s.tags[0].description = 'Animals.'), (petsBody(s).examples.empty.summary = 'None')), want: 'harmless' }],
  ["raising limit's maximum (100 -> 200)", { head: (s) => (params(s).Limit.schema.maximum = 200), want: 'harmless' }],
  ['widening limit to int64', { head: (s) => (params(s).Limit.schema.format = 'int64'), want: 'harmless' }],
  ['a longer maxLength on a request property', { head: (s) => (newPet(s).properties.name.maxLength = 200), want: 'harmless' }],
  ['a request pattern removed', { head: (s) => delete newPet(s).properties.name.pattern, want: 'harmless' }],
  ['a required request property made optional', { head: (s) => (newPet(s).required = ['name']), want: 'harmless' }],
  ['a shorter maxLength on a response property', { head: (s) => (pet(s).properties.name.maxLength = 50), want: 'harmless' }],
  ['an enum value removed from a response-only property', { both: (s) => (pet(s).properties.mood = { type: 'string', enum: ['calm', 'lively'] }), head: (s) => (pet(s).properties.mood.enum = ['calm']), want: 'harmless' }],
  ['a new optional response header', { head: (s) => (listPets(s).responses['200'].headers = { 'X-Total': { schema: { type: 'integer' } } }), want: 'harmless' }],
  ['a new error status (429)', { head: (s) => (listPets(s).responses['429'] = structuredClone(listPets(s).responses['401'])), want: 'harmless' }],
  ['a header name in another case (Location -> location)', { head: (s) => ((created(s).headers.location = created(s).headers.Location), delete created(s).headers.Location), want: 'harmless' }],
  ['a new error code in the x-extensible-enum', { head: (s) => schemas(s).Error.properties.code['x-extensible-enum'].push('conflict'), want: 'harmless' }],
  [
    'renaming the path parameter ({petId} -> {id})',
    {
      head: (s) => {
        const item = s.paths['/pets/{petId}'];
        item.get.parameters[0].name = 'id';
        s.paths['/pets/{id}'] = item;
        delete s.paths['/pets/{petId}'];
      },
      want: 'harmless',
    },
  ],
  ['a new optional request property', { head: (s) => (newPet(s).properties.nickname = { type: 'string', maxLength: 50 }), want: 'harmless' }],
  ['a new optional request header', { head: (s) => (createPet(s).parameters = [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } }]), want: 'harmless' }],
  ['a new version number, tag and extension', { head: (s) => ((s.info.version = '1.1.0'), s.tags.push({ name: 'categories' }), (listPets(s)['x-internal-owner'] = 'pets-team')), want: 'harmless' }],
  ['reordering parameters', { head: (s) => listPets(s).parameters.reverse(), want: 'harmless' }],
  ['accepting another request media type too', { head: (s) => (createPet(s).requestBody.content['application/merge-patch+json'] = bodySchema(s)), want: 'harmless' }],
  ["moving getPet's x-sunset later", { head: (s) => (getPet(s)['x-sunset'] = '2031-01-01'), want: 'harmless' }],
  ['deprecating an operation with a future x-sunset', { head: (s) => Object.assign(listPets(s), { deprecated: true, 'x-sunset': '2031-01-01' }), want: 'harmless' }],
  ['removing `deprecated` from getPet', { head: (s) => delete getPet(s).deprecated, want: 'harmless' }],
  ['removing deprecated getPet after its sunset', { head: (s) => delete s.paths['/pets/{petId}'], today: AFTER_SUNSET, want: 'harmless' }],
  ['removing experimental listOrders', { head: (s) => delete s.paths['/store/orders'], want: 'harmless' }],
  [
    'changing experimental listOrders (a new required parameter, 501 -> 200)',
    {
      head: (s) => {
        const op = s.paths['/store/orders'].get;
        op.parameters = [{ name: 'since', in: 'query', required: true, schema: { type: 'string' } }];
        op.responses['200'] = op.responses['501'];
        delete op.responses['501'];
      },
      want: 'harmless',
    },
  ],
  ['another way to authenticate as an alternative', { head: (s) => ((s.components.securitySchemes.apiKeyAuth = apiKeyScheme), s.security.push({ apiKeyAuth: [] })), want: 'harmless' }],
  [
    'the bearer scheme renamed (bearerAuth -> apiKey), asking for the same credential',
    { head: (s) => ((s.components.securitySchemes = { apiKey: s.components.securitySchemes.bearerAuth }), (s.security = [{ apiKey: [] }])), want: 'harmless' },
  ],
  ['authentication made optional', { head: (s) => s.security.push({}), want: 'harmless' }],
  ['another server', { head: (s) => s.servers.push({ url: 'https://eu.animal-store.example/v1' }), want: 'harmless' }],
  ['production and staging, one template with two defaults, written out as their two addresses', { head: (s) => (s.servers = writtenOut(s)), want: 'harmless' }],
  [
    'a template with an enum written out as one address for each value',
    { both: (s) => (s.servers[0].variables.host.enum = ['api.animal-store.example', 'eu.animal-store.example']), head: (s) => (s.servers = [...writtenOut(s), { url: 'https://eu.animal-store.example/v1' }]), want: 'harmless' },
  ],
  [
    'scopes required where the scheme says earlier credentials hold them (x-scopes-of-earlier-credentials)',
    {
      head: (s) => {
        s.components.securitySchemes.bearerAuth['x-scopes-of-earlier-credentials'] = ['pets:read', 'pets:write'];
        listPets(s).security = [{ bearerAuth: ['pets:read'] }];
        createPet(s).security = [{ bearerAuth: ['pets:write'] }];
      },
      want: 'harmless',
    },
  ],
  ['an OAuth scope no longer required', { both: (s) => (oauth(s), (s.security = [{ oauth: ['read', 'write'] }])), head: (s) => (s.security = [{ oauth: ['read'] }]), want: 'harmless' }],
  ['unknown request properties allowed if they are strings', { head: (s) => (newPet(s).additionalProperties = { type: 'string' }), want: 'harmless' }],
  ['unknown request properties allowed', { head: (s) => delete newPet(s).additionalProperties, want: 'harmless' }],
  ["getPet's 200 schema wrapped as allOf [Pet]", { head: (s) => (getPetBody(s).schema = { allOf: [{ $ref: '#/components/schemas/Pet' }], description: 'The animal.' }), want: 'harmless' }],
  [
    'Pet written as allOf of two parts with the same properties',
    {
      head: (s) => {
        const { properties, required, type, description } = pet(s);
        const { id, ...rest } = properties;
        schemas(s).Pet = { description, allOf: [{ type, required: ['id'], properties: { id } }, { type, required: required.filter((n: string) => n !== 'id'), properties: rest }] };
      },
      want: 'harmless',
    },
  ],
  ['a request body that also takes an array of pets (oneOf [NewPet, array of NewPet])', { head: (s) => (bodySchema(s).schema = { oneOf: [{ $ref: '#/components/schemas/NewPet' }, { type: 'array', items: { $ref: '#/components/schemas/NewPet' } }] }), want: 'harmless' }],
  ['a request body that also takes a string (anyOf [NewPet, string])', { head: oneOfBody('anyOf'), want: 'harmless' }],
  ['removing a deprecated response property on its sunset day', { both: deprecatedStatus, head: (s) => delete pet(s).properties.status, today: '2030-01-01', want: 'harmless' }],
  ['removing a deprecated response property after its sunset', { both: deprecatedStatus, head: (s) => delete pet(s).properties.status, today: AFTER_SUNSET, want: 'harmless' }],
  ["Error.status's maximum 599 -> exclusiveMaximum 600 (the same integers)", { head: (s) => (delete schemas(s).Error.properties.status.maximum, (schemas(s).Error.properties.status.exclusiveMaximum = 600)), want: 'harmless' }],
  ["limit's minimum 1 -> exclusiveMinimum 0 (the same integers)", { head: (s) => (delete params(s).Limit.schema.minimum, (params(s).Limit.schema.exclusiveMinimum = 0)), want: 'harmless' }],
  ['a public operation made optionally authenticated', { both: publicListPets, head: (s) => (listPets(s).security = [{}, { bearerAuth: [] }]), want: 'harmless' }],
  [
    "a server variable's enum widened",
    { both: (s) => (s.servers[0].variables.host.enum = ['api.animal-store.example']), head: (s) => s.servers[0].variables.host.enum.push('eu.animal-store.example'), want: 'harmless' },
  ],
];

describe('spec:breaking rules, one edit each', () => {
  it('has at least 60 breaking and 20 harmless edits', () => {
    expect(breaking.length).toBeGreaterThanOrEqual(60);
    expect(harmless.length).toBeGreaterThanOrEqual(20);
  });

  it.each(breaking)('refuses %s', (_title, c) => {
    const { base, changed, findings } = check(c);
    expect(
      findings.map((f) => f.rule),
      JSON.stringify(findings, null, 1),
    ).toContain(c.want);
    for (const f of findings) {
      // Each finding points at something that exists on the side it names, and says whom it
      // breaks; something removed also names the place in the head that no longer has it.
      expect(exists((f.side === 'head' ? changed : base) as Node, f.pointer), `${f.rule} at ${f.pointer}`).toBe(true);
      if (f.side === 'base') expect(f.near !== undefined && exists(changed as Node, f.near), `${f.rule} near ${f.near}`).toBe(true);
      expect(f.breaks).toBe(RULES[f.rule]?.breaks);
    }
  });

  it.each(harmless)('accepts %s', (_title, c) => {
    expect(check(c).findings).toEqual([]);
  });

  it('the released contract against the current one has no breaking change but those accepted, each with its reason', () => {
    const file = (p: string) => fileURLToPath(new URL(`../../openapi/${p}`, import.meta.url));
    const outcome = checkFiles(file('released/v1.yaml'), file('v1.yaml'), BEFORE_SUNSET, file('accepted-breaks.yaml'));
    expect(outcome.findings).toEqual([]);
    expect(outcome.stale).toEqual([]);
  });

  // The catalogue lives in one place, scripts/breaking/rules.ts; `--rules` prints it and
  // docs/governance.md says so instead of copying it.
  it('--rules prints every rule of the catalogue, each with whom it breaks and the oasdiff rules it covers', () => {
    expect(JSON.parse(rulesReport('json'))).toEqual(Object.entries(RULES).map(([rule, { breaks, oasdiff }]) => ({ rule, breaks, oasdiff })));
    const text = rulesReport('text');
    for (const [id, { breaks }] of Object.entries(RULES)) expect(text).toContain(`${id}\n  breaks: ${breaks}\n  oasdiff: `);
  });

  it('docs/governance.md tells how to list the rules', () => {
    const docs = readFileSync(new URL('../../docs/governance.md', import.meta.url), 'utf8');
    expect(docs).toContain('npm run spec:breaking -- --rules');
  });
});

// The command itself, as CI runs it. Each run is a process (about 1 s of CPU); they run one
// after another with ample timeouts so that a busy machine slows them without failing them.
describe('npm run spec:breaking, end to end', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'breaking-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, c: Case) => {
    const { base, changed } = pair(c);
    writeFileSync(path.join(dir, 'base.yaml'), stringify(base));
    writeFileSync(path.join(dir, name), stringify(changed));
    return path.join(dir, name);
  };
  const cli = (head: string, extra: string[] = [], env: Record<string, string | undefined> = {}) =>
    runTs('scripts/spec-breaking.ts', ['--base', path.join(dir, 'base.yaml'), '--head', head, '--today', BEFORE_SUNSET, ...extra], { GITHUB_ACTIONS: undefined, ...env });
  const noLocation: Case = { head: (s) => delete created(s).headers.Location, want: 'response-header-removed-required' };
  const TIMEOUT = 120_000;
  const lineOf = (file: string, pattern: RegExp) => {
    const line = readFileSync(file, 'utf8').split('\n').findIndex((l) => pattern.test(l)) + 1;
    expect(line, `${pattern} in ${file}`).toBeGreaterThan(0);
    return line;
  };

  it('a change accepted beside the head, with its reason, is shown and passes; an acceptance of nothing fails until removed', { timeout: TIMEOUT }, async () => {
    const head = write('accepted.yaml', noLocation);
    const acceptance = (pointer: string) => [{ rule: 'response-header-removed-required', pointer, reason: 'a test of the list' }];
    writeFileSync(path.join(dir, 'accepted-breaks.yaml'), stringify(acceptance('/paths/~1pets/post/responses/201/headers/Location')));
    try {
      const accepted = await cli(head);
      expect(accepted.code, accepted.stderr).toBe(0);
      expect(accepted.stdout).toContain('because: a test of the list');
      writeFileSync(path.join(dir, 'accepted-breaks.yaml'), stringify(acceptance('/paths/~1pets/get/responses/200/headers/Link')));
      const stale = await cli(head);
      expect(stale.code).toBe(1);
      expect(stale.stderr).toContain(`stale: ${path.join(dir, 'accepted-breaks.yaml')} accepts [response-header-removed-required] at #/paths/~1pets/get/responses/200/headers/Link, which is no finding: remove it`);
      expect(stale.stderr).toContain('[response-header-removed-required] createPet 201: required header Location removed');
    } finally {
      rmSync(path.join(dir, 'accepted-breaks.yaml'));
    }
  });

  it('exits 0 and says so when nothing breaks', { timeout: TIMEOUT }, async () => {
    const run = await cli(write('same.yaml', { head: () => {}, want: 'harmless' }));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('no breaking change');
  });

  it('exits 1 with rule, file:line, pointer and whom it breaks', { timeout: TIMEOUT }, async () => {
    const head = write('no-location.yaml', noLocation);
    const run = await cli(head);
    expect(run.code).toBe(1);
    // The header is gone; the place in the head that lacks it is its now empty `headers:` map,
    // and the released contract's line is that of `Location:`.
    const line = lineOf(head, /^\s+headers: \{\}$/);
    const baseLine = lineOf(path.join(dir, 'base.yaml'), /^\s+Location:$/);
    expect(run.stderr).toContain(`${head}:${line} [response-header-removed-required]`);
    expect(run.stderr).toContain(`at #/paths/~1pets/post/responses/201/headers, which lacks #/paths/~1pets/post/responses/201/headers/Location of ${path.join(dir, 'base.yaml')}:${baseLine}`);
    expect(run.stderr).toContain(`breaks: ${RULES['response-header-removed-required']?.breaks}`);
  });

  // A removed list item's pointer (parameters/0) names another item in the head file: the
  // line must be that of the list in the head, or the item's own in the released contract.
  it('places a removed parameter in both files, the same way in text, JSON and annotations', { timeout: TIMEOUT }, async () => {
    const head = write('no-limit.yaml', { head: (s) => listPets(s).parameters.shift(), want: 'request-parameter-removed' });
    const baseFile = path.join(dir, 'base.yaml');
    const headText = readFileSync(head, 'utf8').split('\n');
    const line = headText.findIndex((l, i) => /^\s+parameters:$/.test(l) && headText.slice(0, i).some((m) => /operationId: listPets$/.test(m))) + 1;
    const baseLine = lineOf(baseFile, /^\s+- \$ref: .#\/components\/parameters\/Limit/);
    expect(line).toBeGreaterThan(0);
    const place = `at #/paths/~1pets/get/parameters, which lacks #/paths/~1pets/get/parameters/0 of ${baseFile}:${baseLine}`;

    const text = await cli(head, [], { GITHUB_ACTIONS: 'true' });
    expect(text.code).toBe(1);
    expect(text.stderr).toContain(`${head}:${line} [request-parameter-removed] listPets: query parameter limit removed without being deprecated first\n  ${place}\n`);
    const annotation = `::error file=${head},line=${line},title=request-parameter-removed::listPets: query parameter limit removed without being deprecated first (${place}). `;
    expect(text.stdout).toContain(annotation);

    const json = await cli(head, ['--format', 'json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).findings).toEqual([
      expect.objectContaining({ rule: 'request-parameter-removed', pointer: '/paths/~1pets/get/parameters/0', side: 'base', near: '/paths/~1pets/get/parameters', file: head, line, baseFile, baseLine }),
    ]);
  });

  it('--format json serves machines', { timeout: TIMEOUT }, async () => {
    const run = await cli(write('no-location.yaml', noLocation), ['--format', 'json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report.breaking).toBe(true);
    expect(report.findings).toEqual([
      expect.objectContaining({
        rule: 'response-header-removed-required',
        pointer: '/paths/~1pets/post/responses/201/headers/Location',
        side: 'base',
        near: '/paths/~1pets/post/responses/201/headers',
        line: expect.any(Number),
        baseLine: expect.any(Number),
        breaks: expect.any(String),
      }),
    ]);
  });

  it('prints GitHub annotations when GITHUB_ACTIONS is set', { timeout: TIMEOUT }, async () => {
    const head = write('bearer.yaml', { head: (s) => (s.components.securitySchemes.bearerAuth = apiKeyScheme), want: 'api-security-scheme-changed' });
    const run = await cli(head, [], { GITHUB_ACTIONS: 'true' });
    expect(run.code).toBe(1);
    const line = readFileSync(head, 'utf8').split('\n').findIndex((l) => /^\s+bearerAuth:/.test(l)) + 1;
    expect(run.stdout).toMatch(new RegExp(`^::error file=${head.replace(/[/.]/g, '\\$&')},line=${line},title=api-security-scheme-changed::security scheme bearerAuth: type changed from http to apiKey`, 'm'));
  });

  it('--rules prints the catalogue and exits 0', { timeout: TIMEOUT }, async () => {
    const run = await runTs('scripts/spec-breaking.ts', ['--rules', '--format', 'json'], { GITHUB_ACTIONS: undefined });
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { rule: string }[]).map((r) => r.rule)).toEqual(Object.keys(RULES));
  });

  it('exits 2 when it cannot check', { timeout: TIMEOUT }, async () => {
    writeFileSync(path.join(dir, 'broken.yaml'), 'openapi: 3.1.0\npaths: [\n');
    const broken = await cli(path.join(dir, 'broken.yaml'));
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('spec:breaking: cannot check');
    const usage = await cli(path.join(dir, 'broken.yaml'), ['--format', 'xml']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('Exit status: 0 no breaking change, 1 breaking changes found, 2 the check could not run');
  });
});
