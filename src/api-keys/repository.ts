// The api_keys table. A key's secret is never stored: only its SHA-256 hash (and, for a
// rotation's grace, the replaced secret's hash), and the first 8 characters of the current
// secret as its `prefix` (src/api-keys/verifier.ts makes secrets). No statement here returns a
// hash to anything but the verifier's cache.
//
// Keys join the append order (docs/decisions/0001-append-order.md): listApiKeys pages them
// by id, and a page stops before its first key that is not final yet. Keys read and write
// the primary only (the verifier's cache follows the primary through NOTIFY).
import type { components } from '../../generated/v1.js';
import { SCOPES, canonicalScopes, type Scope } from '../contract/scopes.js';
import { appendOrdered, finalPage } from '../db/append-order.js';
import type pg from 'pg';
import { columns, execute, query, statement } from '../db/query.js';
import { inTransaction } from '../db/transaction.js';

/** Keys are paged whole (migration 1763700000012). */
const API_KEYS = appendOrdered('api_keys');

export type ApiKey = components['schemas']['ApiKey'];

const KEY_COLUMNS = columns(['id', 'name', 'prefix', 'scopes', 'created_at', 'expires_at', 'last_used_at', 'revoked_at', 'previous_expires_at']);
const { list: K } = KEY_COLUMNS;
interface KeyRow {
  id: number;
  name: string;
  prefix: string | null;
  scopes: Scope[];
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  previous_expires_at: Date | null;
}

/** What the verifier's cache holds of a key that is not revoked: its secrets' hashes and when each stops working. */
export interface KeySecrets {
  id: number;
  name: string;
  scopes: Scope[];
  key_hash: Buffer;
  expires_at: Date | null;
  previous_key_hash: Buffer | null;
  previous_expires_at: Date | null;
}
const { list: S } = columns(['id', 'name', 'scopes', 'key_hash', 'expires_at', 'previous_key_hash', 'previous_expires_at']);

/**
 * The key as the contract shows it: a field that is unset is absent, never null. A previous
 * secret is shown while it still works (by this clock, as the verifier judges it).
 */
export function toApiKey(row: KeyRow, now = Date.now()): ApiKey {
  const key: ApiKey = { id: row.id, name: row.name, scopes: canonicalScopes(row.scopes), createdAt: row.created_at.toISOString() };
  if (row.prefix !== null) key.prefix = row.prefix;
  if (row.expires_at !== null) key.expiresAt = row.expires_at.toISOString();
  if (row.last_used_at !== null) key.lastUsedAt = row.last_used_at.toISOString();
  if (row.revoked_at !== null) key.revokedAt = row.revoked_at.toISOString();
  else if (row.previous_expires_at !== null && row.previous_expires_at.getTime() > now) key.previousSecretExpiresAt = row.previous_expires_at.toISOString();
  return key;
}

/** SQL: whether the key (of the table alias `k`, if given) is in force: not revoked, not expired (by the database's clock). */
export function keyInForce(k?: string): string {
  const c = (column: string) => (k ? `${k}.${column}` : column);
  return `(${c('revoked_at')} IS NULL AND (${c('expires_at')} IS NULL OR ${c('expires_at')} > now()))`;
}

type ListRow = KeyRow & { final: boolean };

/** The advisory lock under which keys are created through the API (the cap's count): a fixed key of this table's own. */
const CREATION_LOCK = "hashtext('api_keys creation')";
type StateRow = KeyRow & { expired: boolean; current: boolean };

