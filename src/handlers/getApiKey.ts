import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';

// The key as stored, never its secret nor a hash of it.
export const getApiKey: Handler<'getApiKey'> = async ({ params }, { apiKeys }) => {
  const key = await apiKeys.get(params.keyId);
  if (!key) return errorAnswer('not_found', `API key ${params.keyId} does not exist`);
  return { status: 200, body: key };
};
