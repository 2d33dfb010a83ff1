// The JSON body parser: the contract's rules for numbers and strings hold before any
// handler or validator sees a body (openapi/v1.yaml, "Numbers" and "Strings"). It reads
// `application/json`, and `application/merge-patch+json` (RFC 7396: a JSON document) for the
// operations that declare it (updatePet), validated against the schema declared for it.
// Fastify validates a body only against the schema of its own media type and lets any
// other through unchecked, so a media type the operation does not declare is 415 here,
// before it is parsed.
// - One Content-Type header: Node keeps the first of several, which may not be the one the
//   client meant (RFC 9110 §5.3: Content-Type is a singleton field), so several are 400.
// - The charset is UTF-8 or absent; anything else is 415 (it would be misread as UTF-8).
// - A Content-Encoding (gzip, say) is 415: bodies are taken as they are, uncompressed.
// - Bytes that are not UTF-8 are 400, never decoded to U+FFFD and stored.
// - A `\u` escape that leaves a lone surrogate is 400 (JSON.parse keeps it; PostgreSQL
//   would store U+FFFD).
// - A number no double holds exactly (9007199254740990.9, 1.0000000000000001, 2^53 + 1)
//   is 400, never rounded. JSON.parse rounds silently, so such bodies are read again with a
//   reviver that sees each number as written (`context.source`). A property named twice
//   counts as JSON.parse counts it, the last, whatever the numbers.
// Each check costs a scan only when the raw text could hold what it refuses: most bodies
// (no '\u' escape, no fraction or exponent) take JSON.parse alone. What is refused is
// answered as a schema's failures are (src/errors/validation-messages.ts): one detail per
// field, at most 20, names repeated in at most 60 characters.
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest, onSendHookHandler } from 'fastify';
import { parse } from 'lossless-json';
import { ApiError, shown, type ErrorDetail } from '../errors/catalogue.js';
import { declaredMediaTypes, encodedBody, repeatedContentType, unsupportedMediaType } from '../errors/media-type.js';
import { problemsBody } from '../errors/validation-messages.js';
import { bodilessOperations, operationIdOf, optionalBodies } from '../contract/spec.js';
import { CONTRACT_DEPTH, INEXACT_NUMBER, MAX_DEPTH, nestsDeeperThan, parseMarkingRounded, RoundedNumber, roundedMessage } from '../http/json-text.js';

declare global {
  interface String {
    /** ES2024, on Node >= 20. */
    isWellFormed(): boolean;
    /** ES2024, on Node >= 20. */
    toWellFormed(): string;
  }
}

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

type Detail = (field: string, message: string, rule?: string) => void;

/** Finds what the contract refuses in a parsed body, naming each field (JSON pointer). */
function inspect(value: unknown, pointer: string, replaced: boolean, add: Detail): unknown {
  if (typeof value === 'string') {
    if (!value.isWellFormed()) add(pointer, 'must be well-formed Unicode (a \\u escape leaves a lone surrogate)');
    else if (replaced && value.includes('\uFFFD')) add(pointer, 'must be valid UTF-8');
    return value;
  }
  if (value instanceof RoundedNumber) {
    add(pointer, roundedMessage(value.digits), 'exact');
    return value;
  }
  if (Array.isArray(value)) return value.map((item, i) => inspect(item, `${pointer}/${i}`, replaced, add));
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    for (const key of Object.keys(object)) {
      const field = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      if (!key.isWellFormed() || (replaced && key.includes('\uFFFD'))) add(field, 'property name must be well-formed UTF-8');
      object[key] = inspect(object[key], field, replaced, add);
    }
  }
  return value;
}

/**
 * What is wrong with a body JSON.parse refused, and where: JSON.parse's own words differ
 * from one Node version to the next and often give no position, so the text is read again
 * by lossless-json, whose words and positions do not (`Object value expected after ':' at
 * line 1, column 10`), unless it stops first at a property named twice. A body that parses
 * broke a rule of the default parser instead (a `__proto__` key): its error stands.
 */
function syntaxError(error: Error, text: string): Error {
  if ((error as { code?: string }).code !== 'FST_ERR_CTP_INVALID_JSON_BODY') return error;
  const reasonOf = (read: (text: string) => unknown): string | undefined => {
    try {
      read(text);
      return undefined;
    } catch (refused) {
      return refused instanceof Error ? refused.message : String(refused);
    }
  };
  let reason = reasonOf(parse);
  // lossless-json refuses a property named twice, which JSON.parse takes: JSON.parse's words
  // say what is wrong then, if anything is, its position written as lossless-json's, and
  // never the text it quotes (`Unexpected token '}', ..."b":tru}" is not valid JSON`).
  if (reason?.startsWith('Duplicate key')) {
    reason = reasonOf(JSON.parse)
      ?.replace(/ in JSON at position (\d+)(?: \(line \d+ column \d+\))?$/, ' at position $1')
      .replace(/^(Unexpected token '[^']*'), .*$/s, '$1');
  }
  if (reason === undefined) {
    // Valid JSON: the default parser refused a `__proto__` or `constructor` key (prototype
    // poisoning), which no schema of the contract has.
    const what = 'has a property named __proto__, or constructor holding prototype, which this API refuses: no body of the contract has one';
    return new ApiError('bad_request', `Body ${what}`, { details: [{ location: 'body', field: '', rule: 'json', message: what }] });
  }
  const at = /^(.*) at position (\d+)$/.exec(reason);
  let where = '';
  if (at) {
    const before = text.slice(0, Number(at[2]));
    const line = before.split('\n').length;
    where = ` at line ${line}, column ${before.length - before.lastIndexOf('\n')}`;
  }
  // lossless-json quotes what it read (`Invalid number '123...'`): as
  // long as the body, at worst, so repeated in its first 60 characters.
  const said = (at?.[1] ?? reason).replace(/'([^']{61,})'/, (_, quoted: string) => `'${shown(quoted)}'`);
  // "Object value expected" reads on as "object value expected"; "JSON value expected" keeps its case.
  const what = `${said.replace(/^[A-Z](?![A-Z])/, (c) => c.toLowerCase())}${where}`;
  return new ApiError('bad_request', `Body is not valid JSON: ${what}`, { details: [{ location: 'body', field: '', rule: 'json', message: what }] });
}

