// What a client cannot make the service spend, however it tries: memory for refused
// credentials, and database queries through /readyz. Each figure is printed.
import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, recordQueries } from '../helper.js';
import { startServer } from '../process.js';
import { listen } from '../support/wire.js';

const MiB = 1024 * 1024;

/** The part of WebSocket (global in Node 22 and 24) that talking to an inspector needs. */
interface Socket {
  send(data: string): void;
  close(): void;
  addEventListener(type: 'open' | 'error', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
}
const WebSocket = (globalThis as unknown as { WebSocket: new (url: string) => Socket }).WebSocket;

/**
 * The memory a process keeps: after a full garbage collection (its inspector's
 * HeapProfiler.collectGarbage), the JavaScript heap in use plus buffers outside it. Unlike
 * the RSS, it does not move with when the collector last ran, which a loaded machine shifts
 * by tens of MiB: what a leak would add is all that changes it.
 */
async function inspector(output: () => string): Promise<{ kept: () => Promise<number>; close: () => void }> {
  const url = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[\w-]+)/.exec(output())?.[1];
  if (url === undefined) throw new Error(`no inspector in the service's output:\n${output()}`);
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', resolve);
    socket.addEventListener('error', () => reject(new Error(`cannot reach the inspector at ${url}`)));
  });
  const waiting = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  socket.addEventListener('message', ({ data }) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
    const call = message.id === undefined ? undefined : waiting.get(message.id);
    if (call && message.error) call.reject(new Error(`inspector: ${message.error.message}`));
    else call?.resolve(message.result);
  });
  let last = 0;
  const call = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve, reject) => {
      waiting.set(++last, { resolve, reject });
      socket.send(JSON.stringify({ id: last, method, params }));
    });
  // Closed before the service is stopped (cleanup runs in reverse): a process with an
  // inspector session open waits for it to end before it exits.
  return {
    async kept() {
      await call('HeapProfiler.collectGarbage');
      await call('HeapProfiler.collectGarbage');
      const answer = (await call('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true })) as { result: { value: string } };
      const usage = JSON.parse(answer.result.value) as { heapUsed: number; external: number };
      return usage.heapUsed + usage.external;
    },
    close: () => socket.close(),
  };
}

/** Resident memory of a process (Linux). */
function rss(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

/** The status of a GET, its body read and dropped. */
function get(url: string, headers: Record<string, string>, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode as number));
      })
      .on('error', reject);
  });
}

/** Sends `count` requests, `concurrency` at a time over keep-alive connections. */
async function hammer(count: number, concurrency: number, send: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await send(next++);
    }),
  );
}

describe('bounded costs', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  // Tokens over 256 characters are refused without being hashed; shorter ones are hashed
  // and refused. Neither may be kept: `count` distinct tokens grow the memory kept by less
  // than `maxMiB` beyond what requests with one repeated token reached (+0.03 to +0.3 MiB).
  // Keeping the short ones (in a Set, or in the verifier's map of accepted tokens, which holds
  // 10,000 and is emptied when full: hence fewer here) keeps about 0.3 MiB per 1,000.
  const refusals: [string, { count: number; token: () => string; maxMiB: number }][] = [
    ['7,000 distinct 15 KB bogus tokens', { count: 7000, token: () => randomBytes(11_250).toString('base64url'), maxMiB: 1 }],
    ['9,500 distinct bogus tokens of 200-256 characters', { count: 9500, token: () => randomBytes(192).toString('base64url').slice(0, randomInt(200, 257)), maxMiB: 1 }],
  ];
  it.each(refusals)('refused credentials: %s: the memory kept stays bounded', async (title, { count, token, maxMiB }) => {
    const database = await createTestDatabase();
    cleanup.push(database.drop);
    // Default settings: the anonymous budget (60 a minute) is spent early, so most of these
    // are answered 429 by the rate limiter, which still identifies the token first.
    const server = await startServer({ DATABASE_URL: database.url, NODE_OPTIONS: '--inspect=127.0.0.1:0' });
    cleanup.push(() => server.stop());
    const memory = await inspector(server.output);
    cleanup.push(async () => memory.close());
    const pid = server.child.pid as number;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    cleanup.push(async () => agent.destroy());
    const statuses = new Map<number, number>();
    const send = (value: string) => get(`${server.url}/v1/pets`, { authorization: `Bearer ${value}` }, agent).then((status) => statuses.set(status, (statuses.get(status) ?? 0) + 1));

    // Warm-up with one token repeated: code compiled, and what the service holds for any
    // traffic (the rate limiter's entry, pools, caches) already made before the first measure.
    const repeated = token();
    await hammer(2000, 8, () => send(repeated));
    const [before, rssBefore] = [await memory.kept(), rss(pid)];
    await hammer(count, 8, () => send(token()));
    const [after, rssAfter] = [await memory.kept(), rss(pid)];
    const grown = (after - before) / MiB;
    console.log(
      `refused credentials: ${title}: kept ${(before / MiB).toFixed(1)} -> ${(after / MiB).toFixed(1)} MiB (+${grown.toFixed(2)} MiB, bound ${maxMiB} MiB); RSS ${(rssBefore / MiB).toFixed(1)} -> ${(rssAfter / MiB).toFixed(1)} MiB`,
    );
    expect([...statuses.keys()].sort()).toEqual([401, 429]);
    expect(grown).toBeLessThan(maxMiB);
  }, 240_000);

  it('/readyz: about one database query per second, however many probes arrive', async () => {
    const t = await listen();
    cleanup.push(t.close);
    const recorded = recordQueries(t.pool);
    cleanup.push(async () => recorded.restore());
    const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
    cleanup.push(async () => agent.destroy());

    const started = performance.now();
    let probes = 0;
    const statuses = new Set<number>();
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (performance.now() - started < 3000) {
          statuses.add(await get(`${t.origin}/readyz`, {}, agent));
          probes++;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const queries = recorded.sent.filter((q) => q === 'SELECT 1').length;
    console.log(`/readyz: ${probes} probes in ${seconds.toFixed(1)} s (20 at a time) cost ${queries} database queries`);
    expect([...statuses]).toEqual([200]);
    // However slow the machine, the bound holds: one query when the first probe arrives, then
    // at most one per elapsed second.
    expect(queries).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
    expect(probes).toBeGreaterThan(10 * queries);
  }, 60_000);
});
