import type { FastifyInstance } from 'fastify';
import type { ConsoleHistory } from './history/service-history.js';
import type { ConsoleStats } from './service-metrics.js';

/** What `GET /metrics` serves (the service's is `ServiceMetrics`). */
export interface MetricsSource {
  /** The `Content-Type` of the text, e.g. `text/plain; version=0.0.4; charset=utf-8`. */
  readonly contentType: string;
  /** Every metric in the Prometheus text format. */
  scrape(): Promise<string>;
  /** The web console's overview numbers, served at `GET /console/stats`; absent, that route is not registered. */
  stats?(): Promise<ConsoleStats>;
  /** The console's charts' last hour, served at `GET /console/history`; absent, that route is not registered. */
  readonly history?: { read(targetKey?: string): Promise<ConsoleHistory> };
}

/**
 * `GET /metrics`, the Prometheus scrape. Its data spans tenants, so it needs a metrics key (a scraper's, which reads
 * nothing else) or an admin key of the default tenant; anyone while the service has no key, on loopback. Left out of
 * `/openapi.json`: it is not JSON, and its format is Prometheus's (docs/server.md lists the metrics).
 */
export function registerMetricsRoute(app: FastifyInstance, metrics: MetricsSource): void {
  app.get('/metrics', { schema: { hide: true }, config: { scope: 'metrics' } }, async (_request, reply) => {
    const text = await metrics.scrape();
    return reply.type(metrics.contentType).send(text);
  });
}
