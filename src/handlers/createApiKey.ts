import { newSecret } from '../api-keys/verifier.js';
import { firstMissing } from '../contract/scopes.js';
import type { Handler } from '../contract/handler.js';
import { operationPath } from '../contract/spec.js';
import { errorAnswer } from '../errors/catalogue.js';
import { callerScopesOf, callerSecretOf, scopeRefusal } from '../api-keys/caller.js';

// A new key's Location is its item under the keys' collection path.
const collection = operationPath('listApiKeys');
const NOT_FUTURE = 'must be in the future; give a later time, or none for a key that never expires';
const UNREADABLE = 'must be a date-time with seconds from 00 to 60';
const LAST = Date.parse('9999-12-31T23:59:59Z');
const PAST_LAST = 'must be at most 9999-12-31T23:59:59Z in UTC (a later one cannot be written as a date-time): give an earlier time, or none for a key that never expires';
const outlives = (creatorEnd: string) => `must be at most ${creatorEnd}, when this API key expires: a key cannot outlive the key that creates it; give an earlier time, or none to take ${creatorEnd}`;

/** Milliseconds since the epoch of an RFC 3339 date-time (the contract's format), a leap second as the second after :59. */
function instantOf(dateTime: string): number {
  const leap = /:60(?=(\.\d+)?([zZ]|[+-]))/;
  return leap.test(dateTime) ? Date.parse(dateTime.replace(leap, ':59')) + 1000 : Date.parse(dateTime);
}

// No key grants a scope it does not hold itself (there is no operation that changes a key's
// scopes), nor a life longer than its own (no operation extends one), so no key can reach
// beyond its own. The secret is in this answer only.
export const createApiKey: Handler<'createApiKey'> = async ({ body, context }, { apiKeys, config }) => {
  const missing = firstMissing(body.scopes, callerScopesOf(context));
  if (missing) return scopeRefusal(`This API key lacks the scope ${missing}, so it cannot grant it: ask for scopes it holds`, missing);
  const creatorEnd = callerSecretOf(context).expiresAt;
  let expiresAt = body.expiresAt === undefined ? undefined : instantOf(body.expiresAt);
  if (expiresAt !== undefined && !(expiresAt > Date.now() && expiresAt <= creatorEnd && expiresAt <= LAST)) {
    const [rule, message] = Number.isNaN(expiresAt)
      ? ['format', UNREADABLE]
      : expiresAt <= Date.now()
        ? ['future', NOT_FUTURE]
        : expiresAt > creatorEnd
          ? ['creator', outlives(new Date(creatorEnd).toISOString())]
          : ['formatMaximum', PAST_LAST];
    return errorAnswer('bad_request', `body /expiresAt: ${message}`, [{ location: 'body', field: '/expiresAt', rule, message }]);
  }
  if (expiresAt === undefined && creatorEnd !== Infinity) expiresAt = creatorEnd;
  const { secret, hash, prefix } = newSecret();
  const key = await apiKeys.createCapped({ name: body.name, hash, prefix, scopes: body.scopes, ...(expiresAt === undefined ? {} : { expiresAt: new Date(expiresAt) }) }, config.API_KEY_LIMIT);
  if (!key) {
    return errorAnswer('api_key_limit', `This deployment has ${config.API_KEY_LIMIT} API keys in force, the most it allows (API_KEY_LIMIT): revoke a key you no longer use, then create this one`);
  }
  return { status: 201, body: { ...key, prefix, secret }, headers: { Location: `${collection}/${key.id}` } };
};
