// Whether the database answers, as /readyz reports it, at a bounded cost: however many
// probes arrive, at most one query is in flight and a new one starts at most once per
// `maxAgeMs`; every probe in between gets the last answer. A probe never waits longer than
// `timeoutMs` for a query, so a database that stopped answering shows as not ready within
// maxAgeMs + timeoutMs (1.75 s by default) of its last good answer.
import type pg from 'pg';

export interface ReadinessOptions {
  /** How long an answer is reused. */
  maxAgeMs?: number;
  /** A query slower than this counts as "not ready". */
  timeoutMs?: number;
}

/** Resolves true when the database answered a query within the last `maxAgeMs`. */
export function createReadiness(pool: Pick<pg.Pool, 'query'>, options: ReadinessOptions = {}): () => Promise<boolean> {
  const maxAgeMs = options.maxAgeMs ?? 1000;
  const timeoutMs = options.timeoutMs ?? 750;
  let last: { ready: boolean; at: number } | undefined;
  let checking: Promise<boolean> | undefined;
  // A query that outlived its check's timeout is waited on by the next check rather than
  // joined by another one.
  let querying: Promise<boolean> | undefined;

  function check(): Promise<boolean> {
    const at = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    querying ??= pool.query('SELECT 1').then(
      () => true,
      () => false,
    ).finally(() => {
      querying = undefined;
    });
    return Promise.race([querying, timedOut]).then((ready) => {
      clearTimeout(timer);
      last = { ready, at };
      checking = undefined;
      return ready;
    });
  }

  return async () => {
    if (last && performance.now() - last.at < maxAgeMs) return last.ready;
    checking ??= check();
    return checking;
  };
}
