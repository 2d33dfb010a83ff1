// The retry schedule as pure functions: the Standard Webhooks delays, the last repeated, and
// Retry-After (seconds or an HTTP date, at most 24 h) when it is longer.
import { describe, expect, it } from 'vitest';
import { DEFAULT_SCHEDULE_SECONDS, nextDelayMs, retryAfterMs } from '../../src/events/webhooks/schedule.js';

const now = Date.parse('2026-11-26T10:00:00.000Z');

describe('the retry schedule', () => {
  it.each([
    [1, 5_000],
    [2, 300_000],
    [3, 1_800_000],
    [4, 7_200_000],
    [5, 18_000_000],
    [6, 36_000_000],
    [7, 36_000_000],
    [20, 36_000_000],
  ])('after failure %i waits %i ms', (attempts, ms) => {
    expect(nextDelayMs(attempts, undefined, DEFAULT_SCHEDULE_SECONDS, now)).toBe(ms);
  });

  it.each<[string, number | undefined]>([
    ['120', 120_000],
    [' 7 ', 7_000],
    ['0', 0],
    ['999999', 86_400_000],
    ['Thu, 26 Nov 2026 10:10:00 GMT', 600_000],
    ['Thu, 26 Nov 2026 09:00:00 GMT', 0],
    ['Sat, 28 Nov 2026 10:00:00 GMT', 86_400_000],
    ['soon', undefined],
    ['-5', undefined],
    ['1.5', undefined],
  ])('Retry-After %j is %s ms', (value, ms) => {
    expect(retryAfterMs(value, now)).toBe(ms);
  });

  it('uses Retry-After only when it is longer than the scheduled delay', () => {
    expect(nextDelayMs(1, '60', DEFAULT_SCHEDULE_SECONDS, now)).toBe(60_000);
    expect(nextDelayMs(3, '60', DEFAULT_SCHEDULE_SECONDS, now)).toBe(1_800_000);
    expect(nextDelayMs(6, 'Fri, 27 Nov 2026 12:00:00 GMT', DEFAULT_SCHEDULE_SECONDS, now)).toBe(86_400_000);
  });
});
