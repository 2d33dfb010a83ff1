// Work each instance does on a timer, with no request needed: each feature plugin adds its
// own (`fastify.jobs.add`) as it registers. A job's runs never overlap: one still running
// when the next is due makes that one skip. Each runs once when the app is ready, and
// stops when it closes.
//
// What an operator watches (src/plugins/metrics.ts): each run's outcome (`onRun`), and each
// job's lag (`fastify.jobs.lags()`): how far past its interval the job is since the start of
// its last run that worked (or since it was started), 0 while it keeps its pace. A job that
// fails, or runs long, or whose timer fires late on a stalled event loop, lags.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { inSpan } from '../tracing/context.js';
import { failureLog } from './failures.js';

export interface Job {
  name: string;
  everyMs: number;
  /** Resolves with what it did, for the log (a count), or nothing to log. */
  run: () => Promise<string | undefined>;
}

export type JobOutcome = 'ok' | 'failed';

export interface JobLag {
  job: string;
  seconds: number;
}

export interface JobsOptions {
  /** Told of every run's outcome. */
  onRun?: (job: string, outcome: JobOutcome) => void;
}

declare module 'fastify' {
  interface FastifyInstance {
    jobs: {
      add(job: Job): void;
      /** Every started job's lag, in seconds, now. */
      lags(): JobLag[];
    };
  }
}

/** What a job that counts says: `what: n`, or nothing when it did nothing. */
export const counted = (what: string) => (n: number) => (n > 0 ? `${what}: ${n}` : undefined);

export default fp(
  async function jobs(fastify: FastifyInstance, options: JobsOptions) {
    const added: Job[] = [];
    const timers: NodeJS.Timeout[] = [];
    const failures = failureLog(fastify.log);
    /** When each started job's last run that worked started (at first: when the job was started). */
    const lastWorked = new Map<Job, number>();
    let started = false;
    const start = (job: Job): void => {
      let running = false;
      lastWorked.set(job, Date.now());
      const tick = (): void => {
        if (running) return;
        running = true;
        const at = Date.now();
        // Each run is a trace of its own (src/tracing/context.ts), its SQL under it.
        inSpan(`job ${job.name}`, {}, () => job.run())
          .then(
            (done) => {
              lastWorked.set(job, at);
              options.onRun?.(job.name, 'ok');
              failures.works(job.name);
              if (done) fastify.log.info({ job: job.name }, done);
            },
            (error: unknown) => {
              options.onRun?.(job.name, 'failed');
              failures.failed(job.name, error, `retrying every ${job.everyMs} ms`);
            },
          )
          .finally(() => {
            running = false;
          });
      };
      tick();
      timers.push(setInterval(tick, job.everyMs).unref());
    };
    fastify.decorate('jobs', {
      add(job: Job) {
        if (started) throw new Error(`job ${job.name}: jobs are added while the app registers its plugins, before it is ready`);
        added.push(job);
      },
      lags() {
        const now = Date.now();
        return [...lastWorked].map(([job, at]) => ({ job: job.name, seconds: Math.max(0, now - at - job.everyMs) / 1000 }));
      },
    });
    fastify.addHook('onReady', async () => {
      started = true;
      added.forEach(start);
    });
    fastify.addHook('onClose', async () => timers.forEach(clearInterval));
  },
  { name: 'jobs' },
);
