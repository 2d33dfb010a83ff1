// Reads a V8 CPU profile (`node --cpu-prof`) into time per category of code: each sample
// goes to the innermost frame on its stack that belongs to a category (a sample in Node's
// crypto called from the cursor codec is the cursor codec's; `writev` called from
// node:net is Node's HTTP and socket work), its "self" time; a category's "total" time
// counts every sample with any of its frames on the stack (so pg called from a handler is
// in both the handler's and pg's total, and in pg's self only).
//
// Samples are weighted by the time to the next sample, as Chrome's DevTools weights them.

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

export interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Category {
  name: string;
  /** Whether a frame is this category's code. */
  test: (frame: CallFrame) => boolean;
  /**
   * Categories that claim this one's samples when they are on the stack too: Node's socket
   * code writes and reads for pg's connections as well as for HTTP, and the stack says for
   * which (pg's frames are outside Node's).
   */
  yieldsTo?: string[];
}

const inPackage =
  (...names: string[]) =>
  (frame: CallFrame): boolean =>
    names.some((name) => frame.url.includes(`/node_modules/${name}/`));
const inSource =
  (...dirs: string[]) =>
  (frame: CallFrame): boolean =>
    dirs.some((dir) => frame.url.includes(`/${dir}`));
const builtin = (...names: string[]) => (frame: CallFrame) => frame.url === '' && names.includes(frame.functionName);
const either =
  (...tests: ((frame: CallFrame) => boolean)[]) =>
  (frame: CallFrame): boolean =>
    tests.some((t) => t(frame));

// Code compiled at run time has no file: Ajv's validators are `validate<n>` functions,
// fast-json-stringify's serializers `anonymous<n>` and `main` (both built with new Function).
const ajvCompiled = (frame: CallFrame) => frame.url === '' && /^validate\d*$/.test(frame.functionName);
const serializerCompiled = (frame: CallFrame) => frame.url === '' && /^(anonymous\d*|main)$/.test(frame.functionName);

const NODE_ANSWERS = 'Node HTTP: answers (headers, socket writes, kernel time included)';
const NODE_REQUESTS = 'Node HTTP: request parsing, socket reads';
// Writing an answer: its headers (node:_http_outgoing, and node:_http_common's checks of
// each header set), the stream machinery and the socket's write (writev, whose time is
// mostly the kernel's).
const nodeAnswers = (f: CallFrame): boolean =>
  f.url === 'node:_http_outgoing' ||
  (f.url === 'node:_http_common' && /^check(InvalidHeaderChar|IsHttpToken)$/.test(f.functionName)) ||
  f.url === 'node:internal/streams/writable' ||
  (/^node:(net|internal\/stream_base_commons)$/.test(f.url) && /write/i.test(f.functionName)) ||
  (f.url === 'node:_http_server' && /^(writeHead|resOnFinish|ServerResponse|_finish)/.test(f.functionName));

/**
 * The categories of the question "where does a request's time go", in the order a frame
 * is tested against them: a frame belongs to the first that matches.
 */
