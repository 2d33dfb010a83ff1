import { errorBody } from '../errors.js';
import type { Handler } from '../contract/handler.js';

// Experimental and not designed yet: the contract promises an honest 501.
export const listOrders: Handler<'listOrders'> = async () => ({
  status: 501,
  body: errorBody('not_implemented', 501, 'Listing orders is not implemented yet'),
});
