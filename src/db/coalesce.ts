// Coalescing: calls that arrive in the same turn of the event loop are served by one
// statement (docs/decisions/0002-request-coalescing.md says why, and what it was measured
// against). Invariants a change must keep:
// - the statement is sent after every call of its batch has arrived, so each call still sees
//   everything committed before it was made; alone, a call waits no longer than a setImmediate;
// - answers are matched to calls by position (`many` answers in the order given);
// - one bad row fails only its own request: a failed batch is retried one call at a time,
//   unless the database is unreachable;
// - with `key`, calls asking the same question in one batch share one answer (reads only).
import { isDatabaseUnavailable } from './unavailable.js';

interface Waiting<In, Out> {
  input: In;
  resolve: (out: Out) => void;
  reject: (error: unknown) => void;
}

export interface CoalesceOptions<In, Out> {
  /** Writes one. */
  one: (input: In) => Promise<Out>;
  /** Writes several in one statement; answers in the order given. */
  many: (inputs: In[]) => Promise<Out[]>;
  /** Most inputs in one statement. */
  max: number;
  /**
   * Reads only: calls of one batch with the same key are the same question, asked once and
   * answered to each. They all arrived before the statement was sent, so the shared answer
   * is no older than any of them. Never for writes (each create is its own row).
   */
  key?: (input: In) => string;
  /**
   * At most one statement in flight; calls arriving meanwhile wait for it and go together in
   * the next. Only for writes that never wait on another transaction (pets' inserts): one
   * that can wait on a row someone holds would hold up every later call with it.
   */
  serial?: boolean;
}

export function coalesce<In, Out>({ one, many, max, key, serial = false }: CoalesceOptions<In, Out>): (input: In) => Promise<Out> {
  let queue: Waiting<In, Out>[] = [];
  // serial: a statement is in flight, and whatever arrives waits for it.
  let busy = false;

  function flush(): void {
    const batch = key ? shared(queue, key) : queue;
    queue = [];
    const chunks: Waiting<In, Out>[][] = [];
    for (let start = 0; start < batch.length; start += max) chunks.push(batch.slice(start, start + max));
    if (!serial) {
      for (const chunk of chunks) void write(chunk);
      return;
    }
    busy = true;
    void (async () => {
      for (const chunk of chunks) await write(chunk);
      busy = false;
      if (queue.length > 0) flush();
    })();
  }

  /** Settles every call of the batch; resolves once they all are (it never rejects). */
  function write(batch: Waiting<In, Out>[]): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch as [Waiting<In, Out>];
      return one(only.input).then(only.resolve, only.reject);
    }
    return many(batch.map((w) => w.input)).then(
      (outs) => batch.forEach((w, i) => w.resolve(outs[i] as Out)),
      async (error: unknown) => {
        if (isDatabaseUnavailable(error)) batch.forEach((w) => w.reject(error));
        else await Promise.all(batch.map((w) => one(w.input).then(w.resolve, w.reject)));
      },
    );
  }

  return (input) =>
    new Promise<Out>((resolve, reject) => {
      if (queue.length === 0 && !busy) setImmediate(flush);
      queue.push({ input, resolve, reject });
    });
}

/** One waiting call per distinct key, answering every call that asked it. */
function shared<In, Out>(queue: Waiting<In, Out>[], key: (input: In) => string): Waiting<In, Out>[] {
  const byKey = new Map<string, Waiting<In, Out>[]>();
  for (const w of queue) {
    const k = key(w.input);
    const same = byKey.get(k);
    if (same) same.push(w);
    else byKey.set(k, [w]);
  }
  if (byKey.size === queue.length) return queue;
  return [...byKey.values()].map((same) =>
    same.length === 1
      ? (same[0] as Waiting<In, Out>)
      : {
          input: (same[0] as Waiting<In, Out>).input,
          resolve: (out: Out) => same.forEach((w) => w.resolve(out)),
          reject: (error: unknown) => same.forEach((w) => w.reject(error)),
        },
  );
}
