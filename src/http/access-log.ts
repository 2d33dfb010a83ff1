// One access-log line per request, instead of Fastify's two ("incoming request" + "request
// completed"). Through Fastify's LogController rather than hooks: Fastify calls it anyway.
//
// A request whose client went away before its answer was written (the connection closed
// without the response finishing) gets its one line here too, at info: it is the client's
// doing, nothing for an operator to act on.
//
// The URL is the only part of a request these lines log (headers, which carry the API key,
// are not), so it is where credentials sent in a URL are redacted: keys are never logged,
// however a client sends them.
import { LogController, type FastifyReply, type FastifyRequest, type onSendHookHandler } from 'fastify';
import { operationOf } from '../contract/spec.js';

const REDACTED = '[REDACTED]';

// A query parameter's value is redacted when its name, lower-cased, percent-decoded and with
// separators removed (`api_key`, `Api-Key`, `api%5Fkey` and `apiKey` are all `apikey`),
// contains one of these words (`subscription-key`, `x-amz-signature`, `phpsessid`,
// `refresh_token`, `client_secret`, `authkey`, ...) ...
const CREDENTIAL_PARTS = /key|token|secret|passw|passphrase|pwd|session|sessid|auth|sig|hmac|ticket|cred|jwt|bearer|assertion|saml/;
// ... or is one of these short ones, too common inside other words to match as parts.
const CREDENTIAL_NAMES = new Set(['code', 'pw', 'pass', 'sid', 'otp', 'pin']);
// Matching parts errs on the side of hiding (`monkey`, `author`, `design` are redacted too):
// a hidden value costs a little debugging, a logged one a credential. `limit`, `status` and
// `cursor`, the contract's parameters, stay visible.
//
// A first look at the whole query, so that most requests (whose queries hold none of these
// words) cost one regular expression: every name above contains one of these beginnings,
// unless it is percent-encoded (`%`) or a separator splits its first letters.
const MAYBE_CREDENTIAL = /key|tok|secr|pass|pw|sess|auth|sig|hmac|tick|cred|jwt|bear|asser|saml|code|sid|otp|pin|%/i;
const NOT_ALPHANUMERIC = /[^a-z0-9]/;
const NOT_ALPHANUMERICS = /[^a-z0-9]/g;

// Our own keys (`ask_` and base64url), wherever in the URL they appear (a key pasted into a
// path or a value), also with any of their characters percent-encoded, once or more
// (`ask%5F...`, `%61sk_...`, `%255F`), hex in either case. Matching the encoded forms rather
// than decoding the URL first keeps the logged URL as the client spelled it.
const encoded = (hex: string): string => `%(?:25)*${hex}`;
const API_KEY = new RegExp(
  `(?:a|${encoded('61')})(?:s|${encoded('73')})(?:k|${encoded('6[bB]')})(?:_|${encoded('5[fF]')})(?:[A-Za-z0-9_-]|${encoded('[0-9A-Fa-f]{2}')})+`,
  'g',
);

