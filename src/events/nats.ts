// The NATS JetStream relay (EVENTS_NATS_URL): every event is also published to JetStream, on
// `animal-store.events.<type>` (EVENTS_NATS_SUBJECT_PREFIX), its body the event's JSON as
// listEvents answers it, with the event's id as `Nats-Msg-Id`. The stream
// `ANIMAL_STORE_EVENTS` (EVENTS_NATS_STREAM) over `animal-store.events.>` is made if missing.
//
// One instance relays at a time: the relay's row in `event_relays` is locked (FOR UPDATE SKIP
// LOCKED) by the transaction that reads the next final events after its position (the same
// append-order page as listEvents: no event is skipped while others are still being written),
// publishes them, waits for JetStream's acknowledgements and moves the position past them.
// A crash or a NATS failure between publishing and committing publishes those events again
// later, with the same Nats-Msg-Id: JetStream drops the duplicates within the stream's
// duplicate window, which the relay sets to an hour when it makes the stream (JetStream's
// default is two minutes; a stream that exists is left as it is).
//
// The relay's row is made as the service starts, before it serves a request and before NATS
// is reached (src/events/plugin.ts; else by its first run): it starts after the newest event,
// so that turning it on does not publish the events kept from before (EVENT_RETENTION_DAYS of
// them), and publishes every later one, also those written while NATS is away at start.
// While it runs, retention keeps the events it has not published; once it has not run for
// EVENT_RETENTION_DAYS (turned off, or NATS away that long), retention no longer waits for it
// (src/events/feed.ts).
//
// It runs on a timer (src/app.ts), never on a request's path: NATS being away only delays
// publishing, and the job says so once in the log (src/jobs/plugin.ts).
import { connect, Events, headers, nanos, type JetStreamClient, type MsgHdrs, type NatsConnection } from 'nats';
import { inSpan } from '../tracing/context.js';

/** NATS headers from the carried trace context; none when there is none. */
function traceHeaders(carried: Record<string, string>): { headers?: MsgHdrs } {
  const entries = Object.entries(carried);
  if (entries.length === 0) return {};
  const h = headers();
  for (const [name, value] of entries) h.set(name, value);
  return { headers: h };
}
import type { EventsRepository, RelayedEvent } from './feed.js';

/** The relay's row in event_relays. */
export const RELAY_NATS = 'nats';
/** Events per transaction. */
const BATCH = 100;
/** The most batches one run publishes before it lets the timer call again. */
const BATCHES_PER_RUN = 50;
/** The duplicate window of the stream the relay makes: a re-publish within it is dropped. */
export const DUPLICATE_WINDOW_MS = 60 * 60 * 1000;
/** How long one publish may wait for JetStream's acknowledgement. */
const PUBLISH_TIMEOUT_MS = 5_000;

export interface NatsRelay {
  /** Publishes what is due; resolves with how many events it published. */
  run(): Promise<number>;
  close(): Promise<void>;
}

export interface NatsRelaySettings {
  url: string;
  stream: string;
  subjectPrefix: string;
}

export function createNatsRelay({ url, stream, subjectPrefix }: NatsRelaySettings, events: EventsRepository): NatsRelay {
  let connection: Promise<{ nc: NatsConnection; js: JetStreamClient }> | undefined;
  let closed = false;
  // Whether the connection is up now: while NATS is away (the client reconnects on its own),
  // a run fails at once instead of holding a database connection through publish timeouts.
  let up = false;
  const follow = async (nc: NatsConnection): Promise<void> => {
    for await (const status of nc.status()) {
      if (status.type === Events.Disconnect) up = false;
      if (status.type === Events.Reconnect) up = true;
    }
  };
  const open = async (): Promise<{ nc: NatsConnection; js: JetStreamClient }> => {
    // Only the servers configured: never the addresses a server announces of its cluster.
    const nc = await connect({ servers: url.split(','), ignoreClusterUpdates: true, maxReconnectAttempts: -1, timeout: 5_000, name: 'animal-store events relay' });
    try {
      const jsm = await nc.jetstreamManager();
      await jsm.streams.info(stream).catch(async () => jsm.streams.add({ name: stream, subjects: [`${subjectPrefix}.>`], duplicate_window: nanos(DUPLICATE_WINDOW_MS) }));
      up = true;
      void follow(nc).catch(() => {});
      return { nc, js: nc.jetstream() };
    } catch (error) {
      await nc.close();
      throw error;
    }
  };
  const publisher = async () => {
    connection ??= open().catch((error: unknown) => {
      connection = undefined;
      throw error;
    });
    return connection;
  };

  return {
    async run() {
      if (closed) return 0;
      // The row first, NATS reached or not: the events written while it is away wait for it.
      await events.join(RELAY_NATS, 'newest');
      const { js } = await publisher();
      if (!up) throw new Error('NATS is unreachable; the client is reconnecting');
      const encoder = new TextEncoder();
      const publish = async (batch: RelayedEvent[]) => {
        await Promise.all(
          batch.map((event) =>
            // The message carries the trace context of the change that wrote the event.
            inSpan('nats publish', { parent: event.traceParent, kind: 'producer', attributes: { 'messaging.system': 'nats', 'messaging.destination.name': `${subjectPrefix}.${event.type}` } }, (carried) =>
              js.publish(`${subjectPrefix}.${event.type}`, encoder.encode(event.json), { msgID: String(event.id), timeout: PUBLISH_TIMEOUT_MS, ...traceHeaders(carried) }),
            ),
          ),
        );
      };
      let total = 0;
      for (let n = 0; n < BATCHES_PER_RUN && !closed; n++) {
        const published = await events.relay(RELAY_NATS, BATCH, publish, 'newest');
        total += published ?? 0;
        if (published === undefined || published < BATCH) break;
      }
      return total;
    },
    async close() {
      closed = true;
      const opened = connection;
      connection = undefined;
      if (opened) await opened.then(({ nc }) => nc.drain()).catch(() => {});
    },
  };
}
