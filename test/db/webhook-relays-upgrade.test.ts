// The upgrade to a relay per webhook endpoint (migration 1763700000016): each endpoint's relay
// starts where the single relay `webhooks` was, so an endpoint receives the messages already
// made and the events after that position, each once, and nothing before it; and the name
// `webhooks` is refused, so an instance of the earlier service still running cannot make that
// relay again from the oldest event (which would fan out every event kept once more).
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../src/api-keys/verifier.js';
import { migrate } from '../../src/db/migrate.js';
import { buildTestApp, createTestDatabase, type TestApp } from '../helper.js';
import { within, WAIT_MS } from '../process.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const LAST_BEFORE = '1763700000015_webhooks';

let database: { url: string; drop: () => Promise<void> };
let receiver: Receiver;
let t: TestApp | undefined;
const endpoints: number[] = [];
const events: number[] = [];
let position = 0;

beforeAll(async () => {
  receiver = await startReceiver();
  database = await createTestDatabase({ empty: true });
  expect((await migrate(database.url, { info: () => {} }, { count: 16 })).at(-1)).toBe(LAST_BEFORE);
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  try {
    const key = Number((await db.query<{ id: string }>("INSERT INTO api_keys (name, key_hash) VALUES ('hooks', $1) RETURNING id", [hashApiKey(generateApiKey())])).rows[0]?.id);
    for (const n of [1, 2]) {
      const secret = `whsec_${Buffer.alloc(24, n).toString('base64')}`;
      const made = await db.query<{ id: string }>("INSERT INTO webhook_endpoints (api_key_id, url, event_types, secret) VALUES ($1, $2, '{pet.created}', $3) RETURNING id", [key, receiver.url, secret]);
      endpoints.push(Number(made.rows[0]?.id));
    }
    for (const name of ['Fanned out and delivered', 'Fanned out, waiting', 'Not fanned out yet']) {
      await db.query('INSERT INTO pets (name, category_id) VALUES ($1, 1)', [name]);
      events.push(Number((await db.query<{ id: string }>('SELECT max(id) AS id FROM events')).rows[0]?.id));
    }
    // As the earlier service left it: the relay past the second event, whose messages wait.
    position = events[1] as number;
    await db.query("UPDATE event_relays SET position = $1 WHERE name = 'webhooks'", [position]);
    await db.query('INSERT INTO webhook_messages (endpoint_id, event_id) SELECT unnest($1::bigint[]), $2', [endpoints, events[1]]);
  } finally {
    await db.end();
  }
  expect(await migrate(database.url, { info: () => {} })).toContain('1763700000016_webhook-endpoint-relays');
}, 120_000);

afterAll(async () => {
  await t?.close();
  await receiver?.close();
  await database?.drop();
});

it('gives each endpoint a relay at the position of the single one, which is gone and cannot be made again', async () => {
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  try {
    const relays = (await db.query<{ name: string; position: string; holds_retention: boolean }>('SELECT name, position, holds_retention FROM event_relays ORDER BY name')).rows;
    expect(relays.map(({ name, position: p, holds_retention }) => [name, Number(p), holds_retention]).sort()).toEqual(endpoints.map((id) => [`webhook-${id}`, position, false]).sort());
    // What the earlier service's first step does when it finds its row gone.
    await expect(db.query("INSERT INTO event_relays (name, position) SELECT 'webhooks', 0 ON CONFLICT (name) DO NOTHING")).rejects.toMatchObject({ code: '23514' });
  } finally {
    await db.end();
  }
});

it('delivers to each endpoint the message that was waiting and the events after the position, each once, and nothing before', async () => {
  t = await buildTestApp({ url: database.url, env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '50' } });
  const names = () => receiver.received.map((got) => JSON.parse(got.body).data?.name as string).sort();
  await within(WAIT_MS, async () => receiver.received.length >= 4);
  // A moment more for anything that should not come.
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(names()).toEqual(['Fanned out, waiting', 'Fanned out, waiting', 'Not fanned out yet', 'Not fanned out yet']);
  expect(new Set(receiver.received.map((got) => `${got.headers['webhook-id']}`))).toEqual(new Set([String(events[1]), String(events[2])]));
});
