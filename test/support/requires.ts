// The one place that decides whether a suite needing something beyond Node (Redis, NATS,
// Chromium) runs. `npm test` must pass on a machine with only Node: there, such a suite is
// skipped with ONE printed line naming what is missing and how to get it. In CI
// (CI=true) nothing is skipped: the suite runs and a missing tool fails it.
import { existsSync } from 'node:fs';
import { Socket } from 'node:net';

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
export const CHROMIUM = process.env.TEST_CHROMIUM ?? '/usr/bin/chromium';

interface Requirement {
  what: string;
  howToGet: string;
  present: () => Promise<boolean>;
}

/** Answers PONG to a PING within a second (a TCP listener alone might not be Redis). */
function redisAnswers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
    socket.connect(Number(port || 6379), hostname, () => socket.write('PING\r\n'));
  });
}

/** Sends its INFO line, with JetStream on, within a second (a TCP listener alone might not be NATS). */
function natsAnswers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    let seen = '';
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.on('data', (data) => {
      seen += data.toString();
      if (seen.includes('\r\n')) done(seen.startsWith('INFO ') && /"jetstream":\s*true/.test(seen));
    });
    socket.connect(Number(port || 4222), hostname);
  });
}

const requirements = {
  redis: {
    what: `Redis at ${REDIS_URL}`,
    howToGet: 'apt-get install redis-server (or set TEST_REDIS_URL)',
    present: () => redisAnswers(REDIS_URL),
  },
  nats: {
    what: `NATS with JetStream at ${NATS_URL}`,
    howToGet: 'apt-get install nats-server and run nats-server -js (or set TEST_NATS_URL)',
    present: () => natsAnswers(NATS_URL),
  },
  chromium: {
    what: `Chromium at ${CHROMIUM}`,
    howToGet: 'apt-get install chromium (or set TEST_CHROMIUM)',
    present: async () => existsSync(CHROMIUM),
  },
} satisfies Record<string, Requirement>;

/**
 * Whether `suite` runs. True when the tool is there, or in CI (where its absence must fail
 * the suite, not hide it); otherwise prints the skip line once and returns false.
 */
export async function requires(tool: keyof typeof requirements, suite: string): Promise<boolean> {
  const requirement: Requirement = requirements[tool];
  if (process.env.CI === 'true') return true;
  if (await requirement.present()) return true;
  // Straight to stderr, not console: vitest shows it even for a file whose tests all skip.
  process.stderr.write(`SKIPPED ${suite}: ${requirement.what} is missing; get it with ${requirement.howToGet}. With CI=true it runs and fails instead.\n`);
  return false;
}
