import { newSecret } from '../api-keys/verifier.js';
import type { Handler } from '../contract/handler.js';
import { spec } from '../contract/spec.js';
import { errorAnswer } from '../errors/catalogue.js';
import { callerOf, callerSecretOf } from '../api-keys/caller.js';

/** The contract's default grace, when the body gives none. */
const DEFAULT_GRACE: number = spec.components.schemas.Rotation.properties.graceSeconds.default;

// The same key (id, scopes, orders) gets a new secret, shown in this answer only. A secret
// is its key's identity, so a key rotates only its own, and only with its current secret:
// no key obtains a secret that acts as another, and a leaked previous secret can neither
// take a new one nor lock the owner out (docs/security.md, "What each key can do").
export const rotateApiKey: Handler<'rotateApiKey'> = async ({ params, body, context }, { apiKeys }) => {
  const { keyId } = params;
  const caller = callerOf(context);
  if (keyId !== caller) {
    return errorAnswer('forbidden', `API key ${keyId} is not the calling key (${caller}): a key rotates only its own secret; to replace API key ${keyId}, create a new key and revoke it`);
  }
  const sent = callerSecretOf(context);
  if (sent.previousSecret) {
    return errorAnswer('forbidden', `This is the previous secret of API key ${caller}, in its rotation's grace: it cannot rotate the key; use the current secret`);
  }
  const { secret, hash, prefix } = newSecret();
  const rotated = await apiKeys.rotate(keyId, { hash, prefix }, body?.graceSeconds ?? DEFAULT_GRACE, sent.hash);
  switch (rotated.outcome) {
    case 'rotated':
      return { status: 200, body: { ...rotated.key, prefix, secret } };
    case 'not-found':
      return errorAnswer('not_found', `API key ${keyId} does not exist`);
    case 'inactive':
      return errorAnswer('api_key_inactive', `API key ${keyId} is ${rotated.why}: create a new key instead`);
    case 'not-current':
      // Another rotation replaced the secret sent while this one was asked for.
      return errorAnswer('forbidden', `The secret sent is no longer the current secret of API key ${keyId} (another rotation replaced it): it cannot rotate the key; use the current secret`);
  }
};
