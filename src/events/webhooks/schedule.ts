// When a failed delivery is tried again: the Standard Webhooks schedule (5 s, 5 min, 30 min,
// 2 h, 5 h, 10 h after the attempt before, then every 10 h), a longer Retry-After from the
// receiver (at most 24 h), and the window after the first attempt (a delay is cut to its end,
// where a last attempt is made; then the message is given up).
// Pure: the caller gives it the clock.

/** The contract's delays, in seconds (WEBHOOK_RETRY_SCHEDULE_SECONDS replaces them for tests). */
export const DEFAULT_SCHEDULE_SECONDS: readonly number[] = [5, 300, 1800, 7200, 18_000, 36_000];
/** 3 days after the first attempt (WEBHOOK_RETRY_WINDOW_SECONDS). */
export const DEFAULT_WINDOW_SECONDS = 3 * 24 * 3600;
const RETRY_AFTER_CAP_MS = 24 * 3600 * 1000;

/** Milliseconds a Retry-After asks to wait (delay-seconds or an HTTP-date), at most 24 h; undefined when unreadable. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, RETRY_AFTER_CAP_MS);
  const at = Date.parse(text);
  if (Number.isNaN(at) || !/[a-z]/i.test(text)) return undefined;
  return Math.min(Math.max(at - now, 0), RETRY_AFTER_CAP_MS);
}

/** The delay after the `attempts`-th failed attempt (1 after the first): the schedule's, its last repeated. */
export function scheduledMs(attempts: number, schedule: readonly number[]): number {
  const seconds = schedule[Math.min(attempts, schedule.length) - 1] ?? schedule.at(-1) ?? 0;
  return seconds * 1000;
}

/**
 * The delay before the next attempt after the `attempts`-th failed one: the schedule's, or a
 * longer Retry-After. The database cuts it to the end of the window after the first attempt
 * and gives the message up after an attempt there (src/events/webhooks/messages.ts), by its own
 * clock.
 */
export function nextDelayMs(attempts: number, retryAfter: string | undefined, schedule: readonly number[], now = Date.now()): number {
  const scheduled = scheduledMs(attempts, schedule);
  const asked = retryAfterMs(retryAfter, now);
  return asked !== undefined && asked > scheduled ? asked : scheduled;
}
