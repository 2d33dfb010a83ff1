// Vary as a list several places add to: CORS's hook adds Origin, a handler or a route adds
// what else its answer depends on; a name already listed is not added twice.
import type { FastifyReply } from 'fastify';

/** Adds `name` to the answer's Vary. */
export function addVary(reply: FastifyReply, name: string): void {
  const vary = reply.getHeader('vary');
  if (vary === undefined || vary === '') return void reply.header('vary', name);
  const listed = String(vary).split(',').map((n) => n.trim().toLowerCase());
  if (!listed.includes(name.toLowerCase())) reply.header('vary', `${String(vary)}, ${name}`);
}
