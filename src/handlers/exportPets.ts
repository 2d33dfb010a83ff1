import Negotiator from 'negotiator';
import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';
import { EXPORT_FORMATS, type ExportFormat } from '../catalogue/pet-export.js';

const EXTENSION: Record<ExportFormat, string> = { 'text/csv': 'csv', 'application/x-ndjson': 'ndjson' };

// What an export is sent as, the default first. Negotiated whole, parameters included, so
// that `Accept: text/csv; charset=utf-8` matches and `text/csv; header=absent` does not.
const CONTENT_TYPES: Record<string, ExportFormat> = {
  'text/csv; charset=utf-8; header=present': 'text/csv',
  'application/x-ndjson; charset=utf-8': 'application/x-ndjson',
};

// listPets' filters, every matching pet, in id order, from one snapshot, streamed
// (src/catalogue/pet-export.ts) in the format Accept chooses: CSV when it allows any.
export const exportPets: Handler<'exportPets'> = async ({ query, context }, { pets }) => {
  const type = new Negotiator({ headers: { accept: context.accept ?? '*/*' } }).mediaType(Object.keys(CONTENT_TYPES));
  const format = type === undefined ? undefined : CONTENT_TYPES[type];
  if (type === undefined || format === undefined) {
    const refused = errorAnswer('not_acceptable', `Accept allows neither ${EXPORT_FORMATS.join(' nor ')}, the formats of an export: send Accept: ${EXPORT_FORMATS.join(' or Accept: ')}`);
    // Whether an export is answered depends on Accept too.
    const headers: { Vary: string } = { Vary: 'Accept' };
    return { ...refused, headers };
  }
  const filters = { status: query.status, categoryId: query.categoryId, ids: query.id };
  const body = await pets.export(filters, format);
  return { status: 200, body, headers: { 'Content-Type': type, 'Content-Disposition': `attachment; filename="pets.${EXTENSION[format]}"`, Vary: 'Accept' } };
};
