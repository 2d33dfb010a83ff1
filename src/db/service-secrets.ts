// The service_secrets table: secrets every instance shares, made once by a migration.
import type pg from 'pg';

export function createServiceSecretsRepository(pool: pg.Pool) {
  return {
    async get(name: string): Promise<Buffer> {
      const result = await pool.query<{ value: Buffer }>('SELECT value FROM service_secrets WHERE name = $1', [name]);
      const row = result.rows[0];
      if (!row) throw new Error(`service secret ${name} is missing: run the migrations`);
      return row.value;
    },
  };
}

export type ServiceSecretsRepository = ReturnType<typeof createServiceSecretsRepository>;
