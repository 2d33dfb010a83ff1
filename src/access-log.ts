// One access-log line per request, written when the response has been sent, instead of
// Fastify's two ("incoming request" + "request completed"). Through Fastify's LogController
// rather than an onResponse hook: Fastify calls it anyway, so the line costs no hook.
//
// The URL is the only part of a request this line logs (headers, which carry the API key,
// are not), so it is where credentials sent in a query string are redacted: keys are never
// logged, however a client sends them.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

const REDACTED = '[REDACTED]';

// Query parameter names, lower-cased, percent-decoded and with separators removed (`api_key`,
// `Api-Key`, `api%5Fkey` and `apiKey` are all `apikey`), that carry credentials in common
// APIs (OAuth, AWS and Azure signed URLs, webhooks, session links) ...
const CREDENTIAL_NAMES = new Set(['key', 'token', 'auth', 'authorization', 'bearer', 'jwt', 'sig', 'code', 'pass', 'pwd', 'session', 'sid', 'otp']);
// ... or that contain one of these.
const CREDENTIAL_PARTS = /token|secret|passw|apikey|accesskey|privatekey|signature|credential|sessionid/;
// A first look at the whole query, so that most requests (whose queries hold none of these
// words) cost one regular expression: every name above contains one, unless it is
// percent-encoded.
const MAYBE_CREDENTIAL = /key|tok|secret|pass|pwd|sig|auth|bearer|jwt|code|session|sid|otp|credential|%/i;
const NOT_ALPHANUMERIC = /[^a-z0-9]/;
const NOT_ALPHANUMERICS = /[^a-z0-9]/g;
// Our own keys, wherever in the URL they appear (a key pasted into a path or a value).
const API_KEY = /ask_[A-Za-z0-9_-]+/g;

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
  return CREDENTIAL_NAMES.has(name) || CREDENTIAL_PARTS.test(name);
}

/** The URL as it may be logged: values of credential-carrying query parameters and API keys replaced. */
export function redactUrl(url: string): string {
  let safe = url;
  const query = url.indexOf('?');
  if (query >= 0 && MAYBE_CREDENTIAL.test(url.slice(query + 1))) {
    // Runs on every request: a scan with indexOf (split() cost 4x more), and the URL is
    // rebuilt only when something is replaced.
    let rebuilt = '';
    let copied = 0;
    for (let start = query + 1; start < url.length; ) {
      const amp = url.indexOf('&', start);
      const end = amp < 0 ? url.length : amp;
      const eq = url.indexOf('=', start);
      if (eq > start && eq < end && isCredentialName(url.slice(start, eq))) {
        rebuilt += `${url.slice(copied, eq + 1)}${REDACTED}`;
        copied = end;
      }
      start = end + 1;
    }
    if (copied > 0) safe = rebuilt + url.slice(copied);
  }
  return safe.includes('ask_') ? safe.replace(API_KEY, `ask_${REDACTED}`) : safe;
}

export class AccessLog extends LogController {
  constructor() {
    // Keeps Fastify's other per-request lines (404s, its default error handler) off: ours
    // are this line and the error handler's.
    super({ disableRequestLogging: true });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { method: request.method, url: redactUrl(request.url), statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 };
    // Only a failure to write the response arrives here; handler errors are logged by the
    // error handler (src/plugins/errors.ts).
    if (error) request.log.warn({ ...line, err: { message: error.message } }, 'request');
    else request.log.info(line, 'request');
  }
}
