// End to end through the typed client only: the real service on a port, every operation
// and every error answer a client can provoke, each response also checked against the
// contract on the way in.
//
// With CONFORMANCE_PRISM=1 (`npm run test:prism`) the same suite runs through Stoplight
// Prism's validating proxy, and any violation Prism reports fails it. Prism is started
// with --validate-request=false so that the bad requests below reach the service (Prism
// would answer them itself with 422); every response is still validated.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnimalStoreError, createAnimalStoreClient, type AnimalStoreClient } from '../../client/src/index.js';
import { contractViolations } from '../contract.js';
import { createTestDatabase } from '../helper.js';
import { apikey, root, startServer, type ServerProcess } from '../process.js';

let server: ServerProcess;
let database: { url: string; drop: () => Promise<void> };
let store: AnimalStoreClient;
let anonymous: AnimalStoreClient;
let prism: ChildProcess | undefined;
const viaPrism = process.env.CONFORMANCE_PRISM === '1';

/** Starts `prism proxy` in front of the service; resolves with its URL. */
function startPrism(upstream: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const port = String(20_000 + Math.floor(Math.random() * 20_000));
    prism = spawn(
      path.join(root, 'node_modules/.bin/prism'),
      ['proxy', path.join(root, 'openapi/v1.yaml'), upstream, '--errors', '--validate-request=false', '-h', '127.0.0.1', '-p', port],
      { env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('Prism is listening')) resolve(`http://127.0.0.1:${port}`);
    };
    prism.stdout?.on('data', onData);
    prism.stderr?.on('data', onData);
    prism.on('exit', (code) => reject(new Error(`prism exited ${code}:\n${output}`)));
    setTimeout(() => reject(new Error(`prism did not start:\n${output}`)), 30_000).unref();
  });
}

/** fetch that checks every answer against openapi/v1.yaml. */
const checkedFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const response = await fetch(request);
  const body = await response.clone().text();
  const headers = Object.fromEntries(response.headers.entries());
  // Prism serves the paths without the servers' /v1 prefix.
  const url = (viaPrism ? '/v1' : '') + new URL(request.url).pathname + new URL(request.url).search;
  expect(contractViolations(request.method, url, { statusCode: response.status, headers, body }), `${request.method} ${url}`).toEqual([]);
  expect(response.headers.get('sl-violations'), `Prism reports a violation for ${request.method} ${url}`).toBeNull();
  return response;
};

beforeAll(async () => {
  database = await createTestDatabase();
  // The key exists before the service starts, so its cache has it from the first request.
  const key = (await apikey(['create', 'client e2e'], database.url)).stdout.trim();
  server = await startServer({ DATABASE_URL: database.url });
  const baseUrl = viaPrism ? await startPrism(`${server.url}/v1`) : `${server.url}/v1`;
  store = createAnimalStoreClient({ baseUrl, apiKey: key, fetch: checkedFetch });
  anonymous = createAnimalStoreClient({ baseUrl, apiKey: 'ask_not-a-real-key', fetch: checkedFetch });
}, 180_000);
afterAll(async () => {
  prism?.removeAllListeners('exit');
  prism?.kill('SIGTERM');
  expect(await server.stop('SIGTERM')).toBe(0);
  await database.drop();
});

/** The AnimalStoreError a call throws (fails the test when it resolves or throws something else). */
async function failure(call: () => Promise<unknown>): Promise<AnimalStoreError> {
  const outcome = await call().then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(AnimalStoreError);
  return outcome as AnimalStoreError;
}

