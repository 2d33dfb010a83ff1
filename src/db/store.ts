// All SQL of the service, in one place. Statements are named so PostgreSQL plans each
// one once per connection instead of once per request.
import type pg from 'pg';
import type { components } from '../../generated/v1.js';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];

interface PetRow {
  id: string;
  name: string;
  category_id: string;
  status: PetStatus | null;
}

// bigint columns arrive as strings; the table's checks keep them below 2^53, so Number()
// is exact.
function toPet(row: PetRow): Pet {
  const pet: Pet = { id: Number(row.id), name: row.name, categoryId: Number(row.category_id) };
  if (row.status !== null) pet.status = row.status;
  return pet;
}

export interface ApiKeyRecord {
  id: number;
  name: string;
  createdAt: Date;
  revokedAt: Date | null;
}

export function createStore(pool: pg.Pool) {
  return {
    async listPets(limit: number, status?: PetStatus): Promise<Pet[]> {
      const result = status
        ? await pool.query<PetRow>({
            name: 'pets-list-by-status',
            text: 'SELECT id, name, category_id, status FROM pets WHERE status = $1 ORDER BY id LIMIT $2',
            values: [status, limit],
          })
        : await pool.query<PetRow>({
            name: 'pets-list',
            text: 'SELECT id, name, category_id, status FROM pets ORDER BY id LIMIT $1',
            values: [limit],
          });
      return result.rows.map(toPet);
    },

    async createPet(pet: NewPet): Promise<Pet> {
      const result = await pool.query<PetRow>({
        name: 'pets-insert',
        text: 'INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING id, name, category_id, status',
        values: [pet.name, pet.categoryId, pet.status ?? null],
      });
      return toPet(result.rows[0] as PetRow);
    },

    async getPet(id: number): Promise<Pet | undefined> {
      const result = await pool.query<PetRow>({
        name: 'pets-get',
        text: 'SELECT id, name, category_id, status FROM pets WHERE id = $1',
        values: [id],
      });
      const row = result.rows[0];
      return row ? toPet(row) : undefined;
    },

    /** Hashes of every key that is not revoked, with its id and name. */
    async activeApiKeys(): Promise<{ hash: Buffer; id: number; name: string }[]> {
      const result = await pool.query<{ key_hash: Buffer; id: string; name: string }>(
        'SELECT key_hash, id, name FROM api_keys WHERE revoked_at IS NULL',
      );
      return result.rows.map((r) => ({ hash: r.key_hash, id: Number(r.id), name: r.name }));
    },

    async findActiveApiKey(hash: Buffer): Promise<{ id: number; name: string } | undefined> {
      const result = await pool.query<{ id: string; name: string }>({
        name: 'api-keys-find',
        text: 'SELECT id, name FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
        values: [hash],
      });
      const row = result.rows[0];
      return row ? { id: Number(row.id), name: row.name } : undefined;
    },

    async insertApiKey(name: string, hash: Buffer): Promise<ApiKeyRecord> {
      const result = await pool.query<{ id: string; name: string; created_at: Date; revoked_at: Date | null }>(
        'INSERT INTO api_keys (name, key_hash) VALUES ($1, $2) RETURNING id, name, created_at, revoked_at',
        [name, hash],
      );
      const row = result.rows[0]!;
      return { id: Number(row.id), name: row.name, createdAt: row.created_at, revokedAt: row.revoked_at };
    },

    async listApiKeys(): Promise<ApiKeyRecord[]> {
      const result = await pool.query<{ id: string; name: string; created_at: Date; revoked_at: Date | null }>(
        'SELECT id, name, created_at, revoked_at FROM api_keys ORDER BY id',
      );
      return result.rows.map((r) => ({ id: Number(r.id), name: r.name, createdAt: r.created_at, revokedAt: r.revoked_at }));
    },

    /** Returns false when no active key has this id. */
    async revokeApiKey(id: number): Promise<boolean> {
      const result = await pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id]);
      return result.rowCount === 1;
    },

    async countApiKeys(): Promise<number> {
      const result = await pool.query<{ n: string }>('SELECT count(*) AS n FROM api_keys');
      return Number(result.rows[0]?.n ?? 0);
    },
  };
}

export type Store = ReturnType<typeof createStore>;
