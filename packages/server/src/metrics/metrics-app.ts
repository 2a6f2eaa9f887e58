import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { installAccessControl, type AccessControl } from '../access/access-hook.js';
import { clientErrorHandler, frameworkErrorHandler, installProblemHandlers } from '../api/problem-handler.js';
import { registerHealthRoutes } from '../api/routes/health-routes.js';
import { installConnectionLimits, serverOptionsOf, type ConnectionLimits } from '../api/connection-limits.js';
import { SHARED_SCHEMAS } from '../api/schemas.js';
import type { Store } from '../store/store.js';
import { registerMetricsRoute, type MetricsSource } from './metrics-route.js';

/** Options of {@link buildMetricsApp}. */
export interface MetricsAppOptions {
  /** Pinged by `/readyz`. */
  store: Pick<Store, 'kind' | 'ping'>;
  /** Served at `GET /metrics`. */
  metrics: MetricsSource;
  /** The same keys as the API's: a metrics or admin key of the default tenant reads `/metrics`. */
  access: AccessControl;
  /** Deadlines for clients and the most connections held at once: the API's. */
  connections: ConnectionLimits;
  /** One line per request, as the API writes them. Default: none. */
  logger?: FastifyBaseLogger;
  /** A `/readyz` store ping slower than this is a failure. Default 2,000 ms. */
  readyTimeoutMs?: number;
}

/**
 * The server of `--metrics-port`: `GET /metrics` (a metrics or admin key of the default tenant, as on the API's port),
 * `/healthz` and `/readyz`, and nothing else. It is how a `--role worker` instance, which has no API, is scraped and
 * probed, and how an `api` or `all` instance keeps its scrape off the API's port (a network policy may then open the
 * one to Prometheus and the other to callers). No body is read on it: every route is a GET.
 */
export async function buildMetricsApp(options: MetricsAppOptions): Promise<FastifyInstance> {
  const bodyLimit = 1024;
  const app = Fastify({
    ...serverOptionsOf(options.connections),
    ...(options.logger === undefined ? { logger: false } : { loggerInstance: options.logger }),
    bodyLimit,
    frameworkErrors: frameworkErrorHandler(bodyLimit),
    clientErrorHandler,
  });
  installConnectionLimits(app, options.connections);
  // The probes' answers are described with the API's shared schemas (their problems are `Problem`s).
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  installProblemHandlers(app, bodyLimit);
  installAccessControl(app, options.access);
  registerHealthRoutes(app, { store: options.store, readyTimeoutMs: options.readyTimeoutMs ?? 2_000 });
  registerMetricsRoute(app, options.metrics);
  await app.ready();
  return app;
}
