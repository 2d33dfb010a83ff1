// The catalogue of breaking-change rules that `npm run spec:breaking` applies: each rule's
// id, the one sentence a CI user reads on whom it breaks, and the error-level oasdiff rules
// it stands for (`npm run spec:breaking -- --rules` prints them). The checker refuses to
// report a rule that is not here, so this catalogue is the complete list of what is checked.

export interface Rule {
  /** Whom the change breaks, as one sentence. */
  breaks: string;
  /** The error-level oasdiff rules this rule covers ([] when oasdiff has none at that level). */
  oasdiff: string[];
}

const rules: Record<string, Rule> = {};

function rule(id: string, breaks: string, oasdiff: string[] = []): void {
  rules[id] = { breaks, oasdiff };
}

/** Schema rules exist once per place a schema sits: a parameter, a request body, a property in it, and so on. */
function schemaRule(prefixes: string[], suffix: string, breaks: string, oasdiff: (prefix: string) => string[] = () => []): void {
  for (const prefix of prefixes) rule(`${prefix}-${suffix}`, breaks, oasdiff(prefix));
}

// Operations and their lifecycle (ours: x-sunset, x-stability).
rule('api-removed-without-deprecation', 'Every client that calls this operation now gets 404 or 405, without having been warned by a deprecation.', [
  'api-removed-without-deprecation',
  'api-path-removed-without-deprecation',
]);
rule('api-removed-before-sunset', 'Clients were promised this deprecated operation until its x-sunset date and lose it early.', [
  'api-removed-before-sunset',
  'api-path-removed-before-sunset',
]);
rule('api-operation-id-changed', 'SDKs generated from the contract name their methods after operationId, so client code calling the old name stops compiling.');
rule('api-stability-decreased', 'Clients built on a stable operation lose the compatibility promise: an experimental operation may change or vanish in any release.', [
  'api-stability-decreased',
]);
rule('api-invalid-stability-level', 'Clients cannot tell what an x-stability other than stable or experimental promises.', ['api-invalid-stability-level']);
rule('api-deprecated-sunset-missing', 'Clients of a newly deprecated operation are not told until when it keeps working.', ['api-deprecated-sunset-missing']);
rule('api-sunset-parse', 'Clients and tools cannot read the date until which the deprecated operation keeps working.', [
  'api-deprecated-sunset-parse',
  'api-path-sunset-parse',
]);
rule('api-sunset-date-too-small', 'Clients of a newly deprecated operation get a sunset date that has already passed, so no time to move.', ['api-sunset-date-too-small']);
rule('api-sunset-deleted', 'Clients planning around the announced x-sunset date lose it while the operation is still deprecated.', ['sunset-deleted']);
rule('api-sunset-date-changed-too-small', 'Clients planned their move for the announced x-sunset date and now have less time than promised.', ['api-sunset-date-changed-too-small']);

// The same lifecycle for parameters and schema properties.
const lifecyclePrefixes = ['request-parameter', 'request-property', 'response-property'];
schemaRule(lifecyclePrefixes, 'deprecated-sunset-missing', 'Clients using this newly deprecated element are not told until when it keeps working.', (p) =>
  p === 'request-parameter' ? ['request-parameter-deprecated-sunset-missing'] : [`${p}-deprecated-sunset-missing`],
);
schemaRule(lifecyclePrefixes, 'sunset-parse', 'Clients and tools cannot read the date until which this deprecated element keeps working.', (p) =>
  p === 'request-parameter' ? ['request-parameter-sunset-parse'] : [`${p}-deprecated-sunset-invalid`],
);
schemaRule(lifecyclePrefixes, 'sunset-date-too-small', 'Clients of this newly deprecated element get a sunset date that has already passed.', (p) => [`${p}-sunset-date-too-small`]);
schemaRule(lifecyclePrefixes, 'sunset-deleted', 'Clients planning around the announced x-sunset date of this element lose it while it is still deprecated.', (p) =>
  p === 'request-parameter' ? ['request-parameter-sunset-deleted'] : [],
);
schemaRule(lifecyclePrefixes, 'sunset-date-changed-too-small', 'Clients planned their move for the announced x-sunset date of this element and now have less time.', (p) =>
  p === 'request-parameter' ? ['request-parameter-sunset-date-changed-too-small'] : [],
);
schemaRule(['request-property', 'response-property'], 'stability-decreased', 'Clients relying on this stable property lose the compatibility promise.', (p) => [`${p}-stability-decreased`]);

