// Creates sent while a service stops, and what "it drained" means for each of them, judged
// from what the service saw rather than from the clock.
//
// A request can fail at a stop in two ways that are not the service's fault: its connection
// is refused once the listener is closed, or it is reset while still in the kernel's accept
// queue when the listener closes (the kernel resets what no one will accept). Either way
// the service never saw it. A request the service did see must be answered. So a failed
// request is acceptable only when the service logged nothing under its X-Request-Id (the
// access log writes a line for every request it reads, answered or not) and, where the
// caller can look, stored nothing for it. (Judging by how long before the stop it was sent
// failed on a busy machine, where a connection can wait in the accept queue far longer.)
export interface DrainOutcome {
  /** The pet's name and the request's X-Request-Id. */
  name: string;
  status?: number;
  id?: number;
  /** The connection error's code (ECONNREFUSED, ECONNRESET, ...). */
  error?: string;
  sentAfterStop: boolean;
  answeredAfterStop: boolean;
}

/**
 * `workers` loops each sending createPet on a fresh connection; once `before` creates were
 * answered 201 (a count, not a time: a busy machine answers fewer per second), `stop()` is
 * called. A loop ends at its first failure after the stop, or `afterStopMs` after it.
 */
export async function createWhileStopping(options: {
  url: string;
  key: string;
  workers: number;
  tag: string;
  stop: () => void;
  before: number;
  afterStopMs?: number;
}): Promise<DrainOutcome[]> {
  const { url, key, workers, tag, stop, before, afterStopMs = 2000 } = options;
  let stoppedAt = Infinity;
  const outcomes: DrainOutcome[] = [];
  const worker = async (n: number): Promise<void> => {
    for (let i = 0; performance.now() - stoppedAt < afterStopMs; i++) {
      const name = `${tag}-${n}-${i}`;
      const sentAt = performance.now();
      try {
        // A connection per request: the only ways not to be served are then the ones above.
        const response = await fetch(`${url}/v1/pets`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', connection: 'close', 'x-request-id': name },
          body: JSON.stringify({ name, categoryId: 3 }),
        });
        const body = (await response.json()) as { id?: number };
        outcomes.push({ name, status: response.status, id: body.id, sentAfterStop: sentAt > stoppedAt, answeredAfterStop: performance.now() > stoppedAt });
      } catch (error) {
        const code = (error as { cause?: { code?: string } }).cause?.code ?? String(error);
        outcomes.push({ name, error: code, sentAfterStop: sentAt > stoppedAt, answeredAfterStop: true });
        if (stoppedAt !== Infinity) return;
      }
    }
  };
  const running = Array.from({ length: workers }, (_, n) => worker(n));
  while (outcomes.filter((o) => o.status === 201).length < before) await new Promise((r) => setTimeout(r, 10));
  stoppedAt = performance.now();
  stop();
  await Promise.all(running);
  return outcomes;
}

/**
 * The outcomes that break the drain promise, each with the reason: an answer other than
 * 201 (or a 201 missing from the service's log, which would make the log no witness), a
 * connection error other than refused or reset, or a failed request that the service
 * logged (it saw it and did not answer) or stored (`stored`, pet names, when known).
 */
export function undrained(outcomes: DrainOutcome[], serviceLog: string, stored?: Set<string>): string[] {
  const broken: string[] = [];
  for (const o of outcomes) {
    if (o.status !== undefined) {
      if (o.status !== 201) broken.push(`${o.name}: answered ${o.status}`);
      // What makes the log a witness: every request answered is in it.
      else if (!serviceLog.includes(`"${o.name}"`)) broken.push(`${o.name}: answered, but not in the service's log`);
    } else if (o.error !== 'ECONNREFUSED' && o.error !== 'ECONNRESET') broken.push(`${o.name}: ${o.error}`);
    else if (serviceLog.includes(`"${o.name}"`)) broken.push(`${o.name}: ${o.error}, but the service had read it (it is in its log)`);
    else if (stored?.has(o.name)) broken.push(`${o.name}: ${o.error}, but it was stored`);
  }
  return broken;
}
