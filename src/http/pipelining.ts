// Pipelined requests (several sent on a connection before the first answer) are processed
// one after the other, and not at all once the connection is closing.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { attachedResponse } from './node-internals.js';

/**
 * A request read while an earlier answer on its connection is pending (pipelining) waits
 * for the answers before it, then is processed, or not at all if the connection is
 * closing; any other request goes on at once (this runs on every request). Node hands
 * pipelined requests over as soon as it reads them, but RFC 9112 §9.3.2 allows processing
 * them in parallel only when all are safe, and a server that closes the connection after
 * an earlier answer (`Connection: close`, as Fastify sends after a refused body) must not
 * process the requests after it (§9.6): a createPet would be stored with an answer that
 * is never sent, and then sent again.
 */
export function awaitTurn(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
  const socket = request.raw.socket;
  // Read after the connection's answers ended (an answer with Connection: close went out
  // before these bytes were parsed). (`=== false`: inject's socket has no `writable`.)
  if (socket.writable === false) {
    request.log.info('request not processed: its connection closed before its turn');
    reply.hijack();
    return;
  }
  const pending = attachedResponse(socket);
  if (pending === undefined || pending === reply.raw) return done();
  pending.once('close', () => awaitTurn(request, reply, done));
}
