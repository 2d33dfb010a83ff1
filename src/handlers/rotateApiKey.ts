import { newSecret } from '../auth/apiKeys.js';
import type { Handler } from '../contract/handler.js';
import { spec } from '../contract/spec.js';
import { errorAnswer } from '../errors.js';
import { callerScopesOf, scopeRefusal } from './caller.js';
import type { Services } from './services.js';

/** The contract's default grace, when the body gives none. */
const DEFAULT_GRACE: number = spec.components.schemas.Rotation.properties.graceSeconds.default;

// The same key (id, scopes, orders) gets a new secret, shown in this answer only. A
// rotation hands out a secret that holds the key's scopes, so the caller must hold them
// all: no key reaches a scope it lacks by rotating another.
export const rotateApiKey: Handler<'rotateApiKey', Services> = async ({ params, body, context }, { apiKeys }) => {
  const { keyId } = params;
  const { secret, hash, prefix } = newSecret();
  const rotated = await apiKeys.rotate(keyId, { hash, prefix }, body?.graceSeconds ?? DEFAULT_GRACE, callerScopesOf(context));
  switch (rotated.outcome) {
    case 'rotated':
      return { status: 200, body: { ...rotated.key, prefix, secret } };
    case 'not-found':
      return errorAnswer('not_found', `API key ${keyId} does not exist`);
    case 'scope-not-held':
      return scopeRefusal(`This API key lacks the scope ${rotated.scope}, which API key ${keyId} holds: only a key that holds every scope of API key ${keyId} can rotate it`, rotated.scope);
    case 'inactive':
      return errorAnswer('api_key_inactive', `API key ${keyId} is ${rotated.why}: create a new key instead`);
  }
};