export const categories: Category[] = [
  { name: 'GC', test: builtin('(garbage collector)') },
  { name: 'idle', test: builtin('(idle)') },
  { name: 'V8/native, unattributed ((program))', test: builtin('(program)') },
  { name: 'logging (pino, access log)', test: either(inPackage('pino', 'sonic-boom', 'pino-std-serializers', 'fast-redact', 'on-exit-leak-free', 'thread-stream'), inSource('src/http/access-log'), (f) => /\/node_modules\/fastify\/lib\/logger/.test(f.url)) },
  { name: 'pg driver and protocol', test: inPackage('pg', 'pg-protocol', 'pg-pool', 'pg-types', 'pg-int8', 'postgres-array', 'postgres-date', 'postgres-interval', 'postgres-bytea', 'pg-connection-string', 'split2') },
  { name: 'validation (Ajv, contract checks)', test: either(inPackage('ajv', 'ajv-formats', 'fast-uri', 'fast-deep-equal'), inSource('src/contract/validation'), ajvCompiled) },
  { name: 'JSON body parsing', test: either(inPackage('lossless-json', 'secure-json-parse'), inSource('src/contract/json-body'), builtin('parse')) },
  { name: 'JSON serialisation', test: either(inPackage('fast-json-stringify', 'json-schema-ref-resolver'), serializerCompiled, builtin('stringify')) },
  { name: 'auth', test: inSource('src/api-keys/') },
  { name: 'rate limiting', test: inPackage('@fastify/rate-limit', 'toad-cache') },
  { name: 'our handlers (handlers, cursors, contract binding)', test: inSource('src/handlers/', 'src/pagination/', 'src/contract/') },
  { name: 'our database layer (repositories, coalescing)', test: inSource('src/db/', 'src/catalogue/', 'src/store/', 'src/events/', 'src/middleware/idempotency-keys') },
  { name: 'our hooks and plugins', test: either(inSource('src/plugins/', 'src/app', 'src/errors/', 'src/http/', 'src/server'), inPackage('@fastify/under-pressure', '@fastify/cors', '@fastify/helmet', 'prom-client', 'close-with-grace')) },
  { name: 'the benchmark app (reference, hello world)', test: inSource('bench/') },
  { name: 'Fastify (routing, hooks, reply)', test: inPackage('fastify', 'find-my-way', 'fastify-openapi-glue', 'fastify-plugin', 'avvio', 'light-my-request', '@fastify/error', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler', 'process-warning', 'rfdc', 'fast-querystring', 'abstract-logging', 'safe-regex2', 'ret', 'fast-decode-uri-component', '@fastify/proxy-addr', 'proxy-addr', 'forwarded', 'content-type') },
  { name: NODE_ANSWERS, test: nodeAnswers, yieldsTo: ['pg driver and protocol', 'logging (pino, access log)'] },
  { name: NODE_REQUESTS, test: (f) => /^node:(_http_(common|server|incoming)|net|stream|internal\/(http|streams\/readable|stream_base_commons|net|js_stream_socket))$/.test(f.url), yieldsTo: ['pg driver and protocol'] },
];

/** A sample no category claims: Node's event loop, timers, promise jobs and module code outside the list. */
export const OTHER = 'Node other (event loop, timers, promise jobs, crypto outside a category)';

export interface Summary {
  /** Sampled time in the window, µs (idle included). */
  sampled: number;
  samples: number;
  /** Per category: self and total µs. */
  byCategory: Map<string, { self: number; total: number }>;
  /** Self µs per function (`name url:line`), largest first. */
  byFunction: [string, number][];
  /** Self µs per function within each category (where a category's self time is spent), largest first. */
  functionsOf: Map<string, [string, number][]>;
}

/** Sums a profile's samples whose time falls in `window` (µs of the profile's clock; all if none). */
export function summarise(profile: CpuProfile, window?: { start: number; end: number }, cats: Category[] = categories): Summary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const categoryOf = new Map<number, string | undefined>();
  const frameCategory = (id: number): string | undefined => {
    if (!categoryOf.has(id)) {
      const frame = byId.get(id)?.callFrame;
      categoryOf.set(id, frame ? cats.find((c) => c.test(frame))?.name : undefined);
    }
    return categoryOf.get(id);
  };

  const yields = new Map(cats.filter((c) => c.yieldsTo).map((c) => [c.name, c.yieldsTo as string[]]));
  const byCategory = new Map<string, { self: number; total: number }>([...cats.map((c) => c.name), OTHER].map((name) => [name, { self: 0, total: 0 }]));
  const byFunction = new Map<string, number>();
  const functionsOf = new Map<string, Map<string, number>>();
  let sampled = 0;
  let count = 0;
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (window && (t < window.start || t > window.end)) continue;
    const duration = profile.timeDeltas[i + 1] ?? 0;
    const leaf = profile.samples[i] as number;
    let self: string | undefined;
    const seen = new Set<string>();
    const order: string[] = []; // the stack's categories, innermost first
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      const category = frameCategory(id);
      if (category === undefined) continue;
      self ??= category;
      if (!seen.has(category)) order.push(category);
      seen.add(category);
    }
    self ??= OTHER;
    const yieldsTo = yields.get(self);
    if (yieldsTo) self = order.find((c) => yieldsTo.includes(c)) ?? self;
    seen.add(self);
    (byCategory.get(self) as { self: number }).self += duration;
    for (const category of seen) (byCategory.get(category) as { total: number }).total += duration;
    const frame = byId.get(leaf)?.callFrame;
    const name = frame ? `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*?\/(src|bench|dist)\//, '$1/')}:${frame.lineNumber + 1}` : String(leaf);
    byFunction.set(name, (byFunction.get(name) ?? 0) + duration);
    let within = functionsOf.get(self);
    if (!within) functionsOf.set(self, (within = new Map()));
    within.set(name, (within.get(name) ?? 0) + duration);
    sampled += duration;
    count++;
  }
  const largestFirst = (m: Map<string, number>): [string, number][] => [...m].sort((a, b) => b[1] - a[1]);
  return { sampled, samples: count, byCategory, byFunction: largestFirst(byFunction), functionsOf: new Map([...functionsOf].map(([c, m]) => [c, largestFirst(m)])) };
}
