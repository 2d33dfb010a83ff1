// The api_keys table: keys are stored as SHA-256 hashes only (src/auth/apiKeys.ts).
import { columns, execute, query, statement, type Queryable } from './query.js';

export interface ApiKeyRecord {
  id: number;
  name: string;
  createdAt: Date;
  revokedAt: Date | null;
}

const RECORD_COLUMNS = columns(['id', 'name', 'created_at', 'revoked_at']);
interface RecordRow {
  id: number;
  name: string;
  created_at: Date;
  revoked_at: Date | null;
}
const toRecord = (r: RecordRow): ApiKeyRecord => ({ id: r.id, name: r.name, createdAt: r.created_at, revokedAt: r.revoked_at });

export const API_KEY_STATEMENTS = {
  active: statement<{ key_hash: Buffer; id: number; name: string }>('api-keys-active', 'SELECT key_hash, id, name FROM api_keys WHERE revoked_at IS NULL'),
  find: statement<{ id: number; name: string }>('api-keys-find', 'SELECT id, name FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL'),
  insert: statement<RecordRow>('api-keys-insert', `INSERT INTO api_keys (name, key_hash) VALUES ($1, $2) RETURNING ${RECORD_COLUMNS.list}`),
  list: statement<RecordRow>('api-keys-list', `SELECT ${RECORD_COLUMNS.list} FROM api_keys ORDER BY id`),
  revoke: statement<Record<string, never>>('api-keys-revoke', 'UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL'),
  count: statement<{ n: number }>('api-keys-count', 'SELECT count(*) AS n FROM api_keys'),
};

export function createApiKeysRepository(primary: Queryable) {
  return {
    /** Hashes of every key that is not revoked, with its id and name. */
    async active(): Promise<{ hash: Buffer; id: number; name: string }[]> {
      return (await query(primary, API_KEY_STATEMENTS.active)).map((r) => ({ hash: r.key_hash, id: r.id, name: r.name }));
    },

    async findActive(hash: Buffer): Promise<{ id: number; name: string } | undefined> {
      const [row] = await query(primary, API_KEY_STATEMENTS.find, [hash]);
      return row ? { id: row.id, name: row.name } : undefined;
    },

    async insert(name: string, hash: Buffer): Promise<ApiKeyRecord> {
      return toRecord((await query(primary, API_KEY_STATEMENTS.insert, [name, hash]))[0] as RecordRow);
    },

    async list(): Promise<ApiKeyRecord[]> {
      return (await query(primary, API_KEY_STATEMENTS.list)).map(toRecord);
    },

    /** Returns false when no active key has this id. */
    async revoke(id: number): Promise<boolean> {
      return (await execute(primary, API_KEY_STATEMENTS.revoke, [id])) === 1;
    },

    async count(): Promise<number> {
      return (await query(primary, API_KEY_STATEMENTS.count))[0]?.n ?? 0;
    },
  };
}

export type ApiKeysRepository = ReturnType<typeof createApiKeysRepository>;
