// Which failures mean "this database cannot answer now" (as opposed to a bad query):
// the error handler answers them with 503 + Retry-After, and reads meant for a replica
// go to the primary instead.

/** Errors that mean "the database cannot answer now": the client should retry. */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // An error that carries an HTTP status was raised by the HTTP side (Fastify gives one to
  // errors of the request stream, such as a client's abort: ECONNRESET, "aborted"); the
  // database driver never sets one. Counting those would let any client fake an outage.
  if (typeof (error as { statusCode?: unknown }).statusCode === 'number') return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE'].includes(code)) return true;
    // 08: connection exception; 57P01-03: shutdown / cannot connect now; 57014: statement
    // timeout; 53300: too many connections.
    if (code.startsWith('08') || ['57P01', '57P02', '57P03', '57014', '53300'].includes(code)) return true;
  }
  return /timeout exceeded when trying to connect|Connection terminated|not queryable|Connection refused/i.test(error.message);
}
