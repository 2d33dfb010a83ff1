// One access-log line per request, written when the response has been sent, instead of
// Fastify's two ("incoming request" + "request completed"). Through Fastify's LogController
// rather than an onResponse hook: Fastify calls it anyway, so the line costs no hook.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

export class AccessLog extends LogController {
  constructor() {
    // Keeps Fastify's other per-request lines (404s, its default error handler) off: ours
    // are this line and the error handler's.
    super({ disableRequestLogging: true });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { method: request.method, url: request.url, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 };
    // Only a failure to write the response arrives here; handler errors are logged by the
    // error handler (src/plugins/errors.ts).
    if (error) request.log.warn({ ...line, err: { message: error.message } }, 'request');
    else request.log.info(line, 'request');
  }
}
