// Retries, as a fetch wrapped around the caller's: it sees every request the client sends,
// the typed methods' and `raw`'s alike, and repeats one only when repeating it cannot do
// anything twice.
//
// A request is repeatable when its method is idempotent (RFC 9110 §9.2.2: GET, HEAD,
// OPTIONS, PUT, DELETE) or it carries an Idempotency-Key to an operation that takes one:
// the service then answers a repeat with the stored answer of the first
// (`Idempotent-Replayed: true`) and never adds twice. Any other POST is never repeated, a
// key or not: a key means nothing to an operation the contract gives none, and createApiKey
// and rotateApiKey, which answer a new secret once, would mint a second one. A repeatable
// request is retried on:
// - 429 (over the rate limit) and 503 (the database cannot answer now), after `Retry-After`;
// - 409 `idempotency_in_flight` (its key is held by a request still running: after a lost
//   answer, that is this very call's earlier attempt), after `Retry-After`;
// - a network failure (fetch rejects with a TypeError: refused, reset, DNS), after a backoff.
//   The request may have been processed; the repeat is safe for the reason above.
// Anything else is answered at once. The same Request, Idempotency-Key included, is sent
// each time. Attempts and each wait are bounded: a `Retry-After` longer than `maxDelayMs`
// is not waited for, the answer is returned (as an AnimalStoreError with its `retryAfter`).

export interface RetryOptions {
  /** Attempts in all, the first included; 1 turns retries off. Default 3. */
  maxAttempts?: number;
  /** The longest single wait. A longer `Retry-After` is not waited for: the answer is returned. Default 30 000. */
  maxDelayMs?: number;
  /** Without `Retry-After` (a network failure), the n-th retry waits about baseDelayMs * 2^(n-1), at most maxDelayMs. Default 500. */
  baseDelayMs?: number;
  /** Called before each wait, for logging or metrics. */
  onRetry?: (event: RetryEvent) => void;
}

export interface RetryEvent {
  /** The attempt that failed, from 1. */
  attempt: number;
  /** How long the client waits before the next attempt. */
  delayMs: number;
  method: string;
  url: string;
  /** The status of the answer that is retried; undefined after a network failure. */
  status: number | undefined;
  /** The network failure that is retried; undefined after an answer. */
  error: unknown;
}

export const DEFAULT_RETRY = { maxAttempts: 3, maxDelayMs: 30_000, baseDelayMs: 500 } as const;

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

function checked(options: RetryOptions | false | undefined): Required<Omit<RetryOptions, 'onRetry'>> & Pick<RetryOptions, 'onRetry'> {
  if (options === false) return { ...DEFAULT_RETRY, maxAttempts: 1 };
  const policy = { ...DEFAULT_RETRY, ...options };
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) throw new RangeError(`retry.maxAttempts must be an integer >= 1, not ${policy.maxAttempts}`);
  for (const name of ['maxDelayMs', 'baseDelayMs'] as const) {
    if (!Number.isFinite(policy[name]) || policy[name] < 0) throw new RangeError(`retry.${name} must be a number >= 0, not ${policy[name]}`);
  }
  return policy;
}

/** `Retry-After` in milliseconds: delay-seconds or an HTTP-date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

async function isRetried(request: Request, response: Response): Promise<boolean> {
  if (response.status === 429 || response.status === 503) return true;
  if (response.status === 409 && request.headers.has('idempotency-key')) {
    const body: unknown = await response
      .clone()
      .json()
      .catch(() => undefined);
    return typeof body === 'object' && body !== null && (body as { code?: unknown }).code === 'idempotency_in_flight';
  }
  return false;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * `base` with the retries above. `takesIdempotencyKey` says whether a request is to an
 * operation that takes an Idempotency-Key (a key sent elsewhere makes nothing repeatable).
 */
export function retryingFetch(base: typeof fetch, options: RetryOptions | false | undefined, takesIdempotencyKey: (request: Request) => boolean): typeof fetch {
  const policy = checked(options);
  /** The wait before retry `attempt` when the service named none: doubling, half of it random so that clients that failed together do not return together. */
  const backoff = (attempt: number): number => {
    const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  };
  return async (input, init) => {
    const request = new Request(input, init);
    const repeatable = IDEMPOTENT_METHODS.has(request.method) || (request.headers.has('idempotency-key') && takesIdempotencyKey(request));
    for (let attempt = 1; ; attempt++) {
      const last = !repeatable || attempt >= policy.maxAttempts;
      let response: Response;
      try {
        // A clone each time: a body can be read once, and the original stays unread.
        response = await base(request.clone());
      } catch (error) {
        if (last || request.signal.aborted || !(error instanceof TypeError)) throw error;
        const delayMs = backoff(attempt);
        policy.onRetry?.({ attempt, delayMs, method: request.method, url: request.url, status: undefined, error });
        await sleep(delayMs, request.signal);
        continue;
      }
      if (last || !(await isRetried(request, response))) return response;
      const delayMs = retryAfterMs(response.headers.get('retry-after')) ?? backoff(attempt);
      if (delayMs > policy.maxDelayMs) return response;
      // The answer is dropped: free its connection. Not awaited: cancelling a body that was
      // cloned (tee'd) settles only once every clone is cancelled or read.
      response.body?.cancel().catch(() => undefined);
      policy.onRetry?.({ attempt, delayMs, method: request.method, url: request.url, status: response.status, error: undefined });
      await sleep(delayMs, request.signal);
    }
  };
}
