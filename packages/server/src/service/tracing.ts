import type { Tracer } from '@opentelemetry/api';

/** The service's tracer and how to flush and stop what exports its spans. */
export interface ServiceTracing {
  tracer: Tracer;
  /** Exports the spans still buffered, then stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Whether the environment asks for traces: the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set (and `OTEL_SDK_DISABLED` is not `true`).
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

/**
 * Starts exporting spans over OTLP/HTTP when the environment asks for it (see {@link tracingRequested}), else
 * resolves to undefined. The SDK is loaded only then: a service without an endpoint never loads it. The exporter reads
 * its own settings (`OTEL_EXPORTER_OTLP_*`: endpoint, headers, timeout), the sampler `OTEL_TRACES_SAMPLER` (default
 * parent-based, always on), the resource `OTEL_SERVICE_NAME` (default `retryd`) and `OTEL_RESOURCE_ATTRIBUTES`.
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<ServiceTracing | undefined> {
  if (!tracingRequested(env)) return undefined;
  const { startOtlpTracing } = await import('./otlp-tracing.js');
  return startOtlpTracing();
}
