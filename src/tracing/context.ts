// The trace context as the rest of the service sees it, through @opentelemetry/api only: every
// call here is a no-op until src/tracing/tracing.ts has started the SDK, and costs one boolean
// test when tracing is off.
//
// A change's trace reaches the work it causes later through the event it writes
// (docs/decisions/0007-trace-context-through-events.md): a write
// statement, while tracing is on, first sets `animal_store.traceparent` on its connection
// (src/db/query.ts), which `events.trace_parent` takes as its default (migration
// 1763700000020), and the webhook delivery and the NATS publication of that event continue
// that trace. Coalesced writes (docs/decisions/0002-request-coalescing.md) carry the context
// of the request whose call opened the batch.
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';

export type Env = Record<string, string | undefined>;

declare module 'fastify' {
  interface FastifyRequest {
    /** The trace of the request's server span, while tracing is on: in its access-log line. */
    traceId?: string;
  }
}

/** Whether the environment turns tracing on. */
export function tracingRequested(env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (exporters.includes('none')) return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || exporters.includes('otlp'));
}

let on = false;

/** Called once the SDK runs. */
export function useTracer(): void {
  on = true;
}

export function tracing(): boolean {
  return on;
}

/** The active span's W3C `traceparent`, or '' when there is none (or tracing is off). */
export function currentTraceparent(): string {
  if (!on) return '';
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? '';
}

export interface SpanOptions {
  /** A `traceparent` to continue (a stored event's): none starts a trace of its own. */
  parent?: string | null;
  kind?: 'client' | 'producer' | 'internal';
  attributes?: Attributes;
}

const KINDS = { client: SpanKind.CLIENT, producer: SpanKind.PRODUCER, internal: SpanKind.INTERNAL } as const;

/**
 * Runs `work` under a new span, given the headers that carry it onward (`traceparent`); with
 * tracing off, `work({})`. The span ends when `work` settles, failed when it throws.
 */
export function inSpan<T>(name: string, options: SpanOptions, work: (headers: Record<string, string>) => Promise<T>): Promise<T> {
  if (!on) return work({});
  const parent = options.parent ? propagation.extract(ROOT_CONTEXT, { traceparent: options.parent }) : ROOT_CONTEXT;
  const span = trace.getTracer('animal-store').startSpan(name, { kind: KINDS[options.kind ?? 'internal'], ...(options.attributes ? { attributes: options.attributes } : {}) }, parent);
  return context.with(trace.setSpan(parent, span), async () => {
    const headers: Record<string, string> = {};
    propagation.inject(context.active(), headers);
    try {
      return await work(headers);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Marks the active span (from `inSpan`) failed, with `message`. */
export function failSpan(message: string): void {
  if (!on) return;
  trace.getSpan(context.active())?.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** Sets attributes on the active span. */
export function annotateSpan(attributes: Attributes): void {
  if (!on) return;
  trace.getSpan(context.active())?.setAttributes(attributes);
}
