import type { Handler } from '../contract/handler.js';
import type { ImportFormat } from '../catalogue/pet-import-rows.js';
import { basePath } from '../contract/spec.js';

// The body is stored whole, then the import's row, in one transaction
// (src/catalogue/pet-imports.ts); a worker adds the rows after the 202. The body's media
// type is one of the two the contract declares (any other is 415 before this runs).
export const createPetImport: Handler<'createPetImport'> = async ({ query, body, context }, { petImports }) => {
  const format: ImportFormat = context.mediaType === 'application/x-ndjson' ? 'application/x-ndjson' : 'text/csv';
  const { id, petImport } = await petImports.submit(body, { format, errorPolicy: query.errorPolicy ?? 'stop', dryRun: query.dryRun ?? false, declaredBytes: context.contentLength });
  return { status: 202, body: petImport, headers: { Location: `${basePath}/pet-imports/${id}` } };
};
