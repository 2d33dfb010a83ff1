import type { Handler } from '../contract/handler.js';
import { ApiError } from '../errors.js';
import type { Services } from './services.js';

// PLACEHOLDER on the base branch only: replaced by the real handler before it merges.
export const updateWebhookEndpoint: Handler<'updateWebhookEndpoint', Services> = async () => {
  throw new ApiError('not_implemented', 'updateWebhookEndpoint is not implemented yet');
};
