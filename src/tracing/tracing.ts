// Tracing (OpenTelemetry), off unless the standard variables ask for it: an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER=otlp,
// and not OTEL_SDK_DISABLED=true. The SDK (@opentelemetry/sdk-node) reads the rest as every
// OTel SDK does: the sampler (OTEL_TRACES_SAMPLER, parent-based always-on by default), the
// propagators (W3C traceparent), the service name and resource, the exporter's headers and
// timeout, the batch settings (OTEL_BSP_*).
//
// What is traced: each request (@fastify/otel, one server span, no per-hook spans), each SQL
// statement under a span (@opentelemetry/instrumentation-pg: named by the statement's name,
// with its text and never its values), each webhook delivery and NATS publication (under the
// trace of the change that wrote the event: src/tracing/context.ts), each job run.
//
// Invariant: a collector that is slow, refuses or hangs never slows a request. Spans wait in
// one bounded queue (OTEL_BSP_MAX_QUEUE_SIZE, 2,048 by default), exported in the background;
// a span that finds the queue full is dropped, as one whose export failed is, and both are
// counted (`droppedSpans`, on /metrics as animal_store_trace_spans_dropped_total).
import { createRequire } from 'node:module';
import fastifyOtel from '@fastify/otel';
import type { Context } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor, type ReadableSpan, type Span, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace';
import type { FastifyRequest } from 'fastify';
import { tracingRequested, useTracer, type Env } from './context.js';

export interface DroppedSpans {
  /** Spans that found the export queue full. */
  queueFull: number;
  /** Spans of exports that failed (refused, timed out, rejected by the collector). */
  exportFailed: number;
}

export interface Tracing {
  /** Registered before every route (src/app.ts): the server span of each request. */
  fastifyPlugin: ReturnType<InstanceType<typeof fastifyOtel.FastifyOtelInstrumentation>['plugin']>;
  droppedSpans(): DroppedSpans;
  /** Exports what is queued, then stops. */
  shutdown(): Promise<void>;
}

const positive = (value: string | undefined, fallback: number): number => {
  const n = Number(value);
  return value !== undefined && Number.isInteger(n) && n > 0 ? n : fallback;
};

function exporterFor(env: Env): SpanExporter {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim();
  if (protocol === 'http/protobuf') return new ProtobufExporter();
  if (protocol === 'http/json') return new JsonExporter();
  throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported: use http/protobuf (the default, a collector's port 4318) or http/json`);
}

/** The exporter, counting the spans of failed exports. */
class CountingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly settled: (spans: number, ok: boolean) => void,
  ) {}
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      this.settled(spans.length, result.code === ExportResultCode.SUCCESS);
      done(result);
    });
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * The batch processor behind a count of what it holds: spans handed to it and not yet
 * exported (or failed). At the bound, a span is dropped here and counted, before the batch
 * processor would drop it uncounted.
 */
class BoundedProcessor implements SpanProcessor {
  held = 0;
  queueFull = 0;
  exportFailed = 0;
  constructor(
    private readonly inner: SpanProcessor,
    private readonly bound: number,
  ) {}
  settled(spans: number, ok: boolean): void {
    this.held = Math.max(0, this.held - spans);
    if (!ok) this.exportFailed += spans;
  }
  onStart(span: Span, parent: Context): void {
    this.inner.onStart(span, parent);
  }
  onEnd(span: ReadableSpan): void {
    if (!span.spanContext().traceFlags) return;
    if (this.held >= this.bound) {
      this.queueFull++;
      return;
    }
    this.held++;
    this.inner.onEnd(span);
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

/**
 * Starts the SDK when the environment asks for it; call before anything loads `pg` (the
 * instrumentation patches it as it is required). `operationOf` names a request's operation.
 */
export function startTracing(env: Env, operationOf: (request: FastifyRequest) => string): Tracing | undefined {
  if (!tracingRequested(env)) return undefined;
  const bound = positive(env.OTEL_BSP_MAX_QUEUE_SIZE, 2048);
  let processor: BoundedProcessor | undefined;
  const exporter = new CountingExporter(exporterFor(env), (spans, ok) => processor?.settled(spans, ok));
  processor = new BoundedProcessor(
    new BatchSpanProcessor({
      exporter,
      maxQueueSize: bound,
      maxExportBatchSize: Math.min(bound, positive(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512)),
      scheduledDelayMillis: positive(env.OTEL_BSP_SCHEDULE_DELAY, 5000),
      exportTimeoutMillis: positive(env.OTEL_BSP_EXPORT_TIMEOUT, 30_000),
    }),
    bound,
  );
  const fastify = new fastifyOtel.FastifyOtelInstrumentation({
    // Per-hook spans cost more than the request they describe; the handler's span is the
    // request's.
    instrumentHooks: false,
    instrumentHandler: false,
    requestHook: (span, request) => {
      const operation = operationOf(request);
      span.updateName(`${request.method} ${request.routeOptions.url ?? 'unmatched'} ${operation}`);
      span.setAttribute('openapi.operation_id', operation);
      request.traceId = span.spanContext().traceId;
    },
  });
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME ?? 'animal-store-api',
    spanProcessors: [processor],
    // Attribute values of at most 256 characters unless OTEL_*ATTRIBUTE_VALUE_LENGTH_LIMIT says
    // otherwise: a SQL span names its statement, and its text (up to several kB for a batch
    // of reads) is cut there instead of being serialised whole into every span.
    ...(env.OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT || env.OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT ? {} : { spanLimits: { attributeValueLengthLimit: 256 } }),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      // SQL spans only inside a request's or a job's trace (not the pool's own connects and
      // checks on their own), without parameter values (enhancedDatabaseReporting off).
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false, ignoreConnectSpans: true }),
      fastify,
    ],
  });
  sdk.start();
  // pg is CommonJS: required here, after the SDK's hook, it is patched, and every later
  // `import pg from 'pg'` gets this same, patched module.
  createRequire(import.meta.url)('pg');
  useTracer();
  const bounded = processor;
  return {
    fastifyPlugin: fastify.plugin(),
    droppedSpans: () => ({ queueFull: bounded.queueFull, exportFailed: bounded.exportFailed }),
    shutdown: () => sdk.shutdown(),
  };
}
