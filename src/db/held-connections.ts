// Work that holds a connection for as long as its client reads or sends (an export, the body
// of an import) takes at most half its pool, per kind of work, leaving the rest to every
// other request: one more is refused at once (its caller answers 503 with Retry-After),
// never queued behind the pool's connections.
import type pg from 'pg';

/** A connection taken for such work (`release` counts it back once; later calls do nothing), or the count that refused it. */
export type Hold = { release: () => void } | { full: number };

/** The bound of one kind of work: at most half of each pool's connections (at least one). */
export function connectionHolders() {
  const holding = new WeakMap<pg.Pool, number>();
  return {
    take(pool: pg.Pool): Hold {
      const now = holding.get(pool) ?? 0;
      if (now >= Math.max(1, Math.floor((pool.options.max ?? 10) / 2))) return { full: now };
      holding.set(pool, now + 1);
      let held = true;
      return {
        release: () => {
          if (!held) return;
          held = false;
          holding.set(pool, (holding.get(pool) ?? 1) - 1);
        },
      };
    },
  };
}