function isCredentialName(raw: string): boolean {
  let name = raw.toLowerCase();
  if (name.includes('%') || name.includes('+')) {
    try {
      name = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch {
      // Not validly percent-encoded: judged as written.
    }
  }
  if (NOT_ALPHANUMERIC.test(name)) name = name.replace(NOT_ALPHANUMERICS, '');
  return CREDENTIAL_PARTS.test(name) || CREDENTIAL_NAMES.has(name);
}

/** Where the query parameter starting at `from` ends: the next `&` or `;` (both separate parameters), or the end. */
function parameterEnd(url: string, from: number): number {
  const amp = url.indexOf('&', from);
  const semicolon = url.indexOf(';', from);
  if (amp < 0) return semicolon < 0 ? url.length : semicolon;
  return semicolon < 0 || amp < semicolon ? amp : semicolon;
}

/** The URL as it may be logged: values of credential-carrying query parameters and API keys replaced. */
export function redactUrl(url: string): string {
  let safe = url;
  const query = url.indexOf('?');
  if (query >= 0 && MAYBE_CREDENTIAL.test(url.slice(query + 1))) {
    // Runs on every request: one scan with indexOf, and the URL is rebuilt only when
    // something is replaced.
    let rebuilt = '';
    let copied = 0;
    for (let start = query + 1; start < url.length; ) {
      let end = parameterEnd(url, start);
      const eq = url.indexOf('=', start);
      if (eq > start && eq < end && isCredentialName(url.slice(start, eq))) {
        // To the next `&`: a `;` may be part of the value.
        const amp = url.indexOf('&', eq);
        end = amp < 0 ? url.length : amp;
        rebuilt += `${url.slice(copied, eq + 1)}${REDACTED}`;
        copied = end;
      }
      start = end + 1;
    }
    if (copied > 0) safe = rebuilt + url.slice(copied);
  }
  return safe.includes('ask_') || safe.includes('%') ? safe.replace(API_KEY, `ask_${REDACTED}`) : safe;
}

function accessLine(request: FastifyRequest, reply: FastifyReply) {
  const line = { method: request.method, url: redactUrl(request.url), statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 };
  return request.traceId === undefined ? line : { ...line, traceId: request.traceId };
}

// Replies whose line is written (at most one line each): by requestCompleted for a failure
// to write the answer, or as a client gone.
const logged = new WeakSet<FastifyReply>();

/** The line for a request whose client went away before its answer was written. */
function clientGone(request: FastifyRequest, reply: FastifyReply): void {
  logged.add(reply);
  // The request stream's own error when the client left mid-body (`aborted`, ECONNRESET).
  const errored = request.raw.errored as NodeJS.ErrnoException | null;
  request.log.info(
    { ...accessLine(request, reply), operation: operationOf(request), ...(errored ? { err: { message: errored.message, code: errored.code } } : {}) },
    'client went away before the answer was written',
  );
}

// Replies whose connection closed before the app sent its answer: their line is written
// when the answer is sent (`logAnswerAfterClose`), so that it says what it would have been.
const awaitingAnswer = new WeakSet<FastifyReply>();

/**
 * An onSend hook (Fastify calls it with every answer, whoever makes it: a handler, the
 * error handler, the not-found handler): writes the line of a request whose client went
 * away before this answer. Every other answer costs one WeakSet lookup and a property read.
 *
 * Gone means either that the connection's 'close' came first (`awaitingAnswer`), or that
 * the socket is already destroyed and its 'close' is still on its way: a reset is read,
 * the socket destroyed at once, and 'close' emitted a turn later. An answer sent in that
 * turn is dropped by Node, and on Node 20 'close' then finds the response finished, and
 * Fastify never reports it: without this second test the request had no line at all
 * (test/security/requests.test.ts, on a busy machine).
 */
export const logAnswerAfterClose: onSendHookHandler = (request, reply, payload, done) => {
  if (awaitingAnswer.delete(reply) || (request.raw.socket?.destroyed === true && !logged.has(reply))) clientGone(request, reply);
  done(null, payload);
};

export class AccessLog extends LogController {
  constructor() {
    // Keeps Fastify's other per-request lines (404s, its default error handler) off: ours
    // are these lines and the error handler's.
    super({ disableRequestLogging: true });
  }

  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    const response = reply.raw;
    // 'close' comes after 'finish' when the answer was written, and without it when the
    // connection closed first. Then nobody reads the answer; if the app has not sent it yet
    // (a handler still at work, or a body still arriving), the line waits for it so that it
    // says what would have been answered: a pet stored (201) or a body cut short (400).
    response.on('close', () => {
      if (response.writableFinished || logged.has(reply)) return;
      if (reply.sent || response.headersSent) clientGone(request, reply);
      else awaitingAnswer.add(reply);
    });
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // Only a failure to write the response arrives here; handler errors are logged by the
    // error handler (src/errors/plugin.ts).
    if (logged.has(reply)) return;
    if (error) {
      logged.add(reply);
      request.log.warn({ ...accessLine(request, reply), err: { message: error.message } }, 'request');
    } else request.log.info(accessLine(request, reply), 'request');
  }
}