describe('the typed client against the running service', () => {
  it('creates, lists and fetches pets', async () => {
    const created = await store.createPet({ name: 'Rex', categoryId: 2, status: 'available' });
    expect(created.response.status).toBe(201);
    expect(created.data).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 2, status: 'available' });
    const id = created.data.id;
    expect(created.response.headers.get('location')).toBe(`/v1/pets/${id}`);
    expect(created.requestId).toMatch(/./);
    await store.createPet({ name: 'Tom', categoryId: 3 });

    const all = await store.listPets();
    expect(all.data.map((p) => p.name)).toEqual(['Rex', 'Tom']);
    const available = await store.listPets({ status: 'available', limit: 1 });
    expect(available.data).toEqual([created.data]);

    const fetched = await store.getPet(id);
    expect(fetched.data).toEqual(created.data);
  });

  it('createPet sends an Idempotency-Key of its own, and a repeat with the same key adds nothing', async () => {
    const first = await store.createPet({ name: 'Keyed', categoryId: 4 });
    expect(first.idempotencyKey).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(first.replayed).toBe(false);
    const other = await store.createPet({ name: 'Keyed', categoryId: 4 });
    expect(other.idempotencyKey).not.toBe(first.idempotencyKey);
    expect(other.data.id).not.toBe(first.data.id);

    const again = await store.createPet({ name: 'Keyed', categoryId: 4 }, { idempotencyKey: first.idempotencyKey });
    expect(again.replayed).toBe(true);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.data).toEqual(first.data);
    expect(again.response.headers.get('location')).toBe(first.response.headers.get('location'));
    const keyed = [];
    for await (const pet of store.listAllPets()) if (pet.name === 'Keyed') keyed.push(pet.id);
    expect(keyed).toEqual([first.data.id, other.data.id]);

    const reused = await failure(() => store.createPet({ name: 'Not keyed', categoryId: 4 }, { idempotencyKey: first.idempotencyKey }));
    expect(reused).toMatchObject({ status: 422, code: 'idempotency_key_reused', idempotencyKey: first.idempotencyKey });
  });

  it('listAllPets follows the pages to the end', async () => {
    for (let i = 0; i < 12; i++) await store.createPet({ name: `Paged ${i}`, categoryId: 5, status: 'sold' });
    const names: string[] = [];
    for await (const pet of store.listAllPets({ status: 'sold', limit: 5 })) names.push(pet.name);
    expect(names).toEqual(Array.from({ length: 12 }, (_, i) => `Paged ${i}`));
  });

  it('surfaces the deprecation headers of getPet, on success and on error', async () => {
    const { deprecation: onSuccess } = await store.getPet(1);
    const { deprecation: onError, status } = await failure(() => store.getPet(987654));
    expect(status).toBe(404);
    for (const [id, deprecation] of [[1, onSuccess], [987654, onError]] as const) {
      expect(deprecation?.deprecation?.toISOString()).toBe('2026-11-21T00:00:00.000Z');
      expect(deprecation?.sunset?.toISOString()).toBe('2030-12-05T00:00:00.000Z');
      // The replacement request for that pet (contract 1.2.0; `</v1/pets>` before).
      expect(deprecation?.link).toBe(`</v1/pets?id=${id}>; rel="successor-version"`);
    }
  });

  it('throws every error answer as an AnimalStoreError carrying the typed Error body', async () => {
    const cases = [
      ['listPets limit=0', () => store.listPets({ limit: 0 }), 400, 'bad_request'],
      ['listPets limit=101', () => store.listPets({ limit: 101 }), 400, 'bad_request'],
      // @ts-expect-error the compiler refuses a status outside the enumeration; sent anyway to see the 400
      ['listPets status=lost', () => store.listPets({ status: 'lost' }), 400, 'bad_request'],
      // @ts-expect-error name is required; sent anyway
      ['createPet without name', () => store.createPet({ categoryId: 1 }), 400, 'bad_request'],
      ['createPet with a 101-character name', () => store.createPet({ name: 'x'.repeat(101), categoryId: 1 }), 400, 'bad_request'],
      ['createPet with categoryId 2^53', () => store.createPet({ name: 'Big', categoryId: 2 ** 53 }), 400, 'bad_request'],
      ['createPet with a 70 kB body', () => store.createPet({ name: 'x'.repeat(70_000), categoryId: 1 }), 413, 'payload_too_large'],
      ['getPet of an unknown id', () => store.getPet(987654), 404, 'not_found'],
      ['getPet 0', () => store.getPet(0), 400, 'bad_request'],
      ['listPets with an invalid key', () => anonymous.listPets(), 401, 'unauthorized'],
      ['createPet with an invalid key', () => anonymous.createPet({ name: 'Rex', categoryId: 1 }), 401, 'unauthorized'],
      ['getPet with an invalid key', () => anonymous.getPet(1), 401, 'unauthorized'],
      ['listOrders with an invalid key', () => anonymous.listOrders(), 401, 'unauthorized'],
    ] as const;
    for (const [title, call, status, code] of cases) {
      const error = await failure(call);
      expect(error.response.status, title).toBe(status);
      expect(error, title).toMatchObject({ status, code, body: { code, status } });
      expect(error.requestId, title).toBe(error.response.headers.get('x-request-id'));
      expect(error.requestId, title).toMatch(/./);
      expect(error.message, title).toContain(`${status} ${code}`);
    }
    const badName = await failure(() => store.createPet({ name: 'x'.repeat(101), categoryId: 1 }));
    expect(badName.details).toEqual([expect.objectContaining({ location: 'body', field: '/name', rule: 'maxLength' })]);
  });

  it('raw is openapi-fetch: an error answer comes back as { error }, not thrown', async () => {
    const result = await store.raw.POST('/pets', { body: { name: 'Rex', categoryId: 1 }, headers: { 'Content-Type': 'text/plain' }, bodySerializer: () => 'Rex' });
    expect(result.response.status).toBe(415);
    expect(result.data).toBeUndefined();
    expect(result.error).toMatchObject({ code: 'unsupported_media_type', status: 415 });
  });
});
