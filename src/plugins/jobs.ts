// Work each instance does on a timer, with no request needed (src/app.ts lists them). A
// job's runs never overlap: one still running when the next is due makes that one skip.
// Each runs once when the app is ready, and stops when it closes.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export interface Job {
  name: string;
  everyMs: number;
  /** Resolves with what it did, for the log (a count), or nothing to log. */
  run: () => Promise<string | undefined>;
}

export default fp(
  async function jobs(fastify: FastifyInstance, { jobs }: { jobs: readonly Job[] }) {
    const timers: NodeJS.Timeout[] = [];
    const start = (job: Job): void => {
      let running = false;
      // A job that fails (the database is away) says so once, and again when it recovers,
      // not at every tick.
      let failing = false;
      const tick = (): void => {
        if (running) return;
        running = true;
        job
          .run()
          .then(
            (done) => {
              if (failing) fastify.log.info({ job: job.name }, `${job.name} works again`);
              failing = false;
              if (done) fastify.log.info({ job: job.name }, done);
            },
            (error: unknown) => {
              if (!failing) fastify.log.warn({ err: { message: error instanceof Error ? error.message : String(error) }, job: job.name }, `${job.name} failed; retrying every ${job.everyMs} ms`);
              failing = true;
            },
          )
          .finally(() => {
            running = false;
          });
      };
      tick();
      timers.push(setInterval(tick, job.everyMs).unref());
    };
    fastify.addHook('onReady', async () => jobs.forEach(start));
    fastify.addHook('onClose', async () => timers.forEach(clearInterval));
  },
  { name: 'jobs' },
);
