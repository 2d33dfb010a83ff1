// `npm run seed`: a small sample catalogue for a development database, the things the
// README's first requests name: three categories, pets in every status (available, pending,
// sold, none) and the orders that made two of them pending and sold. It writes through the
// repositories the service uses, so every change has its event, as any other.
//
// Idempotent: a category that has a name keeps it, and a sample pet (by name and category)
// that exists is left as it is, with no order placed for it again. Orders belong to an API
// key: the oldest key in force that may place orders (the development key, on a database
// `npm start` made), or else a key made for them, whose secret is printed once.
import { newSecret } from '../auth/apiKeys.js';
import { loadConfig } from '../config.js';
import { createApiKeysRepository } from '../db/api-keys.js';
import { createCategoriesRepository } from '../db/categories.js';
import { createOrdersRepository } from '../db/orders.js';
import { createPetsRepository } from '../db/pets.js';
import { query, statement } from '../db/query.js';
import { openDatabase } from './database.js';

const CATEGORIES = [
  { id: 1, name: 'Dogs' },
  { id: 2, name: 'Cats' },
  { id: 3, name: 'Birds' },
] as const;

/** The sample pets; `order` says what happens to the one that is placed for it. */
const PETS = [
  { name: 'Rex', categoryId: 1, status: 'available' },
  { name: 'Luna', categoryId: 2, status: 'available' },
  { name: 'Kiwi', categoryId: 3, status: 'available' },
  { name: 'Max', categoryId: 1, status: 'available', order: 'placed' },
  { name: 'Bella', categoryId: 2, status: 'available', order: 'completed' },
  { name: 'Pip', categoryId: 3 },
] as const;

const STATEMENTS = {
  existing: statement<{ id: number }>('seed-existing', 'SELECT id FROM pets WHERE name = $1 AND category_id = $2 AND deleted_at IS NULL ORDER BY id LIMIT 1'),
  buyer: statement<{ id: number }>(
    'seed-buyer',
    "SELECT id FROM api_keys WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()) AND 'orders:write' = ANY (scopes) ORDER BY id LIMIT 1",
  ),
};

const say = (line: string): void => void process.stderr.write(`${line}\n`);

async function seed(): Promise<void> {
  const db = await openDatabase();
  // One seed at a time: two at once would both find a sample pet missing.
  const lock = await db.pool.connect();
  try {
    await lock.query("SELECT pg_advisory_lock(hashtext('animal-store seed'))");
    const { ORDER_HOLD_SECONDS } = loadConfig();
    const categories = createCategoriesRepository(db.pool);
    const pets = createPetsRepository({ primary: db.pool });
    const orders = createOrdersRepository(db.pool);
    for (const { id, name } of CATEGORIES) {
      if (await categories.get(id)) continue;
      await categories.put(id, name);
      say(`category ${id}: ${name}`);
    }
    let buyer = (await query(db.pool, STATEMENTS.buyer))[0]?.id;
    for (const sample of PETS) {
      const [existing] = await query(db.pool, STATEMENTS.existing, [sample.name, sample.categoryId]);
      if (existing) continue;
      const { pet } = await pets.create({ name: sample.name, categoryId: sample.categoryId, ...('status' in sample ? { status: sample.status } : {}) });
      say(`pet ${pet.id}: ${pet.name}`);
      if (!('order' in sample)) continue;
      if (buyer === undefined) {
        const { secret, hash, prefix } = newSecret();
        buyer = (await createApiKeysRepository(db.pool).create({ name: 'sample orders', hash, prefix })).id;
        say(`The sample orders belong to a new API key, ${buyer} (every scope; shown once, keep it):`);
        process.stdout.write(`${secret}\n`);
      }
      const placed = await orders.place({ apiKeyId: buyer, petId: pet.id, holdSeconds: ORDER_HOLD_SECONDS });
      if (placed.outcome !== 'placed') throw new Error(`the order for ${pet.name} was refused (${placed.outcome})`);
      if (sample.order === 'completed') await orders.close(buyer, placed.order.id, 'completed');
      say(`order ${placed.order.id} for ${pet.name}: ${sample.order}, by API key ${buyer}`);
    }
    say('The sample catalogue is in place.');
  } finally {
    lock.release(true);
    await db.close();
  }
}

try {
  await seed();
} catch (error) {
  say(`seed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