/** The JSON media types this parser reads. */
export const JSON_MEDIA_TYPES = ['application/json', 'application/merge-patch+json'] as const;

/**
 * Media types read as streams: an answer in one is sent as it is read (exportPets), and a
 * body in one (createPetImport) goes to its handler as the stream of its bytes, read as they
 * arrive; where the operation does not declare the media type for its body, the body is
 * refused (415) as any other the operation does not read. fastify-openapi-glue warns at
 * start-up of a media type without a parser: this is theirs.
 */
export const STREAMED_MEDIA_TYPES = ['text/csv', 'application/x-ndjson'] as const;

/**
 * The onSend hook of a route that takes a streamed body: an answer sent before the body was
 * all received (a 4xx part-way through it, or before its handler read it) closes the
 * connection, as its client may still be sending: keeping the connection would mean reading
 * the rest of a body of up to IMPORT_MAX_BYTES.
 */
export const closeUnlessReceived: onSendHookHandler = (request, reply, payload, done) => {
  if (!request.raw.complete) reply.header('connection', 'close');
  done(null, payload);
};

/** The 415 for a body in a charset other than UTF-8, or undefined. */
function otherCharset(request: FastifyRequest): ApiError | undefined {
  const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8') return undefined;
  return new ApiError('unsupported_media_type', 'Content-Type charset must be utf-8');
}

export function registerJsonBody(fastify: FastifyInstance): void {
  fastify.addContentTypeParser([...STREAMED_MEDIA_TYPES], (request: FastifyRequest, payload: unknown, done: (error: Error | null, body?: unknown) => void) => {
    const declared = declaredMediaTypes(request).includes(request.mediaType ?? '');
    const refused = repeatedContentType(request) ?? (declared ? (encodedBody(request) ?? otherCharset(request)) : unsupportedMediaType(request));
    done(refused ?? null, refused ? undefined : payload);
  });
  const jsonParse = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser([...JSON_MEDIA_TYPES], { parseAs: 'buffer' }, (request: FastifyRequest, buffer: Buffer, done) => {
    const repeated = repeatedContentType(request);
    if (repeated) {
      done(repeated, undefined);
      return;
    }
    // application/json is read wherever a body is, unless the operation declares the media
    // types of its body without it (an operation that takes none ignores it); another JSON
    // media type only where the operation declares it.
    const declared = declaredMediaTypes(request);
    if ((request.mediaType !== 'application/json' || declared.length > 0) && !declared.includes(request.mediaType ?? '')) {
      done(unsupportedMediaType(request), undefined);
      return;
    }
    // A compressed body would be read as JSON text and fail there, with words about JSON.
    const encoded = encodedBody(request);
    if (encoded) {
      done(encoded, undefined);
      return;
    }
    const charset = otherCharset(request);
    if (charset) {
      done(charset, undefined);
      return;
    }
    // An empty body where the body is optional is the empty object the contract allows:
    // what HTTP clients (Swagger UI, redocly respect) send with `Content-Type:
    // application/json` when there is nothing to send.
    if (buffer.length === 0 && optionalBodies.has(operationIdOf(request) ?? '')) {
      done(null, {});
      return;
    }
    // An operation that takes no body (deletePet, deleteCategory) reads an empty one as none,
    // whatever Content-Type came with it.
    if (buffer.length === 0 && bodilessOperations.has(operationIdOf(request) ?? '')) {
      done(null, undefined);
      return;
    }
    const utf8 = isUtf8(buffer);
    const text = buffer.toString('utf8');
    if (text.length > MAX_DEPTH && nestsDeeperThan(text, MAX_DEPTH)) {
      const message = `nests arrays or objects more than ${MAX_DEPTH} levels deep; this API's bodies need at most ${CONTRACT_DEPTH}`;
      done(new ApiError('bad_request', `Body ${message}`, { details: [{ location: 'body', field: '', rule: 'depth', message }] }), undefined);
      return;
    }
    // Syntax, empty bodies and __proto__ are the default parser's (secure-json-parse).
    jsonParse(request, text, (error, parsed: unknown) => {
      if (error) return done(syntaxError(error, text), undefined);
      const exact = !INEXACT_NUMBER.test(text);
      if (utf8 && exact && !text.includes('\\u')) return done(null, parsed);
      const details: ErrorDetail[] = [];
      const add: Detail = (field, message, rule = 'encoding') => void details.push({ location: 'body', field, rule, message });
      const value = inspect(exact ? parsed : parseMarkingRounded(text), '', !utf8, add);
      if (!utf8 && details.length === 0) add('', 'must be valid UTF-8');
      if (details.length === 0) return done(null, value);
      const refused = problemsBody('body', details);
      done(new ApiError(refused.code, refused.message, refused.details ? { details: refused.details } : {}), undefined);
    });
  });
}
