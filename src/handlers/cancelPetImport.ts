import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';

// A queued or running import becomes cancelled; its worker sees it at its next batch.
export const cancelPetImport: Handler<'cancelPetImport'> = async ({ params }, { petImports }) => {
  const outcome = await petImports.cancel(params.importId);
  if (!outcome) return errorAnswer('not_found', `Import ${params.importId} does not exist`);
  if ('ended' in outcome) return errorAnswer('import_finished', `Import ${params.importId} has ended (${outcome.ended}): there is nothing to cancel`);
  return { status: 200, body: outcome.cancelled };
};