// Security and servers.
rule('api-security-requirement-added', 'Clients that authenticate as the released contract asks now lack a credential the operation requires, and get 401.');
rule('api-security-scope-added', 'Clients whose tokens carry the released scopes now lack a scope the operation requires, and get 401 or 403.');
rule('api-security-scheme-changed', 'Clients send their credential the way the released scheme says (for example Authorization: Bearer), which the changed scheme no longer accepts.');
rule('api-server-removed', 'Clients configured with a released server URL or base path send every request to an address the API no longer serves.');
rule('api-server-variable-changed', 'Clients relying on a server variable\'s default or allowed values now reach another address or use a value no longer allowed.');
rule('webhook-removed', 'Subscribers of this webhook stop receiving its calls.', ['webhook-removed']);

// Parameters.
rule('request-parameter-added-required', 'Every existing request lacks the new required parameter and is refused with 400.', [
  'new-required-request-parameter',
  'new-required-request-default-parameter-to-existing-path',
  'new-request-path-parameter',
]);
rule('request-parameter-became-required', 'Clients that leave this optional parameter out are now refused with 400.', ['request-parameter-became-required']);
rule('request-parameter-removed', 'Clients still send this parameter and it is ignored or refused, so the request no longer means what they asked.', [
  'request-parameter-removed-before-sunset',
]);
rule('request-parameter-location-changed', 'Clients send this parameter where it was (query, header, path or cookie) and the API no longer reads it there.');
rule('request-parameter-style-changed', 'Clients serialize this parameter the released way (style, explode, allowReserved or media type), which the API now reads differently.');

// Request bodies.
rule('request-body-added-required', 'Every existing request lacks the newly required body and is refused with 400.', ['request-body-added-required']);
rule('request-body-became-required', 'Clients that send no body are now refused with 400.', ['request-body-became-required']);
rule('request-body-removed', 'Clients still send a body that the operation no longer defines, so it is ignored or refused.', ['request-body-removed']);
rule('request-body-media-type-removed', 'Clients sending this media type are now refused with 415.', ['request-body-media-type-removed']);

// Responses.
rule('response-success-status-removed', 'Clients expecting this success status treat the new answer as a failure or cannot parse it.', ['response-success-status-removed']);
rule('response-media-type-removed', 'Clients that parse this media type (or ask for it with Accept) no longer get it.', [
  'response-media-type-removed',
  'response-media-type-name-generalized',
]);
rule('response-header-removed-required', 'Clients read this required response header (for example Location after a create) and now find it missing.', [
  'required-response-header-removed',
]);
rule('response-header-removed-optional', 'Clients that read this response header when present never get it again.');
rule('response-header-became-optional', 'Clients read this header on every answer and now sometimes find it missing.', ['response-header-became-optional']);

// Schemas, both ways. A request must accept at least what it accepted; a response must
// return at most what it returned, and keep everything it returned.
const requestAt = ['request-parameter', 'request-body', 'request-property'];
const responseAt = ['response-header', 'response-body', 'response-property'];
const sent = 'Clients sending values the released contract accepts';
const read = 'Clients that parse this response';
// oasdiff's rule for the same check at the same place, where it has one (none for headers).
const named = (suffix: string) => (p: string) => (p === 'response-header' ? [] : [`${p}-${suffix}`]);

