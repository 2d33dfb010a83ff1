// One access-log line per request, written when the response has been sent, instead of
// Fastify's two ("incoming request" + "request completed"). Through Fastify's LogController
// rather than an onResponse hook: Fastify calls it anyway, so the line costs no hook.
//
// The URL is the only part of a request this line logs (headers, which carry the API key,
// are not), so it is where credentials sent in a query string are redacted: keys are never
// logged, however a client sends them.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

const REDACTED = '[REDACTED]';

// Query parameter names, lower-cased with everything but letters and digits removed
// (`api_key`, `Api-Key` and `apiKey` are all `apikey`), that carry credentials in common
// APIs (OAuth, AWS and Azure signed URLs, webhooks, session links) ...
const CREDENTIAL_NAMES = new Set(['key', 'token', 'auth', 'authorization', 'bearer', 'jwt', 'sig', 'code', 'pass', 'pwd', 'session', 'sid', 'otp']);
// ... or that contain one of these.
const CREDENTIAL_PARTS = /token|secret|passw|apikey|accesskey|privatekey|signature|credential|sessionid/;
// Our own keys, wherever in the URL they appear (a key pasted into a path or a value).
const API_KEY = /ask_[A-Za-z0-9_-]+/g;

function isCredentialName(raw: string): boolean {
  let name = raw;
  try {
    name = decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    // Not validly percent-encoded: judge it as written.
  }
  name = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  return CREDENTIAL_NAMES.has(name) || CREDENTIAL_PARTS.test(name);
}

/** The URL as it may be logged: values of credential-carrying query parameters and API keys replaced. */
export function redactUrl(url: string): string {
  const query = url.indexOf('?');
  let safe = url;
  if (query >= 0) {
    const pairs = url.slice(query + 1).split('&');
    safe = `${url.slice(0, query + 1)}${pairs
      .map((pair) => {
        const eq = pair.indexOf('=');
        return eq >= 0 && isCredentialName(pair.slice(0, eq)) ? `${pair.slice(0, eq)}=${REDACTED}` : pair;
      })
      .join('&')}`;
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
