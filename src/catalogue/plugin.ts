// The catalogue as a feature of the app: pets (src/catalogue/pets.ts), the names of their
// categories (src/catalogue/categories.ts) and the inventory's counts, kept folded by a job
// (src/catalogue/inventory.ts, docs/decisions/0004-inventory-fold.md).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createCategoriesRepository, type CategoriesRepository } from './categories.js';
import { createInventoryRepository, type InventoryRepository } from './inventory.js';
import { createPetsRepository, type PetsRepository } from './pets.js';

declare module 'fastify' {
  interface FastifyInstance {
    pets: PetsRepository;
    categories: CategoriesRepository;
    inventory: InventoryRepository;
  }
}

export default fp(
  async function catalogue(fastify: FastifyInstance) {
    const { primary } = fastify.pools;
    fastify.decorate('pets', createPetsRepository(fastify.pools, { exportIdleMs: fastify.config.EXPORT_IDLE_TIMEOUT_MS }));
    fastify.decorate('categories', createCategoriesRepository(primary));
    const inventory = createInventoryRepository(primary);
    fastify.decorate('inventory', inventory);
    fastify.jobs.add({ name: 'inventory fold', everyMs: 1000, run: async () => void (await inventory.fold()) });
  },
  { name: 'catalogue', dependencies: ['database', 'jobs'] },
);
