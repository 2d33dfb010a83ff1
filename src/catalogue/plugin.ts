// The catalogue as a feature of the app: pets (src/catalogue/pets.ts), the names of their
// categories (src/catalogue/categories.ts), the inventory's counts, kept folded by a job
// (src/catalogue/inventory.ts, docs/decisions/0004-inventory-fold.md), and imports of pets
// (src/catalogue/pet-imports.ts), run by a worker on each instance
// (src/catalogue/pet-import-worker.ts, docs/decisions/0009-pet-imports.md).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createCategoriesRepository, type CategoriesRepository } from './categories.js';
import { createInventoryRepository, type InventoryRepository } from './inventory.js';
import { createImportWorker, type ImportWorkerOptions } from './pet-import-worker.js';
import { createPetImportsRepository, type PetImportsRepository } from './pet-imports.js';
import { createPetsRepository, type PetsRepository } from './pets.js';

declare module 'fastify' {
  interface FastifyInstance {
    pets: PetsRepository;
    petImports: PetImportsRepository;
    categories: CategoriesRepository;
    inventory: InventoryRepository;
  }
}

export interface CatalogueOptions {
  /** Told of the rows each committed batch of an import added and refused. */
  onImportRows?: ImportWorkerOptions['onRows'];
  /** Told of each import that ends on this instance. */
  onImportFinished?: (status: 'succeeded' | 'failed' | 'cancelled') => void;
}

export default fp(
  async function catalogue(fastify: FastifyInstance, options: CatalogueOptions) {
    const { primary } = fastify.pools;
    const { config } = fastify;
    const pets = createPetsRepository(fastify.pools, { exportIdleMs: config.EXPORT_IDLE_TIMEOUT_MS });
    fastify.decorate('pets', pets);
    fastify.decorate('categories', createCategoriesRepository(primary));
    const inventory = createInventoryRepository(primary);
    fastify.decorate('inventory', inventory);
    fastify.jobs.add({ name: 'inventory fold', everyMs: 1000, run: async () => void (await inventory.fold()) });

    const { onImportRows, onImportFinished } = options;
    const worker = createImportWorker(primary, pets, {
      batchRows: config.IMPORT_BATCH_ROWS,
      log: fastify.log,
      ...(onImportRows ? { onRows: onImportRows } : {}),
      ...(onImportFinished ? { onFinished: onImportFinished } : {}),
    });
    const petImports = createPetImportsRepository(primary, {
      maxBytes: config.IMPORT_MAX_BYTES,
      onSubmitted: () => worker.poke(),
      ...(onImportFinished ? { onCancelled: () => onImportFinished('cancelled') } : {}),
    });
    fastify.decorate('petImports', petImports);
    // The job only wakes the worker, which runs an import to its end on its own: a long
    // import is not a job that lags.
    fastify.jobs.add({ name: 'pet imports', everyMs: config.IMPORT_POLL_MS, run: async () => void worker.poke() });
    fastify.addHook('onClose', () => worker.close());
  },
  { name: 'catalogue', dependencies: ['database', 'jobs'] },
);