schemaRule(requestAt, 'type-changed', `${sent} in a type the changed contract no longer lists are refused with 400.`, (p) => [
  `${p}-type-changed`,
  `${p}-list-of-types-narrowed`,
  ...(p === 'request-body' ? ['request-body-became-not-nullable', 'request-body-media-type-schema-added'] : []),
  ...(p === 'request-property' ? ['request-property-became-not-nullable'] : []),
  ...(p === 'request-parameter' ? ['request-parameter-became-not-nullable', 'request-parameter-property-became-not-nullable', 'request-parameter-property-type-specialized', 'request-parameter-property-list-of-types-narrowed'] : []),
]);
schemaRule(requestAt, 'enum-value-removed', `${sent} with a value no longer in the enum are refused with 400.`, (p) => [
  `${p}-enum-value-removed`,
  ...(p === 'request-parameter' ? ['request-parameter-property-enum-value-removed', 'request-parameter-x-extensible-enum-value-removed'] : []),
  ...(p === 'request-property' ? ['request-property-x-extensible-enum-value-removed'] : []),
]);
schemaRule(requestAt, 'became-enum', `${sent} with any value other than the new enum's are refused with 400.`, (p) => [
  `${p}-became-enum`,
  ...(p === 'request-property' ? ['request-header-property-became-enum'] : []),
]);
schemaRule(requestAt, 'const-added', `${sent} with any value other than the new const are refused with 400.`, (p) => (p === 'request-parameter' ? [] : [`${p}-const-added`, `${p}-const-changed`]));
schemaRule(requestAt, 'max-decreased', `${sent} above the new maximum are refused with 400.`, (p) => [
  ...named('max-decreased')(p),
  ...named('exclusive-max-decreased')(p),
]);
schemaRule(requestAt, 'min-increased', `${sent} below the new minimum are refused with 400.`, (p) => [...named('min-increased')(p), ...named('exclusive-min-increased')(p)]);
schemaRule(requestAt, 'max-length-decreased', `${sent} longer than the new maxLength are refused with 400.`, named('max-length-decreased'));
schemaRule(requestAt, 'min-length-increased', `${sent} shorter than the new minLength are refused with 400.`, named('min-length-increased'));
schemaRule(requestAt, 'max-items-decreased', `${sent} with more items than the new maxItems are refused with 400.`, (p) => (p === 'request-parameter' ? [`${p}-max-items-decreased`] : []));
schemaRule(requestAt, 'min-items-increased', `${sent} with fewer items than the new minItems are refused with 400.`, named('min-items-increased'));
schemaRule(requestAt, 'max-properties-decreased', `${sent} with more properties than the new maxProperties are refused with 400.`);
schemaRule(requestAt, 'min-properties-increased', `${sent} with fewer properties than the new minProperties are refused with 400.`);
schemaRule(requestAt, 'pattern-added', `${sent} that do not match the new or changed pattern are refused with 400 (a changed pattern cannot be proven wider).`, (p) =>
  p === 'request-body' ? [] : [`${p}-pattern-added`],
);
schemaRule(requestAt, 'format-changed', `${sent} in the released format are refused when the new format differs.`);
schemaRule(requestAt, 'constraint-added', `${sent} that break the new or changed constraint are refused with 400.`, (p) =>
  p === 'request-parameter'
    ? []
    : [
        'all-of-added',
        'if-added',
        'then-added',
        'else-added',
        'contains-added',
        'min-contains-increased',
        'max-contains-decreased',
        'dependent-required-added',
        'dependent-required-changed',
        'dependent-schema-added',
        'pattern-property-added',
        'property-names-added',
        'unevaluated-items-added',
        'unevaluated-properties-added',
        'prefix-items-removed',
        'content-schema-added',
        'content-media-type-changed',
        'content-encoding-changed',
        ...(p === 'request-body' ? ['request-body-wrapped-in-one-of'] : []),
      ].map((s) => (s.startsWith('request-') ? s : `${p}-${s}`)),
);
schemaRule(requestAt, 'one-of-removed', `${sent} that matched the removed oneOf alternative are refused with 400.`, (p) => (p === 'request-parameter' ? [] : [`${p}-one-of-removed`]));
schemaRule(requestAt, 'any-of-removed', `${sent} that matched the removed anyOf alternative are refused with 400.`, (p) => (p === 'request-parameter' ? [] : [`${p}-any-of-removed`]));
schemaRule(requestAt, 'discriminator-changed', `${sent} with the released discriminator property or mapping are no longer recognised.`);
schemaRule(requestAt, 'additional-properties-restricted', `${sent} with properties the schema does not name are now refused with 400.`);
schemaRule(['request-parameter', 'request-property'], 'default-value-changed', 'Clients that leave this value out relied on its default and now get different behaviour.', (p) =>
  p === 'request-parameter' ? ['request-parameter-default-value-changed', 'request-parameter-default-value-added', 'request-parameter-default-value-removed'] : [],
);
rule('request-property-became-required', 'Clients that leave this optional property out are now refused with 400.', [
  'request-property-became-required',
  'request-property-became-required-with-default',
  'request-header-property-became-required',
]);
rule('request-property-added-required', 'Every existing request lacks the new required property and is refused with 400.', [
  'new-required-request-property',
  'new-required-request-property-with-default',
  'new-required-request-header-property',
]);
rule('request-property-removed', 'Clients still send this property, and the schema, which refuses properties it does not name, now refuses their requests with 400.');
rule('request-property-became-read-only', 'Clients that send this property have it ignored or refused now that it is read-only.');

