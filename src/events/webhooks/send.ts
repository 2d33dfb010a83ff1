// One delivery attempt: a POST of the event, signed as Standard Webhooks specifies (with the
// `standardwebhooks` library), over a fresh connection made through the guarded lookup
// (src/events/webhooks/target.ts). Redirects are never followed (Node's client does not), the
// answer's body is never read, and the whole attempt is bounded by the timeout.
import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { classifyAddress } from './address.js';
import { guardedLookup, literalOf, type Resolver } from './target.js';

export interface Attempt {
  url: string;
  /** The event's id: `webhook-id`. */
  messageId: string;
  /** The event as JSON text. */
  payload: string;
  /** The current secret, then the previous one while it still signs. */
  secrets: readonly string[];
  /** More headers: the trace context (`traceparent`) of the change that wrote the event. */
  headers?: Record<string, string>;
}

export type AttemptError = 'timeout' | 'refused_address' | 'connection_failed' | 'dns_failed' | 'tls_failed';

export type Outcome = ({ statusCode: number; retryAfter?: string } | { error: AttemptError }) & { durationMs: number };

export interface SendOptions {
  resolve: Resolver;
  allowPrivate: boolean;
  timeoutMs: number;
}

/** `webhook-signature`: one `v1,<base64>` per secret, separated by spaces. */
export function signatures(secrets: readonly string[], messageId: string, at: Date, payload: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(messageId, at, payload)).join(' ');
}

function errorOf(error: unknown): AttemptError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
  if (code === 'EREFUSEDADDRESS') return 'refused_address';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NONAME') return 'dns_failed';
  if (/CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY|HOSTNAME_MISMATCH|ERR_SSL/.test(code)) return 'tls_failed';
  return 'connection_failed';
}

export function send(attempt: Attempt, options: SendOptions): Promise<Outcome> {
  const started = performance.now();
  const elapsed = (): number => Math.min(600_000, Math.round(performance.now() - started));
  const url = new URL(attempt.url);
  const literal = literalOf(url);
  if (literal !== undefined && !options.allowPrivate && !classifyAddress(literal).public) return Promise.resolve({ error: 'refused_address', durationMs: elapsed() });
  const at = new Date();
  const body = Buffer.from(attempt.payload);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<Outcome>((resolve) => {
    let settled = false;
    const finish = (outcome: Outcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(outcome);
    };
    const request = client.request(url, {
      method: 'POST',
      agent: false,
      lookup: guardedLookup(options.resolve, options.allowPrivate),
      headers: {
        ...attempt.headers,
        'content-type': 'application/json',
        'content-length': body.length,
        'user-agent': 'animal-store-webhooks',
        'webhook-id': attempt.messageId,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signatures(attempt.secrets, attempt.messageId, at, attempt.payload),
      },
    });
    const timer = setTimeout(() => finish({ error: 'timeout', durationMs: elapsed() }), options.timeoutMs);
    request.on('response', (response) => {
      const retryAfter = response.headers['retry-after'];
      response.resume();
      const statusCode = response.statusCode ?? 0;
      // A status outside HTTP's 100-599 is no answer the log can record as one.
      if (statusCode < 100 || statusCode > 599) return finish({ error: 'connection_failed', durationMs: elapsed() });
      finish({ statusCode, ...(retryAfter ? { retryAfter } : {}), durationMs: elapsed() });
    });
    request.on('error', (error) => finish({ error: errorOf(error), durationMs: elapsed() }));
    request.end(body);
  });
}