export const API_KEY_STATEMENTS = {
  // The verifier's cache: every key that still has a secret in force. Expiry is judged
  // again at each request by the instance's clock; this only keeps ended keys out of memory.
  active: statement<KeySecrets>('api-keys-active', `SELECT ${S} FROM api_keys WHERE ${keyInForce()}`),
  // The same for the keys named ($1): the verifier reads again the keys NOTIFY names.
  activeByIds: statement<KeySecrets>('api-keys-active-by-ids', `SELECT ${S} FROM api_keys WHERE id = ANY ($1::bigint[]) AND ${keyInForce()}`),
  // The same for one secret, by either hash, while the verifier's listener is down.
  find: statement<KeySecrets>(
    'api-keys-find',
    `SELECT ${S} FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL
     UNION ALL SELECT ${S} FROM api_keys WHERE previous_key_hash = $1 AND revoked_at IS NULL`,
  ),
  insert: statement<KeyRow>('api-keys-insert', `INSERT INTO api_keys (name, key_hash, prefix, scopes, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${K}`),
  // Keys are created one at a time where the cap applies, so that the count below sees every
  // key committed before (a transaction-level advisory lock, released at COMMIT).
  lockCreation: statement<Record<string, never>>('api-keys-lock-creation', `SELECT FROM pg_advisory_xact_lock(${CREATION_LOCK})`),
  // The same insert, when fewer than $6 keys are in force: no row when the cap is reached.
  insertCapped: statement<KeyRow>(
    'api-keys-insert-capped',
    `INSERT INTO api_keys (name, key_hash, prefix, scopes, expires_at)
     SELECT $1, $2, $3, $4, $5 WHERE (SELECT count(*) FROM api_keys WHERE ${keyInForce()}) < $6::int
     RETURNING ${K}`,
  ),
  get: statement<KeyRow>('api-keys-get', `SELECT ${K} FROM api_keys WHERE id = $1`),
  // Why a rotation changed nothing, by the database's clock (the one the rotation judged by).
  // $1 id, $2 a secret's hash: whether it is the key's current one.
  state: statement<StateRow>('api-keys-state', `SELECT ${K}, coalesce(expires_at <= now(), false) AS expired, key_hash = $2 AS current FROM api_keys WHERE id = $1`),
  // A page ($1 after, $2 size) and one more key, each with whether it is final.
  list: statement<ListRow>('api-keys-list', `SELECT ${K}, ${API_KEYS.isFinal()} AS final FROM api_keys WHERE id > $1 ORDER BY id LIMIT $2::int + 1`),
  all: statement<KeyRow>('api-keys-all', `SELECT ${K} FROM api_keys ORDER BY id`),
  // A revoked key has no secret in force, the previous one included.
  revoke: statement<KeyRow>(
    'api-keys-revoke',
    `UPDATE api_keys SET revoked_at = now(), previous_key_hash = NULL, previous_expires_at = NULL WHERE id = $1 AND revoked_at IS NULL RETURNING ${K}`,
  ),
  // $1 id, $2 the new hash, $3 its prefix, $4 grace seconds, $5 the hash of the secret that
  // asks. The replaced hash is accepted for the grace (never past the key's own expiry); a
  // grace of 0 keeps no previous secret, and a rotation replaces any earlier one. The SET
  // list reads the row as it was before this update. Only the current secret rotates, checked
  // here against the row as the update finds it: of two rotations at once with one secret,
  // the second finds that secret replaced (it waited for the first's row lock) and changes
  // nothing. Who else may rotate is the handler's rule (src/handlers/rotateApiKey.ts).
  rotate: statement<KeyRow>(
    'api-keys-rotate',
    `UPDATE api_keys SET key_hash = $2, prefix = $3,
       previous_key_hash = CASE WHEN $4::int > 0 THEN key_hash END,
       previous_expires_at = CASE WHEN $4::int > 0 THEN least(now() + $4::int * interval '1 second', expires_at) END
     WHERE id = $1 AND key_hash = $5 AND ${keyInForce()}
     RETURNING ${K}`,
  ),
  // Last uses seen by one instance ($1 ids, $2 when), locked in id order (instances flushing
  // at once never wait in a circle) and only ever moved forward. Writes no column the
  // verifier caches, so it sends no NOTIFY (migrations/1763700000012_api-key-scopes.sql).
  recordUse: statement<Record<string, never>>(
    'api-keys-record-use',
    `WITH used AS (SELECT * FROM unnest($1::bigint[], $2::timestamptz[]) AS u(id, at)),
     target AS (
       SELECT api_keys.id, used.at FROM api_keys JOIN used ON used.id = api_keys.id
       WHERE api_keys.last_used_at IS NULL OR api_keys.last_used_at < used.at
       ORDER BY api_keys.id FOR UPDATE OF api_keys
     )
     UPDATE api_keys SET last_used_at = greatest(api_keys.last_used_at, target.at) FROM target WHERE api_keys.id = target.id`,
  ),
  count: statement<{ n: number }>('api-keys-count', 'SELECT count(*)::int AS n FROM api_keys'),
};

export interface NewKey {
  name: string;
  hash: Buffer;
  /** The first 8 characters of the secret. */
  prefix?: string;
  /** Every scope when not given. */
  scopes?: readonly Scope[];
  expiresAt?: Date;
}

export type Revocation = { outcome: 'revoked' | 'already-revoked'; key: ApiKey } | { outcome: 'not-found' };

export type Rotation = { outcome: 'rotated'; key: ApiKey } | { outcome: 'not-found' } | { outcome: 'inactive'; why: 'revoked' | 'expired' } | { outcome: 'not-current' };

/** How many times a rotation is tried when the key changed between its update and the reading of why. */
const ROTATE_ATTEMPTS = 3;