schemaRule(responseAt, 'type-changed', `${read} meet a type it was not built for.`, (p) =>
  p === 'response-header'
    ? ['response-header-type-changed', 'response-header-type-generalized', 'response-header-became-nullable']
    : [`${p}-type-changed`, `${p}-type-generalized`, `${p}-list-of-types-widened`, `${p}-became-nullable`, ...(p === 'response-body' ? ['response-body-wrapped-in-one-of'] : [])],
);
schemaRule(responseAt, 'enum-value-added', `${read} meet a value outside the released enum.`);
schemaRule(responseAt, 'const-removed', `${read} relied on the released const and now meet other values.`, (p) => (p === 'response-header' ? [] : [`${p}-const-removed`, `${p}-const-changed`]));
schemaRule(responseAt, 'max-increased', `${read} meet numbers above the released maximum.`, (p) => (p === 'response-header' ? [] : [`${p}-max-increased`, `${p}-exclusive-max-increased`]));
schemaRule(responseAt, 'min-decreased', `${read} meet numbers below the released minimum.`, (p) => (p === 'response-header' ? [] : [`${p}-min-decreased`, `${p}-exclusive-min-decreased`]));
schemaRule(responseAt, 'max-length-increased', `${read} meet strings longer than the released maxLength.`, (p) =>
  p === 'response-header' ? [] : [`${p}-max-length-increased`, `${p}-max-length-unset`],
);
schemaRule(responseAt, 'min-length-decreased', `${read} meet strings shorter than the released minLength.`, (p) => (p === 'response-header' ? [] : [`${p}-min-length-decreased`]));
schemaRule(responseAt, 'max-items-increased', `${read} meet arrays longer than the released maxItems.`);
schemaRule(responseAt, 'min-items-decreased', `${read} meet arrays shorter than the released minItems.`, (p) =>
  p === 'response-header' ? [] : [`${p}-min-items-decreased`, `${p}-min-items-unset`],
);
schemaRule(responseAt, 'max-properties-increased', `${read} meet objects with more properties than the released maxProperties.`);
schemaRule(responseAt, 'min-properties-decreased', `${read} meet objects with fewer properties than the released minProperties.`);
schemaRule(responseAt, 'pattern-removed', `${read} meet strings that do not match the released pattern.`);
schemaRule(responseAt, 'format-changed', `${read} meet values outside the released format.`);
schemaRule(responseAt, 'constraint-removed', `${read} meet values that the removed or changed constraint used to exclude.`, (p) =>
  p === 'response-header'
    ? []
    : [
        'if-removed',
        'then-removed',
        'else-removed',
        'contains-removed',
        'min-contains-decreased',
        'max-contains-increased',
        'dependent-required-removed',
        'dependent-required-changed',
        'dependent-schema-removed',
        'pattern-property-removed',
        'property-names-removed',
        'unevaluated-items-removed',
        'unevaluated-properties-removed',
        'prefix-items-added',
        'content-schema-removed',
        'content-media-type-changed',
        'content-encoding-changed',
      ].map((s) => `${p}-${s}`),
);
schemaRule(responseAt, 'one-of-added', `${read} meet a oneOf alternative they were not built for.`, (p) => (p === 'response-header' ? [] : [`${p}-one-of-added`]));
schemaRule(responseAt, 'any-of-added', `${read} meet an anyOf alternative they were not built for.`);
schemaRule(responseAt, 'discriminator-changed', `${read} dispatch on the released discriminator property or mapping and no longer recognise the objects.`);
schemaRule(responseAt, 'additional-properties-widened', `${read} relied on no property outside those named and now meet others.`);
rule('response-property-removed-required', 'Clients read this required response property and now find it missing.', ['response-required-property-removed']);
rule('response-property-removed-optional', 'Clients that read this response property when present never get it again.');
rule('response-property-became-optional', 'Clients read this property on every answer and now sometimes find it missing.', ['response-property-became-optional']);
rule('response-property-became-write-only', 'Clients read this property in responses, and a write-only property is no longer returned.');

export const RULES: Readonly<Record<string, Rule>> = rules;

/** The rule, or an error: a check must not report a rule the catalogue lacks. */
export function ruleOf(id: string): Rule {
  const found = RULES[id];
  if (!found) throw new Error(`spec:breaking: rule ${id} is not in scripts/breaking/rules.ts`);
  return found;
}
