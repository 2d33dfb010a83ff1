// Work each instance does on a timer, with no request needed: each feature plugin adds its
// own (`fastify.jobs.add`) as it registers. A job's runs never overlap: one still running
// when the next is due makes that one skip. Each runs once when the app is ready, and
// stops when it closes.
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

declare module 'fastify' {
  interface FastifyInstance {
    jobs: { add(job: Job): void };
  }
}

/** What a job that counts says: `what: n`, or nothing when it did nothing. */
export const counted = (what: string) => (n: number) => (n > 0 ? `${what}: ${n}` : undefined);

export default fp(
  async function jobs(fastify: FastifyInstance) {
    const added: Job[] = [];
    const timers: NodeJS.Timeout[] = [];
    const failures = failureLog(fastify.log);
    let started = false;
    const start = (job: Job): void => {
      let running = false;
      const tick = (): void => {
        if (running) return;
        running = true;
        // Each run is a trace of its own (src/tracing/context.ts), its SQL under it.
        inSpan(`job ${job.name}`, {}, () => job.run())
          .then(
            (done) => {
              failures.works(job.name);
              if (done) fastify.log.info({ job: job.name }, done);
            },
            (error: unknown) => failures.failed(job.name, error, `retrying every ${job.everyMs} ms`),
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
    });
    fastify.addHook('onReady', async () => {
      started = true;
      added.forEach(start);
    });
    fastify.addHook('onClose', async () => timers.forEach(clearInterval));
  },
  { name: 'jobs' },
);