export function createApiKeysRepository(primary: pg.Pool) {
  const valuesOf = (key: NewKey) => [key.name, key.hash, key.prefix ?? null, canonicalScopes(key.scopes ?? SCOPES), key.expiresAt ?? null];
  const insert = async (key: NewKey): Promise<ApiKey> => toApiKey((await query(primary, API_KEY_STATEMENTS.insert, valuesOf(key)))[0] as KeyRow);
  return {
    /** Every key with a secret in force, with its hashes. */
    async active(): Promise<KeySecrets[]> {
      return query(primary, API_KEY_STATEMENTS.active);
    },

    /** Those of the keys `ids` that have a secret in force, with their hashes. */
    async activeByIds(ids: readonly number[]): Promise<KeySecrets[]> {
      return query(primary, API_KEY_STATEMENTS.activeByIds, [ids]);
    },

    /** The key that is not revoked and has this hash, current or previous, if any. */
    async findByHash(hash: Buffer): Promise<KeySecrets | undefined> {
      return (await query(primary, API_KEY_STATEMENTS.find, [hash]))[0];
    },

    /** Stores a key (its hash only): the operators' CLI, which no cap holds back. */
    create: insert,

    /** Stores a key when fewer than `limit` keys are in force; undefined when that many are. */
    async createCapped(key: NewKey, limit: number): Promise<ApiKey | undefined> {
      return inTransaction(primary, async (tx) => {
        await execute(tx, API_KEY_STATEMENTS.lockCreation);
        const [row] = await query(tx, API_KEY_STATEMENTS.insertCapped, [...valuesOf(key), limit]);
        return row && toApiKey(row);
      });
    },

    /** Stores a key by its hash, as 1.2's tools did: every scope, no prefix, no expiry. */
    async insert(name: string, hash: Buffer): Promise<ApiKey> {
      return insert({ name, hash });
    },

    async get(id: number): Promise<ApiKey | undefined> {
      const [row] = await query(primary, API_KEY_STATEMENTS.get, [id]);
      return row && toApiKey(row);
    },

    /** At most `limit` keys after `after`, in id order, up to where every key is final, and where the next page starts (none: the last). */
    async list(after: number, limit: number): Promise<{ keys: ApiKey[]; next: number | undefined }> {
      const rows = await query(primary, API_KEY_STATEMENTS.list, [after, limit]);
      const page = finalPage(rows, limit, after);
      const now = Date.now();
      return { keys: page.rows.map((row) => toApiKey(row, now)), next: page.next };
    },

    /** Every key, in id order (the CLI's list). */
    async all(): Promise<ApiKey[]> {
      const now = Date.now();
      return (await query(primary, API_KEY_STATEMENTS.all)).map((row) => toApiKey(row, now));
    },

    /** Revokes the key; a revoked key is answered as it is. */
    async revoke(id: number): Promise<Revocation> {
      const [revoked] = await query(primary, API_KEY_STATEMENTS.revoke, [id]);
      if (revoked) return { outcome: 'revoked', key: toApiKey(revoked) };
      // A statement of its own: its snapshot sees a revocation that committed while the
      // update waited for the row.
      const [row] = await query(primary, API_KEY_STATEMENTS.get, [id]);
      return row ? { outcome: 'already-revoked', key: toApiKey(row) } : { outcome: 'not-found' };
    },

    /** Gives the key a new secret (its hash and prefix), keeping the replaced one for `graceSeconds`, if the key is in force and `current` (the hash of the secret that asks) is its current one. */
    async rotate(id: number, secret: { hash: Buffer; prefix: string }, graceSeconds: number, current: Buffer): Promise<Rotation> {
      for (let attempt = 0; attempt < ROTATE_ATTEMPTS; attempt++) {
        const [rotated] = await query(primary, API_KEY_STATEMENTS.rotate, [id, secret.hash, secret.prefix, graceSeconds, current]);
        if (rotated) return { outcome: 'rotated', key: toApiKey(rotated) };
        const [state] = await query(primary, API_KEY_STATEMENTS.state, [id, current]);
        if (!state) return { outcome: 'not-found' };
        if (state.revoked_at !== null) return { outcome: 'inactive', why: 'revoked' };
        if (state.expired) return { outcome: 'inactive', why: 'expired' };
        if (!state.current) return { outcome: 'not-current' };
      }
      throw new Error(`api key ${id}: rotation refused ${ROTATE_ATTEMPTS} times with no reason found`);
    },

    /** Moves each key's last use forward to the time given (never back). */
    async recordUse(uses: ReadonlyMap<number, number>): Promise<void> {
      if (uses.size === 0) return;
      const ids = [...uses.keys()].sort((a, b) => a - b);
      await execute(primary, API_KEY_STATEMENTS.recordUse, [ids, ids.map((id) => new Date(uses.get(id) as number))]);
    },

    async count(): Promise<number> {
      return (await query(primary, API_KEY_STATEMENTS.count))[0]?.n ?? 0;
    },
  };
}

export type ApiKeysRepository = ReturnType<typeof createApiKeysRepository>;
