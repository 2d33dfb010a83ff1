// The managed catalogue's promises under races, tried as clients meet them: two service
// processes on one database, the racing requests sent to different instances over real
// sockets, judged by what the clients were answered and what the database holds afterwards,
// never by timing.
// - updatePet taking an available pet's status away racing placeOrder for it: the order is
//   placed and the patch refused (409 pet_reserved), or the patch applied and the order
//   refused (409); never both, never a 5xx. Both outcomes must be seen.
// - Two updatePet with the same If-Match: exactly one 200, the other 412.
// - deletePet racing placeOrder: the order placed and the removal refused (409), or the pet
//   removed and the order refused (409 or 422); never both.
// - The inventory is exact afterwards.
import { describe, expect, it } from 'vitest';
import { countPetsByStatus } from '../helper.js';
import type { ServerProcess } from '../process.js';
import { useInstances } from '../support/instances.js';

const INSTANCES = 2;
/** Rounds a race is tried at most, until both of its outcomes have been seen. */
const MAX_ROUNDS = 200;

const cluster = useInstances(INSTANCES, 'catalogue races');

interface Answer {
  status: number;
  body: { id?: number; status?: string; code?: string; message?: string; name?: string };
  etag: string | null;
}

/** A request to instance `n`, as a client sends it. */
async function call(n: number, method: string, path: string, options: { body?: unknown; type?: string; ifMatch?: string } = {}): Promise<Answer> {
  const server = cluster.servers[n % cluster.servers.length] as ServerProcess;
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${cluster.key}`,
      ...(options.body !== undefined ? { 'content-type': options.type ?? 'application/json' } : {}),
      ...(options.ifMatch ? { 'if-match': options.ifMatch } : {}),
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Answer['body']) : {}, etag: response.headers.get('etag') };
}

const newPet = async (status: string | null = 'available'): Promise<number> =>
  Number((await cluster.db.query<{ id: string }>('INSERT INTO pets (name, category_id, status) VALUES ($1, 1, $2) RETURNING id', ['Race', status])).rows[0]?.id);
/** The pet's row, with its createdAt and updatedAt as the API writes them (json_instant). */
const petRow = async (id: number) =>
  (
    await cluster.db.query<{ status: string | null; name: string; removed: boolean; created_at: string; updated_at: string }>(
      'SELECT status, name, deleted_at IS NOT NULL AS removed, json_instant(created_at) AS created_at, json_instant(updated_at(pets)) AS updated_at FROM pets WHERE id = $1',
      [id],
    )
  ).rows[0];
const ordersOf = async (petId: number) => (await cluster.db.query<{ id: string; status: string }>('SELECT id, status FROM orders WHERE pet_id = $1', [petId])).rows;
/** A pause of 0 to 3 ms, so that either request of a pair may reach the database first. */
const jitter = (round: number) => new Promise((resolve) => setTimeout(resolve, (round * 7) % 4));
const reserved = (petId: number, orderId: number, what: 'update' | 'delete') => ({
  code: 'pet_reserved',
  message:
    what === 'update'
      ? `Pet ${petId} is held by order ${orderId}, which is placed: its status changes when the order is completed, cancelled or expires`
      : `Pet ${petId} is held by order ${orderId}, which is placed: complete or cancel the order first, then remove the animal`,
  status: 409,
});

describe('the managed catalogue on two instances', () => {
  it('updatePet {status: null} racing placeOrder on one available pet: one of them wins, never both, never a 5xx; both outcomes are seen', async () => {
    const seen = { ordered: 0, unlisted: 0 };
    let rounds = 0;
    while (rounds < MAX_ROUNDS && (seen.ordered === 0 || seen.unlisted === 0 || rounds < 20)) {
      const round = rounds++;
      const petId = await newPet();
      const [patch, order] = await Promise.all([
        (async () => {
          if (round % 2) await jitter(round);
          return call(round, 'PATCH', `/v1/pets/${petId}`, { body: { status: null }, type: 'application/merge-patch+json' });
        })(),
        (async () => {
          if (round % 2 === 0) await jitter(round);
          return call(round + 1, 'POST', '/v1/store/orders', { body: { petId } });
        })(),
      ]);
      const context = JSON.stringify({ round, petId, patch, order });
      const pet = await petRow(petId);
      const orders = await ordersOf(petId);
      if (order.status === 201) {
        seen.ordered++;
        expect(patch.status, context).toBe(409);
        expect(patch.body, context).toEqual(reserved(petId, order.body.id as number, 'update'));
        expect(pet?.status, context).toBe('pending');
        expect(orders, context).toEqual([{ id: String(order.body.id), status: 'placed' }]);
      } else {
        seen.unlisted++;
        expect(patch.status, context).toBe(200);
        expect(pet?.updated_at, context).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
        expect(patch.body, context).toEqual({ id: petId, name: 'Race', categoryId: 1, createdAt: pet?.created_at, updatedAt: pet?.updated_at });
        expect(order.status, context).toBe(409);
        expect(order.body, context).toEqual({ code: 'pet_not_available', message: `Pet ${petId} has no status, so it is not available: only an available animal can be ordered (listPets with status=available lists them; updatePet with {"status":"available"} makes one available that no placed order holds)`, status: 409 });
        expect(pet?.status, context).toBeNull();
        expect(orders, context).toEqual([]);
      }
    }
    console.log(`updatePet racing placeOrder: ${rounds} rounds, the order won ${seen.ordered}, the patch ${seen.unlisted}`);
    expect(seen.ordered).toBeGreaterThan(0);
    expect(seen.unlisted).toBeGreaterThan(0);
  }, 120_000);

  it('two updatePet with the same If-Match, on both instances: exactly one 200, the other 412, and the winner\'s change is stored', async () => {
    for (let round = 0; round < 40; round++) {
      const petId = await newPet();
      const etag = (await call(round, 'GET', `/v1/pets/${petId}`)).etag as string;
      const answers = await Promise.all(
        ['Left', 'Right'].map(async (name, side) => {
          if (side === round % 2) await jitter(round);
          return call(round + side, 'PATCH', `/v1/pets/${petId}`, { body: { name, status: side ? 'sold' : null }, type: 'application/merge-patch+json', ifMatch: etag });
        }),
      );
      const context = JSON.stringify({ round, petId, answers });
      expect(answers.map((a) => a.status).sort(), context).toEqual([200, 412]);
      const won = answers.find((a) => a.status === 200) as Answer;
      const lost = answers.find((a) => a.status === 412) as Answer;
      expect(lost.body, context).toEqual({ code: 'precondition_failed', message: `Pet ${petId} has changed since the ETag that If-Match names: read it again, then retry with its new ETag`, status: 412 });
      expect(won.etag, context).not.toBe(etag);
      const pet = await petRow(petId);
      expect(pet?.name, context).toBe(won.body.name);
      expect(pet?.status ?? undefined, context).toBe(won.body.status);
      expect((await call(round, 'GET', `/v1/pets/${petId}`)).etag, context).toBe(won.etag);
    }
  }, 120_000);

  it('deletePet racing placeOrder on one available pet: the order placed and the removal 409, or the pet removed and the order refused; never both', async () => {
    const seen = { ordered: 0, removed: 0 };
    let rounds = 0;
    while (rounds < MAX_ROUNDS && (seen.ordered === 0 || seen.removed === 0 || rounds < 20)) {
      const round = rounds++;
      const petId = await newPet();
      const [removal, order] = await Promise.all([
        (async () => {
          if (round % 2) await jitter(round);
          return call(round, 'DELETE', `/v1/pets/${petId}`);
        })(),
        (async () => {
          if (round % 2 === 0) await jitter(round);
          return call(round + 1, 'POST', '/v1/store/orders', { body: { petId } });
        })(),
      ]);
      const context = JSON.stringify({ round, petId, removal, order });
      const pet = await petRow(petId);
      const orders = await ordersOf(petId);
      if (order.status === 201) {
        seen.ordered++;
        expect(removal.status, context).toBe(409);
        expect(removal.body, context).toEqual(reserved(petId, order.body.id as number, 'delete'));
        expect(pet, context).toMatchObject({ status: 'pending', removed: false });
        expect(orders, context).toEqual([{ id: String(order.body.id), status: 'placed' }]);
      } else {
        seen.removed++;
        expect(removal.status, context).toBe(204);
        expect([409, 422], context).toContain(order.status);
        expect(order.body.code, context).toBe(order.status === 422 ? 'pet_not_found' : 'pet_not_available');
        expect(pet?.removed, context).toBe(true);
        expect(orders, context).toEqual([]);
      }
    }
    console.log(`deletePet racing placeOrder: ${rounds} rounds, the order won ${seen.ordered}, the removal ${seen.removed}`);
    expect(seen.ordered).toBeGreaterThan(0);
    expect(seen.removed).toBeGreaterThan(0);
  }, 120_000);

  it('after the races, getInventory on either instance equals the pets counted one by one', async () => {
    const counted = await countPetsByStatus(cluster.db);
    for (let n = 0; n < INSTANCES; n++) expect((await call(n, 'GET', '/v1/store/inventory')).body).toEqual(counted);
  });
});
