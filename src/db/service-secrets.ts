// The service_secrets table: secrets every instance shares, made once by a migration.
import { query, statement, type Queryable } from './query.js';

const GET = statement<{ value: Buffer }>('service-secrets-get', 'SELECT value FROM service_secrets WHERE name = $1');

export function createServiceSecretsRepository(primary: Queryable) {
  return {
    async get(name: string): Promise<Buffer> {
      const [row] = await query(primary, GET, [name]);
      if (!row) throw new Error(`service secret ${name} is missing: run the migrations`);
      return row.value;
    },
  };
}

export type ServiceSecretsRepository = ReturnType<typeof createServiceSecretsRepository>;
