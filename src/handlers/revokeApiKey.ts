import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';

// Revoking takes nothing from anyone's reach but the key's own (its current secret and any
// secret in a rotation's grace); every instance refuses it once NOTIFY reaches it. A
// revoked key is answered as it is.
export const revokeApiKey: Handler<'revokeApiKey'> = async ({ params }, { apiKeys }) => {
  const revoked = await apiKeys.revoke(params.keyId);
  if (revoked.outcome === 'not-found') return errorAnswer('not_found', `API key ${params.keyId} does not exist`);
  return { status: 200, body: revoked.key };
};
