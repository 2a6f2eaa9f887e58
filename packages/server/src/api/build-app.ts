import fastifySwagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import { DEFAULT_TENANT } from '../domain/task.js';
import type { TargetControl } from '../protection/target-control.js';
import type { Store } from '../store/store.js';
import type { TaskService } from '../tasks/task-service.js';
import { statusReader, TaskWaiters } from '../tasks/task-waiters.js';
import { systemClock } from '@retryd/core';
import { MAX_REQUEST_DEPTH, fieldOfPath, findTooDeep } from '../domain/json-nesting.js';
import { PROBLEM_CONTENT_TYPE, RetrydError, problemOf } from '../domain/errors.js';
import { jsonBodyText } from './json-body.js';
import {
  MAX_PATH_PARAM_LENGTH,
  clientErrorHandler,
  frameworkErrorHandler,
  installProblemHandlers,
} from './problem-handler.js';
import { installAccessControl, tenantOfRequest, type AccessControl } from '../access/access-hook.js';
import type { ApiKeys } from '../access/api-keys.js';
import { API_KEY_SCHEMAS, registerApiKeyRoutes } from './routes/api-key-routes.js';
import { registerConsoleRoutes } from './routes/console-routes.js';
import { registerHealthRoutes } from './routes/health-routes.js';
import { registerMetricsRoute, type MetricsSource } from '../metrics/metrics-route.js';
import { registerPolicyRoutes } from './routes/policy-routes.js';
import { registerRetentionRoutes, RETENTION_SCHEMAS } from './routes/retention-routes.js';
import { registerRescheduleRoutes, RESCHEDULE_SCHEMAS } from './routes/reschedule-routes.js';
import { registerTargetRoutes } from './routes/target-routes.js';
import { registerTaskRoutes } from './routes/task-routes.js';
import { BULK_TASK_SCHEMAS, registerBulkTaskRoutes } from './routes/bulk-task-routes.js';
import { SHARED_SCHEMAS } from './schemas.js';
import { withTaskCallbacks } from './task-callbacks-document.js';
import { withCommonProblems, type OpenApiDocument } from './common-problems.js';
import { TARGET_SCHEMAS } from './target-schemas.js';
import { connectionLimitsProblem, defaultConnectionLimits, installConnectionLimits, serverOptionsOf, type ConnectionLimits } from './connection-limits.js';
import { DEFAULT_MAX_PAGE_BYTES } from './bounded-page.js';
import { registerDocsRoutes } from './routes/docs-routes.js';
import { installCompression } from './compression.js';

/** How long a stopping service lets the requests in progress end before it closes every connection: 2 s. */
export const CLOSE_DRAIN_MS = 2_000;

/** Largest request body accepted: 10 MiB. A larger one gets 413 PAYLOAD_TOO_LARGE. */
export const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024;

/** The problem of a body nested deeper than {@link MAX_REQUEST_DEPTH}, naming where (the first levels of the path). */
function tooDeepError(path: (string | number)[]): RetrydError {
  // Up to the last member name among the first levels: `tasks[3].body`, `body`, `breaker`, never a run of `[0]`s.
  const head = path.slice(0, 3);
  const named = head.reduce<number>((last, part, i) => (typeof part === 'string' ? i : last), -1);
  const field = fieldOfPath(head.slice(0, named + 1)) || 'body';
  const rule = `nested at most ${MAX_REQUEST_DEPTH} levels deep (objects and arrays, counted from the top of the request body)`;
  return RetrydError.validation([{ field, rule, message: `${field} must be ${rule}` }]);
}

/** What {@link buildApp} needs for access control. */
export interface AppAccess extends AccessControl {
  apiKeys: ApiKeys;
}

