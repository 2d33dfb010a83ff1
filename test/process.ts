// Real processes for tests that need them: the service (src/server.ts) and the CLI.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const root = path.resolve(import.meta.dirname, '..');

/** Environment for child processes: the test's, minus anything that would change behaviour. */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  delete base.TEST_DATABASE_URL;
  delete base.NODE_OPTIONS;
  delete base.VITEST;
  // A developer's .env is theirs, not the tests': none is read unless a test names one. No
  // load shedding unless a test turns it on: answers must not depend on the machine's load.
  return { ...base, ENV_FILE: '', MAX_EVENT_LOOP_DELAY_MS: '0', ...env };
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to completion, collecting what it prints. */
export function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * How node runs a TypeScript entry point of the project: one of the service's (under src/)
 * from its compiled copy in dist/, as `npm start` does (test/setup/database.ts compiles it
 * once per run, when src/ or generated/ changed); a script through tsx.
 */
export function nodeArgs(script: string): string[] {
  return script.startsWith('src/') ? [path.join('dist', script.replace(/\.ts$/, '.js'))] : ['--import', 'tsx', script];
}

/** Runs a TypeScript entry point of the project to completion. */
export function runTs(script: string, args: string[], env: Record<string, string | undefined>): Promise<RunResult> {
  return run(process.execPath, [...nodeArgs(script), ...args], { cwd: root, env: childEnv(env) });
}

export const apikey = (args: string[], databaseUrl: string) => runTs('src/cli/apikey.ts', args, { DATABASE_URL: databaseUrl });

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** Sends a signal and resolves with the exit code. */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/** Starts the service (src/server.ts, compiled) on a free port and resolves once it listens. */
export function startServer(env: Record<string, string | undefined>, timeoutMs = 120_000): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs('src/server.ts'), {
      cwd: root,
      env: childEnv({ PORT: '0', LOG_LEVEL: 'info', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<number | null>((done) => child.on('exit', (code, signal) => done(code ?? (signal ? -1 : null))));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      output += chunk;
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        child.stdout?.on('data', (more: Buffer) => (output += more));
        resolve({
          url: match[1] as string,
          child,
          output: () => output,
          exited,
          stop: async (signal = 'SIGTERM') => {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
}

/**
 * The one limit of a test's wait for a condition: generous, so that a busy machine only makes
 * a test slower, never fails it. What the wait took is the test's to print, not to judge.
 */
export const WAIT_MS = 60_000;

/** Polls `check` until it returns true; resolves with the milliseconds it took. */
export async function within(ms: number, check: () => Promise<boolean>, interval = 10): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return performance.now() - started;
    if (performance.now() - started > ms) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** True while a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * `count` service processes on one database, for the races of test/e2e: rate limits, load
 * shedding and short waits for a connection are not what those files are about.
 */
export function startInstances(databaseUrl: string, count: number): Promise<ServerProcess[]> {
  const env = {
    DATABASE_URL: databaseUrl,
    RATE_LIMIT_MAX: '10000000',
    RATE_LIMIT_ANONYMOUS_MAX: '10000000',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    DB_CONNECT_TIMEOUT_MS: '10000',
  };
  return Promise.all(Array.from({ length: count }, () => startServer(env, 90_000)));
}
