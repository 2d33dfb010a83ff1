import type { Handler } from '../contract/handler.js';

// Exact counts from running totals (src/catalogue/inventory.ts): cheap whatever the catalogue's size.
export const getInventory: Handler<'getInventory'> = async (_input, { inventory }) => ({ status: 200, body: await inventory.counts() });
