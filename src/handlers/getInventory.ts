import type { Handler } from '../contract/handler.js';
import type { Services } from './services.js';

// Exact counts from running totals (src/db/inventory.ts): cheap whatever the catalogue's size.
export const getInventory: Handler<'getInventory', Services> = async (_input, { inventory }) => ({ status: 200, body: await inventory.counts() });
