// verifyWebhook: checks a delivery's Standard Webhooks signature with the `standardwebhooks`
// library (never with code of our own) and returns the event, typed by the contract's
// top-level `webhooks` (src/generated/webhooks.ts). This module's declarations name none of
// the library's types, so a consumer's compiler never reads the library's (which need
// @types/node).
import { Webhook } from 'standardwebhooks';
import { WEBHOOK_EVENT_TYPES, type WebhookEvent } from './generated/webhooks.js';

/** Why a delivery was refused. */
export type WebhookRefusal =
  /** A `webhook-id`, `webhook-timestamp` or `webhook-signature` header is missing, repeated or malformed. */
  | 'headers'
  /** `webhook-timestamp` is more than 5 minutes from this machine's clock (a replay, or a clock that is off). */
  | 'timestamp'
  /** No signature in `webhook-signature` matches the body with this secret: tampered, or another secret. */
  | 'signature'
  /** The secret is not one the service gives (`whsec_` and base64). */
  | 'secret'
  /** Signed, but the body is not an event of the contract (`{id, type, createdAt, data}`). */
  | 'payload'
  /**
   * Signed, and an event, but of a type this client does not know (a newer contract). Answer
   * `2xx` and skip it; `event` holds it.
   */
  | 'unknown_type';

/** What verifyWebhook throws. Answer the delivery `400` (but `2xx` for `unknown_type`). */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookRefusal,
    message: string,
    /** The parsed body, once the signature is verified (`payload`, `unknown_type`); undefined otherwise. */
    readonly event?: unknown,
  ) {
    super(message);
  }
}

/** The request's headers: a fetch `Headers`, or Node's `request.headers` (IncomingHttpHeaders). */
export type WebhookHeaders = Headers | { readonly [name: string]: string | readonly string[] | undefined };

const NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
const KNOWN: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);

function standardHeaders(headers: WebhookHeaders): Record<(typeof NAMES)[number], string> {
  const get = (name: string): string | readonly string[] | undefined => {
    if (typeof Headers !== 'undefined' && headers instanceof Headers) return headers.get(name) ?? undefined;
    const record = headers as { readonly [name: string]: string | readonly string[] | undefined };
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    return key === undefined ? undefined : record[key];
  };
  const found = {} as Record<(typeof NAMES)[number], string>;
  for (const name of NAMES) {
    const value = get(name);
    if (typeof value !== 'string' || value === '') throw new WebhookVerificationError('headers', `${name}: ${value === undefined || value === '' ? 'missing' : 'sent more than once'}; a Standard Webhooks delivery carries it once`);
    found[name] = value;
  }
  return found;
}

function isEvent(value: unknown): value is { id: number; type: string; createdAt: string; data: object } {
  if (typeof value !== 'object' || value === null) return false;
  const { id, type, createdAt, data } = value as Record<string, unknown>;
  return typeof id === 'number' && typeof type === 'string' && typeof createdAt === 'string' && typeof data === 'object' && data !== null;
}

/**
 * Verifies a webhook delivery and returns its event.
 *
 * @param secret the endpoint's `whsec_…` secret (createWebhookEndpoint's or
 *   rotateWebhookEndpointSecret's answer). During a rotation the service signs with both the
 *   new and the previous secret, so either verifies.
 * @param headers the request's headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`).
 * @param body the request's body exactly as received: the raw text or bytes, never a
 *   re-serialized object (a single changed byte fails the signature).
 * @throws WebhookVerificationError with its `reason`: answer `400` (`2xx` for `unknown_type`).
 */
export function verifyWebhook(secret: string, headers: WebhookHeaders, body: string | Uint8Array): WebhookEvent {
  const found = standardHeaders(headers);
  let webhook: Webhook;
  try {
    webhook = new Webhook(secret);
  } catch {
    throw new WebhookVerificationError('secret', 'the secret is not a Standard Webhooks secret (whsec_ and base64): give the one createWebhookEndpoint answered');
  }
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  let parsed: unknown;
  try {
    parsed = webhook.verify(text, found);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/timestamp too (old|new)/i.test(message)) throw new WebhookVerificationError('timestamp', `webhook-timestamp ${found['webhook-timestamp']} is more than 5 minutes from this clock: a replayed or delayed delivery (or a clock that is off)`);
    if (/no matching signature/i.test(message)) throw new WebhookVerificationError('signature', 'no signature matches the body with this secret: the body was changed, or it was signed with another secret');
    if (/header/i.test(message)) throw new WebhookVerificationError('headers', `the Standard Webhooks headers are malformed (${message})`);
    // Signed, but its body is not JSON.
    throw new WebhookVerificationError('payload', 'signed, but the body is not JSON');
  }
  if (!isEvent(parsed)) throw new WebhookVerificationError('payload', 'signed, but the body is not an event ({id, type, createdAt, data})', parsed);
  if (!KNOWN.has(parsed.type)) throw new WebhookVerificationError('unknown_type', `signed, but ${parsed.type} is not an event type this client knows (${WEBHOOK_EVENT_TYPES.join(', ')}): answer 2xx and skip it`, parsed);
  return parsed as WebhookEvent;
}