/** Options of {@link buildApp}. */
export interface BuildAppOptions {
  /** The application layer every route calls. */
  taskService: TaskService;
  /** Pinged by `/readyz`. */
  store: Pick<Store, 'kind' | 'ping'>;
  /**
   * Per-target protection, served under `/targets` (list, read, settings, breaker by hand). `retryd serve` always
   * passes it. Absent: the `/targets` routes are not registered (404 `NOT_FOUND`, and left out of `/openapi.json`)
   * rather than answering 503, which would tell clients to retry something that will never be there.
   */
  targetControl?: TargetControl;
  /**
   * A pino logger (fastify logs one line per request: method, URL, status, time; never headers or bodies,
   * which may hold the target's credentials). Default: no logging.
   */
  logger?: FastifyBaseLogger;
  /** Largest request body in bytes. Default {@link DEFAULT_BODY_LIMIT} (10 MiB). */
  bodyLimit?: number;
  /**
   * API keys, scopes and per-tenant limits (see `installAccessControl`), and the `/api-keys` routes. `retryd serve`
   * always passes them. Absent: every request acts for `DEFAULT_TENANT` with every right (embedding and tests).
   */
  access?: AppAccess;
  /**
   * Served at `GET /metrics` (a metrics or admin key of the default tenant); `retryd serve` passes its `ServiceMetrics`.
   * Absent: no such route.
   */
  metrics?: MetricsSource;
  /**
   * Whether `metrics` are served at `GET /metrics` here. Default true; false when a port of their own serves them
   * (`--metrics-port`, `buildMetricsApp`): the console's numbers still come from `metrics`.
   */
  metricsRoute?: boolean;
  /** A `/readyz` store ping slower than this is a failure. Default 2,000 ms. */
  readyTimeoutMs?: number;
  /** Serve the readable API docs at `/docs`. Default true. */
  docs?: boolean;
  /**
   * Serve the web console at `/` (its files from this folder, see `CONSOLE_DIR`) and, with `metrics` that have
   * `stats`, its numbers at `/console/stats`. Default: served, from `CONSOLE_DIR`; `false`: not served.
   */
  console?: { dir?: string } | false;
  /**
   * The `servers` URL of the OpenAPI document: where clients reach this service. Default `/`, relative: `/docs`
   * ("Try it out") and generators call the host that served the document, whatever port or proxy name it is on.
   */
  serverUrl?: string;
  /** Version shown in the OpenAPI document. Default `0.1.0`. */
  version?: string;
  /**
   * Deadlines for clients and the most connections held at once (see {@link ConnectionLimits}); each one not given
   * has its default (`defaultConnectionLimits`).
   */
  connections?: Partial<ConnectionLimits>;
  /**
   * Most bytes of one page of a listing: a page ends early, with a `nextCursor`, before the item that would take it
   * past this (it always holds one item). Default {@link DEFAULT_MAX_PAGE_BYTES} (4 MiB).
   */
  maxPageBytes?: number;
  /**
   * Requests waiting for tasks to end (`GET /retry-tasks/{taskId}?waitMs=`); `retryd serve` passes the one its engine
   * tells when a task ends. Default: one of its own, which notices an end by reading the task once a second.
   */
  waiters?: TaskWaiters;
}

