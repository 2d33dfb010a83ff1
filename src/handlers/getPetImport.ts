import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';

export const getPetImport: Handler<'getPetImport'> = async ({ params }, { petImports }) => {
  const petImport = await petImports.get(params.importId);
  if (!petImport) return errorAnswer('not_found', `Import ${params.importId} does not exist`);
  return { status: 200, body: petImport };
};
