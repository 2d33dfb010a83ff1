// The query is what the operation declares, nothing else: a parameter it does not declare
// is 400, naming it and the ones it takes (a typo such as `?stauts=sold` would otherwise be
// ignored, and the client would get unfiltered data and no error), and so is a parameter
// given several times where one value is expected (`?limit=1&limit=2`: which one counts?).
// A name or value not percent-encoded as UTF-8 (`?q=Zo%E9`, a `%` alone) is 400 too: the
// parser would keep its text undecoded, and the operation would search or compare that text.
// Before validation, so that the answer says this rather than a schema rule.
import type { preValidationHookHandler } from 'fastify';
import type { OperationMiddleware } from '../routes/middleware.js';
import { ApiError, shown } from '../errors/catalogue.js';

/** The length of the UTF-8 sequence a byte starts, or 0 where no well-formed sequence starts. */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** The first escape, or sequence of escapes, in `text` that is not UTF-8: a `%` alone, `%E9`, `%C0%AF`. */
function badEscape(text: string): string {
  for (const [run] of text.matchAll(/(?:%[0-9A-Fa-f]{2})+|%/g)) {
    if (run === '%') return run;
    const escapes = run.match(/%../g) as string[];
    for (let i = 0; i < escapes.length; ) {
      const length = sequenceLength(Number.parseInt((escapes[i] as string).slice(1), 16));
      const sequence = escapes.slice(i, i + Math.max(length, 1)).join('');
      if (length === 0) return sequence;
      try {
        decodeURIComponent(sequence);
      } catch {
        return sequence;
      }
      i += length;
    }
  }
  return '%';
}

/**
 * The first parameter of a request target's query whose name or value is not percent-encoded
 * UTF-8, with the escapes that are not; undefined when every one is.
 */
function misencoded(target: string): { name: string; escapes: string } | undefined {
  const start = target.indexOf('?');
  if (start === -1 || !target.includes('%', start)) return undefined;
  for (const pair of target.slice(start + 1).split('&')) {
    if (!pair.includes('%')) continue;
    try {
      decodeURIComponent(pair);
    } catch {
      const raw = pair.split('=', 1)[0] as string;
      let name = raw;
      try {
        name = decodeURIComponent(raw.replaceAll('+', ' '));
      } catch {
        // The name itself is misencoded: shown as sent.
      }
      return { name, escapes: badEscape(pair) };
    }
  }
  return undefined;
}

export function queryParameters(): OperationMiddleware {
  return {
    name: 'query-parameters',
    hooks(operation) {
      const declared = operation.parameters.filter((p) => p.in === 'query');
      const names = new Set(declared.map((p) => p.name));
      const single = new Set(declared.filter((p) => !p.list).map((p) => p.name));
      const taken = `takes ${declared.length > 0 ? declared.map((p) => p.name).join(', ') : 'none'}`;
      const takes = `it ${taken}`;
      const refuse = (name: string, rule: string, message: string): ApiError =>
        new ApiError('bad_request', `query parameter ${shown(name)}: ${message}`, { details: [{ location: 'query', field: shown(name), rule, message }] });
      const check: preValidationHookHandler = (request, _reply, done) => {
        const wrong = misencoded(request.url);
        if (wrong) return done(refuse(wrong.name, 'encoding', `is not percent-encoded UTF-8 (${shown(wrong.escapes)}): percent-encode the text's UTF-8 bytes, as encodeURIComponent does (a % itself is %25)`));
        const query = request.query as Record<string, unknown>;
        for (const name in query) {
          if (name === '') {
            const message = `has no name (an "=" with nothing before it): remove it; ${operation.operationId} ${taken}`;
            return done(new ApiError('bad_request', `a query parameter ${message}`, { details: [{ location: 'query', field: '', rule: 'unknown', message }] }));
          }
          if (!names.has(name)) return done(refuse(name, 'unknown', `is not a parameter of ${operation.operationId} (${takes})`));
          const value = query[name];
          if (single.has(name) && Array.isArray(value)) return done(refuse(name, 'once', `must be given once, not ${value.length} times`));
        }
        done();
      };
      return { preValidation: [check] };
    },
  };
}
