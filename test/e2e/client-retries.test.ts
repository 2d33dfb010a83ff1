// The client's retries against the real service, on the answers it really gives:
// - 503 (a query of the service was cut off: its connection was terminated while it waited
//   for a lock the test holds), retried after Retry-After, a keyed createPet creating once;
// - a lost answer: the first attempt of a createPet reached the service, which is still
//   working on it, but the client saw a network failure. The retry, with the same
//   Idempotency-Key, is 409 `idempotency_in_flight`, retried after Retry-After, and then
//   gets the first attempt's answer replayed: one pet, never two.
// The test's fetch wraps the real one only to know when to release the lock, and to turn the
// first attempt's answer into the failure a reset connection gives.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnimalStoreClient, type RetryEvent } from '../../client/src/index.js';
import { createTestDatabase } from '../helper.js';
import { apikey, startServer, within, WAIT_MS, type ServerProcess } from '../process.js';

let server: ServerProcess;
let database: { url: string; drop: () => Promise<void> };
let key: string;

beforeAll(async () => {
  database = await createTestDatabase();
  key = (await apikey(['create', 'client retries'], database.url)).stdout.trim();
  server = await startServer({ DATABASE_URL: database.url, REDIS_URL: undefined });
}, 180_000);
afterAll(async () => {
  expect(await server.stop('SIGTERM')).toBe(0);
  await database.drop();
});

/** A transaction holding pets in ACCESS EXCLUSIVE mode: every query of the service on pets waits. */
async function lockPets(): Promise<pg.Client> {
  const locker = new pg.Client({ connectionString: database.url });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
  return locker;
}

/**
 * Resolves with the pid of the service's backend once one of its queries waits for the lock
 * (so the request has arrived). Asked on a connection of its own: within the locker's
 * transaction, pg_stat_activity would show the snapshot taken at its first reading.
 */
async function serviceWaits(query: string): Promise<number> {
  const watcher = new pg.Client({ connectionString: database.url });
  await watcher.connect();
  let pid = 0;
  try {
    await within(WAIT_MS, async () => {
      const { rows } = await watcher.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1",
        [query],
      );
      pid = rows[0]?.pid ?? 0;
      return pid !== 0;
    });
  } finally {
    await watcher.end();
  }
  return pid;
}

async function petsNamed(name: string): Promise<number> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM pets WHERE name = $1', [name])).rows[0]?.n);
  } finally {
    await client.end();
  }
}

describe('retries against the running service', () => {
  it.each([
    ['listPets', 'SELECT%pets%', (store: ReturnType<typeof createAnimalStoreClient>) => store.listPets({ limit: 1 }).then((r) => r.response.status)],
    ['createPet', '%INSERT INTO pets%', (store: ReturnType<typeof createAnimalStoreClient>) => store.createPet({ name: 'After a 503', categoryId: 21 }).then((r) => r.response.status)],
  ] as const)('%s: a 503 is retried after its Retry-After, and the retry succeeds', async (operation, query, call) => {
    const locker = await lockPets();
    const events: RetryEvent[] = [];
    const answers: { status: number; retryAfter: string | null; key: string | null }[] = [];
    const store = createAnimalStoreClient({
      baseUrl: `${server.url}/v1`,
      apiKey: key,
      retry: { maxAttempts: 5, onRetry: (event) => events.push(event) },
      fetch: async (input, init) => {
        const request = new Request(input, init);
        const response = await fetch(request);
        answers.push({ status: response.status, retryAfter: response.headers.get('retry-after'), key: request.headers.get('idempotency-key') });
        // The 503 has been sent: let the retry through.
        if (response.status === 503) await locker.query('COMMIT');
        return response;
      },
    });
    try {
      const called = call(store);
      const pid = await serviceWaits(query);
      await locker.query('SELECT pg_terminate_backend($1)', [pid]);
      expect([200, 201]).toContain(await called);
    } finally {
      await locker.end();
    }
    expect(answers.map((a) => a.status).slice(0, 1)).toEqual([503]);
    expect(answers[0]?.retryAfter).toBe('1');
    expect(events[0]).toMatchObject({ attempt: 1, status: 503, delayMs: 1000 });
    // The same key on every attempt of one call.
    expect(new Set(answers.map((a) => a.key)).size).toBe(1);
    if (operation === 'createPet') expect(await petsNamed('After a 503')).toBe(1);
  });

  it('a lost answer: the retry with the same key waits out 409 idempotency_in_flight and gets the first answer, replayed; one pet', async () => {
    const locker = await lockPets();
    const events: RetryEvent[] = [];
    const sent: string[] = [];
    let first: Promise<Response> | undefined;
    const store = createAnimalStoreClient({
      baseUrl: `${server.url}/v1`,
      apiKey: key,
      retry: { maxAttempts: 6, baseDelayMs: 10, onRetry: (event) => events.push(event) },
      fetch: async (input, init) => {
        const request = new Request(input, init);
        sent.push(request.headers.get('idempotency-key') ?? '');
        if (!first) {
          // The request reaches the service, which stores the pet once the lock is gone; the
          // client sees what a connection reset after sending gives: fetch's TypeError.
          first = fetch(request);
          await serviceWaits('%INSERT INTO pets%');
          throw new TypeError('fetch failed', { cause: new Error('simulated: connection reset after the request was sent') });
        }
        const response = await fetch(request);
        // The first attempt still holds the key (409): let it finish.
        if (response.status === 409) await locker.query('COMMIT');
        return response;
      },
    });
    let created;
    try {
      created = await store.createPet({ name: 'Lost answer', categoryId: 22 });
    } finally {
      await locker.end();
    }
    const original = await (first as Promise<Response>);
    expect(original.status).toBe(201);
    const originalBody = await original.json();

    expect(created.replayed).toBe(true);
    expect(created.response.status).toBe(201);
    expect(created.data).toEqual(originalBody);
    expect(created.response.headers.get('location')).toBe(original.headers.get('location'));
    expect(new Set(sent)).toEqual(new Set([created.idempotencyKey]));
    expect(events[0]).toMatchObject({ attempt: 1, status: undefined, error: expect.any(TypeError) });
    expect(events[0]?.delayMs).toBeLessThanOrEqual(10);
    expect(events[1]).toMatchObject({ attempt: 2, status: 409, delayMs: 1000 });
    // A busy machine may need more than the second it asked for to store the first answer.
    for (const later of events.slice(2)) expect(later).toMatchObject({ status: 409, delayMs: 1000 });
    expect(await petsNamed('Lost answer')).toBe(1);
  });
});