/**
 * Builds the HTTP API (fastify 5): the routes of `/retry-tasks`, `/retry-policies`, `/dead-letters`, `/targets`
 * (with a `targetControl`), `/healthz`, `/readyz`, the OpenAPI document generated from the route schemas at
 * `/openapi.json`, and readable docs at `/docs`. Every error is `application/problem+json` naming the field and the rule.
 * JSON is the only request media type (anything else: 415).
 *
 * The app is not listening yet; the caller owns `listen()` and `close()`, and closes the store and the
 * task service after the app.
 *
 * @example
 * ```ts
 * const app = await buildApp({ taskService, store, logger });
 * await app.listen({ port: 8080, host: '127.0.0.1' });
 * ```
 */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const connections = { ...defaultConnectionLimits(), ...options.connections };
  const connectionsProblem = connectionLimitsProblem(connections);
  if (connectionsProblem !== undefined) throw new RangeError(`Expected valid connection limits: ${connectionsProblem}.`);
  const app = Fastify({
    ...serverOptionsOf(connections),
    ...(options.logger === undefined ? { logger: false } : { loggerInstance: options.logger }),
    bodyLimit,
    // Unknown query parameters are refused rather than dropped: `?stauts=FAILED` must not list everything.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true } },
    // fastify's own 503 while closing is not a problem body: the onRequest hook below answers instead.
    return503OnClosing: false,
    // A URL-encoded origin in /targets/{targetKey} runs past find-my-way's default of 100 characters; the route
    // schemas bound each parameter, and a segment past this one answers 414 as a problem.
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    frameworkErrors: frameworkErrorHandler(bodyLimit),
    clientErrorHandler,
  });
  installConnectionLimits(app, connections);

  // Lets a proxy or load balancer see a closing instance as unready while in-flight requests finish.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    // The server closes the connections that are idle when it stops, and waits for the others. A client can keep
    // one open with nothing left to answer on it (one that aborted a long poll does); after this drain every
    // connection is closed, so a stop ends in bounded time whatever the clients do.
    setTimeout(() => app.server.closeAllConnections(), CLOSE_DRAIN_MS).unref();
  });
  app.addHook('onRequest', async (request, reply) => {
    if (!closing) return;
    reply.code(503).type(PROBLEM_CONTENT_TYPE).header('connection', 'close').header('retry-after', '1');
    return reply.send(problemOf('SHUTTING_DOWN', 'this instance is shutting down; send the request again', undefined, request.url));
  });

  for (const schema of [...SHARED_SCHEMAS, ...TARGET_SCHEMAS, ...API_KEY_SCHEMAS, ...RETENTION_SCHEMAS, ...RESCHEDULE_SCHEMAS, ...BULK_TASK_SCHEMAS]) app.addSchema(schema);
  installProblemHandlers(app, bodyLimit);
  // Text bodies are never valid here: answering 415 says so more clearly than a JSON parse error would.
  app.removeContentTypeParser('text/plain');
  // fastify's JSON parser (with its prototype-poisoning guard), except that an empty body is no body: clients
  // that always send `content-type: application/json` can still DELETE or replay without a body.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const text = jsonBodyText(request.headers['content-type'], body);
    if (text instanceof RetrydError) return done(text, undefined);
    if (text === '') return done(null, undefined);
    // Checked on the text, before JSON.parse builds the nesting: code that walks JSON recursively overflows the stack
    // a few thousand levels down, which a body within the size limit holds many times over.
    const tooDeep = findTooDeep(text, MAX_REQUEST_DEPTH);
    if (tooDeep !== undefined) return done(tooDeepError(tooDeep), undefined);
    // The default parser answers through `done`; its return value carries nothing.
    void parseJson(request, text, done);
  });

  await installCompression(app);
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'retryd',
        description:
          'A durable retry service: it calls a target until it succeeds or the policy gives up, with the same ' +
          'Idempotency-Key on every attempt. Times are epoch milliseconds. Errors are RFC 9457 problem details. ' +
          'Every route but the health probes takes an API key (Authorization: Bearer rtd_…) once the service has one: ' +
          'without one, 401; with a key whose scope is too narrow, 403; over the tenant\'s limits, 429 with Retry-After.',
        version: options.version ?? '0.1.0',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      tags: [
        { name: 'tasks', description: 'Enqueue, inspect and cancel tasks' },
        { name: 'dead letters', description: 'Tasks that failed or ran out of budget, and replay' },
        { name: 'policies', description: 'Named retry policies' },
        { name: 'retention', description: 'How long finished tasks, their attempts and their idempotency keys are kept' },
        { name: 'targets', description: 'Per-target protection: breakers, rate and concurrency limits, adaptive throttling' },
        { name: 'api keys', description: "A tenant's API keys: create, list, revoke" },
        { name: 'health', description: 'Liveness and readiness' },
        { name: 'console', description: 'What the web console at / reads besides the routes above' },
      ],
      servers: [{ url: options.serverUrl ?? '/', description: 'The host that served this document' }],
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: rtd_…' } } },
      security: [{ apiKey: [] }],
    },
    transformObject: (documentObject) =>
      'openapiObject' in documentObject
        ? withTaskCallbacks(withCommonProblems(documentObject.openapiObject as OpenApiDocument))
        : documentObject.swaggerObject,
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `schema-${i}`) },
  });
  if (options.docs !== false) await registerDocsRoutes(app);

  const access = options.access;
  if (access !== undefined) installAccessControl(app, access);
  const tenantOf = access === undefined ? () => DEFAULT_TENANT : tenantOfRequest;
  const admitTasks =
    access === undefined ? undefined : (request: FastifyRequest, count: number) => access.limiter.admitTasks(tenantOfRequest(request), count);
  const waiters = options.waiters ?? new TaskWaiters({ readStatus: statusReader(options.taskService), clock: systemClock });
  // Before the server stops taking requests: a long poll answers now instead of holding the close up to its wait.
  app.addHook('preClose', (done) => {
    waiters.close();
    done();
  });
  const maxPageBytes = options.maxPageBytes ?? DEFAULT_MAX_PAGE_BYTES;
  const deps = { taskService: options.taskService, tenantOf, admitTasks, targetControl: options.targetControl, waiters, maxPageBytes };
  registerTaskRoutes(app, deps);
  registerBulkTaskRoutes(app, deps);
  registerRescheduleRoutes(app, deps);
  registerPolicyRoutes(app, deps);
  registerRetentionRoutes(app, deps);
  if (options.targetControl !== undefined) registerTargetRoutes(app, { targetControl: options.targetControl, tenantOf, maxPageBytes, storeKind: options.store.kind });
  if (access !== undefined) registerApiKeyRoutes(app, { apiKeys: access.apiKeys, authenticator: access.authenticator, tenantOf, maxPageBytes });
  registerHealthRoutes(app, { store: options.store, readyTimeoutMs: options.readyTimeoutMs ?? 2_000 });
  if (options.metrics !== undefined && options.metricsRoute !== false) registerMetricsRoute(app, options.metrics);
  if (options.console !== false) {
    const metrics = options.metrics;
    registerConsoleRoutes(app, {
      ...(options.console?.dir === undefined ? {} : { dir: options.console.dir }),
      ...(metrics?.stats === undefined ? {} : { stats: () => metrics.stats!() }),
      ...(metrics?.history === undefined ? {} : { history: (targetKey?: string) => metrics.history!.read(targetKey) }),
    });
  }
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
