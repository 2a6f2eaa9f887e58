import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ServiceTracing } from './tracing.js';

/**
 * The OpenTelemetry SDK with an OTLP/HTTP exporter, batching spans. Imported only by `startTracing`, and only when an
 * endpoint is configured. Not registered as the global provider: retryd passes its tracer to the engine, and leaves
 * the process's globals to whoever embeds it.
 */
export function startOtlpTracing(): ServiceTracing {
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override the default name.
  const resource = resourceFromAttributes({ 'service.name': 'retryd' }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  return { tracer: provider.getTracer('retryd'), shutdown: () => provider.shutdown() };
}
