// The api_keys table: keys are stored as SHA-256 hashes only (src/auth/apiKeys.ts).
import type pg from 'pg';
import { columns } from './table.js';

export interface ApiKeyRecord {
  id: number;
  name: string;
  createdAt: Date;
  revokedAt: Date | null;
}

const RECORD_COLUMNS = columns(['id', 'name', 'created_at', 'revoked_at']);
type RecordRow = { id: string; name: string; created_at: Date; revoked_at: Date | null };
const toRecord = (r: RecordRow): ApiKeyRecord => ({ id: Number(r.id), name: r.name, createdAt: r.created_at, revokedAt: r.revoked_at });

export function createApiKeysRepository(pool: pg.Pool) {
  return {
    /** Hashes of every key that is not revoked, with its id and name. */
    async active(): Promise<{ hash: Buffer; id: number; name: string }[]> {
      const result = await pool.query<{ key_hash: Buffer; id: string; name: string }>('SELECT key_hash, id, name FROM api_keys WHERE revoked_at IS NULL');
      return result.rows.map((r) => ({ hash: r.key_hash, id: Number(r.id), name: r.name }));
    },

    async findActive(hash: Buffer): Promise<{ id: number; name: string } | undefined> {
      const result = await pool.query<{ id: string; name: string }>({
        name: 'api-keys-find',
        text: 'SELECT id, name FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
        values: [hash],
      });
      const row = result.rows[0];
      return row ? { id: Number(row.id), name: row.name } : undefined;
    },

    async insert(name: string, hash: Buffer): Promise<ApiKeyRecord> {
      const result = await pool.query<RecordRow>(`INSERT INTO api_keys (name, key_hash) VALUES ($1, $2) RETURNING ${RECORD_COLUMNS.list}`, [name, hash]);
      return toRecord(result.rows[0] as RecordRow);
    },

    async list(): Promise<ApiKeyRecord[]> {
      const result = await pool.query<RecordRow>(`SELECT ${RECORD_COLUMNS.list} FROM api_keys ORDER BY id`);
      return result.rows.map(toRecord);
    },

    /** Returns false when no active key has this id. */
    async revoke(id: number): Promise<boolean> {
      const result = await pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id]);
      return result.rowCount === 1;
    },

    async count(): Promise<number> {
      const result = await pool.query<{ n: string }>('SELECT count(*) AS n FROM api_keys');
      return Number(result.rows[0]?.n ?? 0);
    },
  };
}

export type ApiKeysRepository = ReturnType<typeof createApiKeysRepository>;
