// A loop that fails (the database is away) says so once, and again when it works again,
// not at every turn: what the timed jobs (src/jobs/plugin.ts) and the webhook engine
// (src/events/webhooks/engine.ts) log.
import type { FastifyBaseLogger } from 'fastify';

export interface FailureLog {
  /** `what` failed: logged as a warning the first time since it last worked. */
  failed(what: string, error: unknown, retrying?: string): void;
  /** `what` worked: logged once, if it had failed. */
  works(what: string): void;
}

export function failureLog(log: Pick<FastifyBaseLogger, 'warn' | 'info'>, prefix = ''): FailureLog {
  const failing = new Set<string>();
  return {
    failed(what, error, retrying) {
      if (failing.has(what)) return;
      failing.add(what);
      log.warn({ err: { message: error instanceof Error ? error.message : String(error) }, job: what }, `${prefix}${what} failed${retrying ? `; ${retrying}` : ''}`);
    },
    works(what) {
      if (failing.delete(what)) log.info({ job: what }, `${prefix}${what} works again`);
    },
  };
}
