// docs/examples/webhook-receiver.mjs, the receiver docs/events.md shows, run as it is (plain
// node, on 127.0.0.1, a free port) and sent deliveries signed by the `standardwebhooks`
// library: a verified one is answered 204 and handled once however often it comes; a
// tampered body, another secret, an old timestamp or a missing signature are answered 400.
// Then the real service delivers to it (WEBHOOK_ALLOW_PRIVATE=true, for its loopback URL).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnimalStoreClient } from '../../client/src/index.js';
import { createTestDatabase } from '../helper.js';
import { apikey, root, startServer, within, WAIT_MS, type ServerProcess } from '../process.js';

const secret = `whsec_${randomBytes(24).toString('base64')}`;
let receiver: ChildProcess;
let origin: string;
let output = '';

/** Starts the example with `env`; resolves with the address it prints. */
function startReceiver(env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    receiver = spawn(process.execPath, [path.join(root, 'docs/examples/webhook-receiver.mjs')], { cwd: root, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (chunk: Buffer) => {
      output += chunk;
      const listening = /"listening":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(output)?.[1];
      if (listening) resolve(listening);
    };
    receiver.stdout?.on('data', onData);
    receiver.stderr?.on('data', onData);
    receiver.on('exit', (code) => reject(new Error(`the receiver exited ${code}:\n${output}`)));
  });
}

/** POSTs `event` to the receiver as the service would, signed by the library with `key` at `at`. */
async function deliver(event: object, options: { key?: string; at?: Date; body?: (body: string) => string; drop?: string } = {}): Promise<number> {
  const body = JSON.stringify(event);
  const id = String((event as { id: number }).id);
  const at = options.at ?? new Date();
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(options.key ?? secret).sign(id, at, body),
  };
  if (options.drop) delete headers[options.drop];
  const response = await fetch(origin, { method: 'POST', headers, body: options.body ? options.body(body) : body });
  await response.arrayBuffer();
  return response.status;
}

/** A port nothing listens on now, on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

const received = () => [...output.matchAll(/"received":(\d+)/g)].map((m) => Number(m[1]));
const event = (id: number) => ({ id, type: 'pet.created', createdAt: new Date().toISOString(), data: { id: 7, name: 'Rex', categoryId: 2, status: 'available' } });

beforeAll(async () => {
  origin = await startReceiver({ WEBHOOK_SECRET: secret, HOST: '127.0.0.1', PORT: '0' });
}, 30_000);
afterAll(() => {
  receiver?.removeAllListeners('exit');
  receiver?.kill('SIGTERM');
});

describe('docs/examples/webhook-receiver.mjs', () => {
  it('answers 204 to a delivery signed by standardwebhooks, and handles it once however often it comes', async () => {
    expect(await deliver(event(1))).toBe(204);
    expect(await deliver(event(1))).toBe(204);
    expect(await deliver(event(2))).toBe(204);
    expect(received()).toEqual([1, 2]);
  });

  it.each([
    ['a tampered body', { body: (b: string) => b.replace('"Rex"', '"Max"') }],
    ['a delivery signed with another secret', { key: `whsec_${randomBytes(24).toString('base64')}` }],
    ['an old timestamp', { at: new Date(Date.now() - 10 * 60_000) }],
    ['no signature', { drop: 'webhook-signature' }],
  ])('answers 400 to %s, and handles nothing', async (_title, options) => {
    expect(await deliver(event(10), options)).toBe(400);
    expect(received()).not.toContain(10);
  });

  it('answers 405 to anything but POST', async () => {
    expect((await fetch(origin)).status).toBe(405);
  });

  it('refuses to start without a whsec_ secret', async () => {
    const child = spawn(process.execPath, [path.join(root, 'docs/examples/webhook-receiver.mjs')], { cwd: root, env: { PATH: process.env.PATH, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (chunk) => (err += chunk));
    const code = await new Promise((done) => child.on('exit', done));
    expect(code).toBe(1);
    expect(err).toMatch(/WEBHOOK_SECRET/);
  });
});

// Needs the service's webhook deliveries (contract 1.4.0).
describe('the service delivering to the example receiver', () => {
  let server: ServerProcess;
  let database: { url: string; drop: () => Promise<void> };
  let second: ChildProcess | undefined;
  let key: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    key = (await apikey(['create', 'receiver example'], database.url)).stdout.trim();
    server = await startServer({ DATABASE_URL: database.url, WEBHOOK_ALLOW_PRIVATE: 'true' });
  }, 180_000);
  afterAll(async () => {
    second?.kill('SIGTERM');
    await server?.stop('SIGTERM');
    await database?.drop();
  });

  it('the receiver verifies and handles each event the service signs with the endpoint secret', async () => {
    const store = createAnimalStoreClient({ baseUrl: `${server.url}/v1`, apiKey: key });
    // The endpoint needs the receiver's URL and the receiver the endpoint's secret: take a
    // free port, make the endpoint with it, then start the receiver there with the secret.
    const port = await freePort();
    const hookSecret = (await store.createWebhookEndpoint({ url: `http://127.0.0.1:${port}/`, eventTypes: ['pet.created'] })).data.secret;
    let log = '';
    second = spawn(process.execPath, [path.join(root, 'docs/examples/webhook-receiver.mjs')], { cwd: root, env: { PATH: process.env.PATH, WEBHOOK_SECRET: hookSecret, HOST: '127.0.0.1', PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    second.stdout?.on('data', (chunk) => (log += chunk));
    second.stderr?.on('data', (chunk) => (log += chunk));
    await within(WAIT_MS, async () => log.includes('"listening"'));
    const { data: pet } = await store.createPet({ name: 'Delivered', categoryId: 2 });
    // Delivered at once, or after the first retry (5 s) if the receiver was not up yet.
    await within(WAIT_MS, async () => /"received":\d+,"type":"pet.created"/.test(log), 100);
    expect(log).not.toMatch(/"refused"/);
    const ids = [...log.matchAll(/"received":(\d+)/g)].map((m) => Number(m[1]));
    let found;
    for await (const e of store.listAllEvents({ type: ['pet.created'] })) if (e.data.id === pet.id) found = e;
    expect(ids).toEqual([found?.id]);
  }, 120_000);
});
