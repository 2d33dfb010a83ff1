// What the raw Node request holds that Fastify's view of it does not: the request id given
// to it (for answers written outside Fastify: src/errors/raw-answers.ts), and header lines that
// Node folds away (for a repeated singleton header it keeps only the first).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

// A client-supplied X-Request-Id is kept only if it is short and plain, so it cannot
// forge log lines or grow without bound.
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const ID = Symbol('requestId');

type Identified = IncomingMessage & { [ID]?: string };

/**
 * The request's id: the client's X-Request-Id if it is plain, else a new UUID. Kept on the
 * raw request, so that an answer Node's parser forces later (a body that stalls or breaks
 * off) names the same id as the request's log lines.
 */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  (request as Identified)[ID] = id;
  return id;
}

/** The id `requestIdOf` gave this request, if Fastify has seen it. */
export function givenRequestId(request: IncomingMessage): string | undefined {
  return (request as Identified)[ID];
}

/**
 * Whether the header `name` (lower case) came on more than one line. For singleton headers
 * (Authorization, Content-Type) Node keeps the first line only, so which one the client
 * meant is ambiguous.
 */
export function repeatsHeader(rawHeaders: readonly string[], name: string): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const field = rawHeaders[i] as string;
    if (field.length === name.length && field.toLowerCase() === name) {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}
