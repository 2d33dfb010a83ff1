// The one place that reads a private field of Node (no Fastify private field is read
// anywhere). test/wire/node-internals.test.ts checks, on a plain node:http server, every
// behaviour of it that src/ relies on, so a Node release that changes it fails that test
// rather than the service.
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The answer Node's HTTP server has attached to this connection: the response being written,
 * or the one whose request is being read (its headers parsed, its body arriving); undefined
 * when none. Pipelined requests' responses wait in Node's queue and are attached one at a
 * time, in order, as each earlier answer finishes.
 *
 * Node's `socket._httpMessage`, which its own `clientError` default reads for the same
 * purpose. There is no public equivalent: `response.socket` says whether one given response
 * holds the connection, but a `clientError` handler is given only the socket, and a
 * pipelined request has no public way to name the response before it.
 */
export function attachedResponse(socket: Socket): ServerResponse | undefined {
  return (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
}
