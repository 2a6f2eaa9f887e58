import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Tracer } from '@opentelemetry/api';
import { systemClock } from '@retryd/core';
import type { Logger } from 'pino';
import { buildApp } from '../api/build-app.js';
import { DeadLetterReason } from '../domain/dead-letter-reason.js';
import { Engine } from '../engine/engine.js';
import { GrpcDispatcher } from '../engine/grpc-dispatcher.js';
import { HttpDispatcher } from '../engine/http-dispatcher.js';
import { SchemeDispatcher } from '../engine/scheme-dispatcher.js';
import { TargetProtection } from '../protection/target-protection.js';
import { ServiceMetrics } from '../metrics/service-metrics.js';
import { DEFAULT_TARGET_SETTINGS, PROTECTIONS_OFF } from '../protection/target-settings.js';
import { parseAllowList, TargetGuard } from '../security/target-guard.js';
import { ApiKeys } from '../access/api-keys.js';
import { Authenticator } from '../access/authenticator.js';
import { TenantLimiter } from '../access/tenant-limiter.js';
import type { Store } from '../store/store.js';
import type { AttemptLog, RetryTask } from '../domain/task.js';
import { openStore, parseStoreUrl } from './open-store.js';
import { warnsAtStart, type RedisDurabilityMode } from '../backends/redis/durability.js';
import { parseKeyring } from '../secrets/encryption-keys.js';
import { urlOrigin } from '../secrets/redaction.js';
import { parseCredentialHeaderNames } from '../secrets/credential-header-names.js';
import { chainSecretProviders, checkSecretVariables, envSecretProvider, fileSecretProvider, type SecretProvider } from '../secrets/secret-provider.js';
import { TaskSecrets } from '../secrets/task-secrets.js';
import { CEILING_FIELDS, CeilingBook } from '../policies/policy-ceilings.js';
import { CallbackRelay } from '../callbacks/callback-relay.js';
import { Purger } from '../retention/purger.js';
import { RetentionBook } from '../retention/retention-book.js';
import { statusReader, TaskWaiters } from '../tasks/task-waiters.js';
import { TaskService } from '../tasks/task-service.js';
import { allowedHostsOf, ConfigError, connectionLimitsOf, DEFAULT_CONNECT_TIMEOUT_MS, type RetrydConfig } from './retryd-config.js';
import { logAttempt, logEngineError } from './task-log-lines.js';
import { protectionEventLogger } from './protection-log-lines.js';
import { startTracing, type ServiceTracing } from './tracing.js';
import { serviceTestHooks } from './test-hooks.js';
import { bootstrapAdminKey, bootstrapKeyOf, type BootstrapOutcome } from './bootstrap-admin-key.js';
import { buildMetricsApp } from '../metrics/metrics-app.js';
import { checkMetricsPort, listenOn, portOf, urlOf } from './listen-on.js';

/** A running service: its address, and how to stop it. */
export interface RunningRetryd extends AsyncDisposable {
  /** `http://host:port` the API listens on (empty for `--role worker`). */
  url: string;
  /** `http://host:port` of `/metrics` and the health probes with `--metrics-port`; absent without it. */
  metricsUrl?: string;
  /**
   * Graceful stop: the API stops accepting, the engine stops claiming and lets in-flight calls finish within
   * `graceMs`, hands back the leases of anything unfinished, then the store closes.
   */
  close(): Promise<void>;
}

/** What a service is started with besides its configuration. */
export interface StartRetrydOptions {
  /**
   * The tracer of the attempt spans. Default: from the environment, an OTLP/HTTP exporter when
   * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, else no tracing.
   */
  tracer?: Tracer;
}

/**
 * Starts the HTTP API and the workers in one process on the configured store — what `retryd serve` runs.
 * One log line at start, one at stop, one per dead-lettered task, and at debug level one per attempt; every line
 * about a task names its `taskId`, `attempt` and `target` (the origin); never headers, bodies, nor a target's path
 * or query.
 */
export async function startRetryd(config: RetrydConfig, logger: Logger, options: StartRetrydOptions = {}): Promise<RunningRetryd> {
  if (config.visibilityTimeoutMs !== undefined && config.visibilityTimeoutMs <= config.attemptTimeoutMs) {
    throw new ConfigError(
      `--visibility-timeout must be greater than --attempt-timeout (${config.attemptTimeoutMs}), got ${config.visibilityTimeoutMs}`,
    );
  }
  // Sub-partitions are Redis hash tags: on another store the flag would silently do nothing.
  if (config.redisSubPartitions !== undefined && config.redisSubPartitions !== 1 && parseStoreUrl(config.store).kind !== 'redis') {
    throw new ConfigError(`--redis-sub-partitions applies to a Redis store (redis://, rediss://, redis+cluster://) only; --store is not one`);
  }
  // A connect timeout longer than the attempt's could never fire: the attempt's timer bounds the connect too.
  if (config.connectTimeoutMs !== undefined && config.connectTimeoutMs > config.attemptTimeoutMs) {
    throw new ConfigError(`--connect-timeout must be at most --attempt-timeout (${config.attemptTimeoutMs}), got ${config.connectTimeoutMs}`);
  }
  const connectTimeoutMs = config.connectTimeoutMs ?? Math.min(DEFAULT_CONNECT_TIMEOUT_MS, config.attemptTimeoutMs);
  const allow = parseAllowList(config.allowTargets);
  const connections = connectionLimitsOf(config);
  const allowedHosts = allowedHostsOf(config);
  // Test-only hooks of the chaos suite (a clock jump, a stop at an attempt's fault point), installed only by its
  // test-only entry (test-faults-entry.ts, not in the published package): none in production.
  const { clock, faultHook } = serviceTestHooks();
  // Checked before the store opens: a bad key or secrets file is the operator's to fix, told in one line.
  const provider = secretProviderOf(config);
  const secrets = taskSecretsOf(config, provider);
  // One guard for the check at creation and the one on every connection, so the two cannot disagree.
  const targetGuard = new TargetGuard({ allow });
  const grpcCa = readGrpcCa(config.grpcCaFile);
  const bootstrapKey = bootstrapKeyOf({ key: config.bootstrapAdminKey, keySha256: config.bootstrapAdminKeySha256 });
  const runsApi = config.role !== 'worker';
  const runsWorkers = config.role !== 'api';
  checkMetricsPort(config, runsApi);
  const { store, blobs } = await openStore(config.store, {
    synchronous: config.sqliteSync === 'normal' ? 'NORMAL' : 'FULL',
    cacheSizeKiB: config.sqliteCacheMiB * 1024,
    ...(config.redisSubPartitions === undefined ? {} : { redisSubPartitions: config.redisSubPartitions }),
    ...(config.blobs === undefined ? {} : { blobs: config.blobs }),
    // A networked store reconnects by itself; meanwhile the API answers 503 and the engine backs off. SQLite's
    // checkpointer, when its worker fails, leaves checkpoints to the commits again.
    onError: (error) => logger.warn({ event: 'store_error', err: error }, 'store error off the request path (a lost connection, a failed checkpoint)'),
  });
  // Loaded only when asked for: a service without an OTLP endpoint never loads the SDK.
  let tracing: ServiceTracing | undefined;
  if (options.tracer === undefined && runsWorkers) {
    try {
      tracing = await startTracing();
    } catch (error) {
      await store.close();
      await blobs.close?.();
      throw error;
    }
  }
  const tracer = options.tracer ?? tracing?.tracer;
  // Built before the engine it wakes: a gate that opens (a breaker closed by hand, a limit lifted) frees tasks at once.
  const protection = new TargetProtection({
    store,
    // The same provider as the tasks' secrets: a target's signing secrets are known where its tasks' are.
    secrets: provider,
    defaults: config.protection === 'off' ? PROTECTIONS_OFF : DEFAULT_TARGET_SETTINGS,
    maxRetryAfterMs: config.maxRetryAfterMs,
    ...(clock === undefined ? {} : { clock }),
    onEvent: protectionEventLogger(logger, () => (clock ?? systemClock).now()),
    onError: (error) => logger.warn({ event: 'protection_error', err: error }, 'target protection could not read or write its state'),
    wake: () => {
      if (runsWorkers) engine.wake();
    },
  });
  // One registry per service, not prom-client's global one: a process may run several services (the tests do).
  const metrics = new ServiceMetrics({
    store,
    targets: protection,
    load: (): { inFlight: number } => engine.load,
    onError: (error) => logger.warn({ event: 'metrics_error', err: error }, 'a metrics scrape could not read the store (tasks by status, or the oldest pending tasks)'),
  });
  // One book for the engine and the API: an override is read once, and a change seen by both at once.
  const retention = new RetentionBook({
    state: store.targetState,
    defaults: config.retention,
    now: () => (clock ?? systemClock).now(),
    onInvalid: (error) => logger.warn({ event: 'retention_invalid', err: error }, error.message),
  });
  // Made once the API is up (below); the engine nudges it when a task with a callback ends.
  let relay: CallbackRelay | undefined = undefined;
  /** A task this process ended (its engine, or a cancel through its API): its waiters answered, its callback relayed now. */
  const taskEnded = (task: RetryTask) => {
    waiters.ended(task.tenantId, task.taskId);
    if (task.callback !== null) relay?.nudge();
  };
  const engine = new Engine({
    store,
    retention,
    protection,
    metrics,
    loadBody: (ref) => blobs.get(ref),
    secrets,
    concurrency: config.concurrency,
    ...(config.maxInFlightPerTenant === undefined ? {} : { maxInFlightPerTenant: config.maxInFlightPerTenant }),
    ...(config.maxInFlightPerTarget === undefined ? {} : { maxInFlightPerTarget: config.maxInFlightPerTarget }),
    maxRetryAfterMs: config.maxRetryAfterMs,
    attemptTimeoutMs: config.attemptTimeoutMs,
    connectTimeoutMs,
    targetGuard,
    // HTTP and gRPC targets, each through its own dispatcher, checked by the same guard.
    dispatcher: new SchemeDispatcher({
      http: new HttpDispatcher({
        loadBody: (ref) => blobs.get(ref),
        attemptTimeoutMs: config.attemptTimeoutMs,
        connectTimeoutMs,
        connectionsPerOrigin: config.concurrency,
        targetGuard,
        clock: clock ?? systemClock,
      }),
      grpc: new GrpcDispatcher({
        loadBody: (ref) => blobs.get(ref),
        attemptTimeoutMs: config.attemptTimeoutMs,
        targetGuard,
        extraCa: grpcCa,
        clock: clock ?? systemClock,
      }),
    }),
    ...(clock === undefined ? {} : { clock }),
    ...(faultHook === undefined ? {} : { faultHook }),
    ...(config.visibilityTimeoutMs === undefined ? {} : { leaseMs: config.visibilityTimeoutMs }),
    ...(tracer === undefined ? {} : { tracer }),
    // The engine rebuilds the task for this hook: only when the line would be written.
    ...(logger.isLevelEnabled('debug') ? { onAttempt: (task: RetryTask, attempt: AttemptLog) => logAttempt(logger, task, attempt) } : {}),
    onDeadLetter: (task) => {
      const blocked = task.deadLetterReason === DeadLetterReason.TARGET_BLOCKED;
      logger.warn(
        {
          event: 'dead_letter',
          tenantId: task.tenantId,
          taskId: task.taskId,
          attempt: task.attemptNumber,
          status: task.status,
          reason: task.deadLetterReason,
          attempts: task.attemptNumber,
          lastResponseStatus: task.lastResponseStatus,
          // The origin alone: webhook paths and queries often carry a token.
          target: urlOrigin(task.targetUrl),
          // The guard's sentence names only the host, its address and the rule: safe to log, and the line's "why".
          ...(blocked ? { error: task.lastError } : {}),
        },
        blocked ? `task dead-lettered, target blocked: ${task.lastError ?? ''}` : 'task dead-lettered',
      );
    },
    onTaskEnded: (task) => taskEnded(task),
    onError: (error, context) => logEngineError(logger, error, context),
  });
  const taskService = new TaskService({
    store,
    blobs,
    retention,
    ceilings: new CeilingBook({ state: store.targetState, service: config.ceilings, now: () => Math.floor((clock ?? systemClock).now()) }),
    targetGuard,
    secrets,
    // An API-only instance wakes the workers of other instances through the store (LISTEN/NOTIFY, pub/sub).
    wake: (dueAt) => {
      if (runsWorkers) engine.wake(dueAt);
    },
    onPolicyChanged: (tenantId, policyId) => engine.invalidatePolicy(tenantId, policyId),
    onTaskEnded: taskEnded,
    ...(clock === undefined ? {} : { clock }),
    // Tasks due at once go straight to this process's engine when it has room: one commit fewer before dispatch.
    ...(runsWorkers ? { handOff: engine } : {}),
  });
  // Long polls (GET /retry-tasks/{taskId}?waitMs=): told at once when this process's engine ends a task.
  const waiters = new TaskWaiters({ readStatus: statusReader(taskService), clock: clock ?? systemClock });
  const verbose = logger.isLevelEnabled('debug');
  const access = {
    authenticator: new Authenticator(store),
    limiter: new TenantLimiter(store, {
      defaults: { requestsPerSecond: config.tenantRequestsPerSecond, maxPendingTasks: config.tenantMaxPendingTasks },
    }),
    apiKeys: new ApiKeys(store),
    openHosts: allowedHosts,
  };
  let auth: AuthMode = 'api-keys';
  let app: FastifyInstance | undefined;
  let metricsApp: FastifyInstance | undefined;
  const servesMetricsPort = config.metricsPort !== undefined;
  try {
    // Before the auth mode is decided: a fresh deployment given its first key may listen beyond loopback at once.
    if (bootstrapKey !== undefined) logBootstrap(logger, await bootstrapAdminKey(store, bootstrapKey, (clock ?? systemClock).now()));
    // Decided before the app is built: a service that may not listen where it was told must not start at all.
    if (runsApi || servesMetricsPort) auth = await authModeOf(config, store);
    const logs = verbose ? { logger } : {};
    app = runsApi
      ? await buildApp({ taskService, store, targetControl: protection, access, metrics, metricsRoute: !servesMetricsPort, waiters, connections, ...logs })
      : undefined;
    metricsApp = servesMetricsPort ? await buildMetricsApp({ store, metrics, access, connections, ...logs }) : undefined;
    await taskService.ensureDefaultPolicy();
    if (app) metrics.history.start();
    if (app) await listenOn(app, '--port', config.port, config.host);
    if (metricsApp) await listenOn(metricsApp, '--metrics-port', config.metricsPort ?? 0, config.host);
  } catch (error) {
    await metricsApp?.close();
    await app?.close();
    metrics.history.close();
    protection.close();
    await taskService.close();
    await store.close();
    await blobs.close?.();
    await tracing?.shutdown();
    throw error;
  }
  let stopListening: (() => void) | undefined;
  // Where workers run: one instance at a time deletes what passed its retention (the purge lease).
  const purger = runsWorkers
    ? new Purger({
        store,
        blobs,
        clock: clock ?? systemClock,
        owner: engine.workerId,
        intervalMs: config.purgeIntervalMs,
        onPurged: (tasks) => metrics.tasksPurged(tasks),
        report: (error, context) => logger.warn({ event: 'purge_error', err: error, ...context }, 'the purge of expired tasks failed; it tries again at its next interval'),
      })
    : undefined;
  // Where workers run: the callbacks owed by ended tasks become tasks of their own (every such instance; made once).
  relay = runsWorkers
    ? new CallbackRelay({
        store,
        enqueue: (tenantId, inputs, context) => taskService.enqueueBatch(tenantId, inputs, context),
        clock: clock ?? systemClock,
        onRefused: (owed, error) =>
          logger.warn(
            { event: 'callback_refused', tenantId: owed.tenantId, taskId: owed.taskId, code: error.code, err: error },
            `the callback of an ended task cannot be made and is dropped: ${error.message}`,
          ),
        report: (error, context) => logger.warn({ event: 'callback_relay_error', err: error, ...context }, 'callbacks owed could not be relayed; the relay tries again at its next look'),
      })
    : undefined;
  if (runsWorkers) {
    await engine.start();
    stopListening = store.onDue?.((dueAt) => engine.wake(dueAt));
    purger?.start();
    relay?.start();
  }
  const port = app === undefined ? config.port : portOf(app, config.port);
  const url = runsApi ? urlOf(config.host, port) : '';
  const metricsUrl = metricsApp === undefined ? undefined : urlOf(config.host, portOf(metricsApp, config.metricsPort ?? 0));
  logger.info(
    {
      event: 'start',
      role: config.role,
      ...(runsApi ? { url } : {}),
      ...(metricsUrl === undefined ? {} : { metricsUrl }),
      // The name on this instance's leases and in the attempt log (`workerId`), to tell instances apart.
      ...(runsWorkers ? { workerId: engine.workerId } : {}),
      store: redactUrl(config.store),
      storeKind: store.kind,
      ...(config.blobs === undefined ? {} : { blobs: redactUrl(config.blobs) }),
      ...(durabilityOf(store) === undefined ? {} : { storeDurability: durabilityOf(store) }),
      concurrency: config.concurrency,
      ...(runsWorkers ? engine.slotBounds : {}),
      maxRetryAfterMs: config.maxRetryAfterMs,
      attemptTimeoutMs: config.attemptTimeoutMs,
      connectTimeoutMs,
      visibilityTimeoutMs: config.visibilityTimeoutMs ?? config.attemptTimeoutMs + 30_000,
      graceMs: config.graceMs,
      sqliteSync: config.sqliteSync,
      ...(store.kind === 'sqlite' ? { sqliteCacheMiB: config.sqliteCacheMiB } : {}),
      ...(store.kind === 'redis' ? { redisSubPartitions: config.redisSubPartitions ?? 1 } : {}),
      allowTargets: allow.map((a) => a.cidr),
      protection: config.protection,
      // Where attempt spans go: `otlp` (the SDK, from OTEL_EXPORTER_OTLP_*), `tracer` (one given by the embedder) or `off`.
      ...(runsWorkers ? { tracing: tracing !== undefined ? 'otlp' : options.tracer !== undefined ? 'tracer' : 'off' } : {}),
      // Which keys, never the keys: the ids, the first sealing new secrets, every one opening them.
      encryptionKeyIds: config.encryptionKey === undefined ? [] : [...parseKeyring(config.encryptionKey).byId.keys()],
      ...(config.secretsFile === undefined ? {} : { secretsFile: config.secretsFile }),
      ...(config.credentialHeaders === undefined || config.credentialHeaders.length === 0 ? {} : { credentialHeaders: config.credentialHeaders }),
      ...(runsApi || servesMetricsPort ? { auth } : {}),
      ...(runsApi ? { connections, ...(allowedHosts.length === 0 ? {} : { allowedHosts }) } : {}),
      ...(config.tenantRequestsPerSecond === null ? {} : { tenantRequestsPerSecond: config.tenantRequestsPerSecond }),
      ...(config.tenantMaxPendingTasks === null ? {} : { tenantMaxPendingTasks: config.tenantMaxPendingTasks }),
      retention: config.retention,
      ...(CEILING_FIELDS.some((f) => config.ceilings[f] !== null) ? { policyCeilings: config.ceilings } : {}),
    },
    'retryd started',
  );
  const redisMode = (store as { durabilityMode?: unknown }).durabilityMode;
  if (typeof redisMode === 'string' && warnsAtStart(redisMode as RedisDurabilityMode)) {
    logger.warn(
      { event: 'store_not_durable', storeDurability: durabilityOf(store) },
      `the Redis this service writes to may lose acknowledged tasks: ${durabilityOf(store) ?? redisMode}. ` +
        'A retry service exists to keep them: run Redis with appendonly yes and appendfsync always (nothing lost) or everysec (about a second at worst)',
    );
  }
  // A worker's only server is its metrics port: the lines name whichever this instance listens on.
  const served = runsApi ? url : (metricsUrl ?? '');
  if (auth === 'open') {
    const what = runsApi ? 'the API answers' : '/metrics answers';
    logger.info({ event: 'auth_open', url: served }, `no API key yet: ${what} anyone on loopback as the default tenant; create one with retryd keys create`);
  } else if (auth === 'upstream') {
    logger.warn(
      { event: 'auth_done_upstream', url: served },
      `--auth-done-upstream: NO AUTHENTICATION HERE. Every request to ${served} acts for the default tenant with every right; only a proxy in front that authenticates every request makes this safe. ` +
        'Requests answer 421 HOST_NOT_ALLOWED unless the proxy sends a Host of localhost, a loopback address or a name given to --allowed-hosts',
    );
  }

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const started = Date.now();
      await app?.close();
      await metricsApp?.close();
      metrics.history.close();
      stopListening?.();
      await purger?.stop();
      await relay?.stop();
      if (runsWorkers) await engine.stop({ graceMs: config.graceMs });
      protection.close();
      await protection.whenIdle();
      await taskService.close();
      await store.close();
      await blobs.close?.();
      // After the engine: the last attempts' spans are ended, and exported now.
      await tracing?.shutdown().catch((error: unknown) => logger.warn({ event: 'tracing_error', err: error }, 'spans could not be exported at stop'));
      logger.info({ event: 'stop', durationMs: Date.now() - started }, 'retryd stopped');
    })());
  return { url, ...(metricsUrl === undefined ? {} : { metricsUrl }), close, [Symbol.asyncDispose]: close };
}

/** The line of the bootstrap key: its id only, which is public; the key is not. */
function logBootstrap(logger: Logger, { outcome, keyId }: { outcome: BootstrapOutcome; keyId: string }): void {
  if (outcome === 'revoked') {
    logger.warn({ event: 'bootstrap_admin_key', outcome, keyId }, `RETRYD_BOOTSTRAP_ADMIN_KEY names API key ${keyId}, which was revoked: it stays revoked; unset the variable or set a new key`);
    return;
  }
  logger.info({ event: 'bootstrap_admin_key', outcome, keyId }, outcome === 'created' ? `created admin API key ${keyId} from RETRYD_BOOTSTRAP_ADMIN_KEY` : `admin API key ${keyId} of RETRYD_BOOTSTRAP_ADMIN_KEY is present`);
}

/** How requests are authenticated: API keys, none (loopback, no key yet), or by a proxy in front. */
export type AuthMode = 'api-keys' | 'open' | 'upstream';

/** Whether `host` names only this machine: a service without keys may listen there and nowhere else. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare) || bare === '::ffff:127.0.0.1';
}

/**
 * How this start authenticates, refusing to listen beyond loopback with no API key unless a proxy in front vouches
 * for every request (`--auth-done-upstream`).
 */
async function authModeOf(config: RetrydConfig, store: Store): Promise<AuthMode> {
  if (await store.access.hasActiveApiKey()) return 'api-keys';
  if (isLoopbackHost(config.host)) return 'open';
  if (config.authDoneUpstream) return 'upstream';
  throw new ConfigError(
    `--host ${config.host} serves beyond loopback, and the store holds no API key: anyone who reaches it could read and ` +
      'enqueue every task. Create a key first (retryd keys create --tenant default --scope admin --name ops, or set RETRYD_BOOTSTRAP_ADMIN_KEY), or pass ' +
      '--auth-done-upstream if a proxy in front authenticates every request',
  );
}

/**
 * The secrets of `config`: its providers (the secrets file first, then the `RETRYD_TENANT_SECRET_<TENANT>__<NAME>`,
 * `RETRYD_SECRET_<NAME>` and `RETRYD_SHARED_SECRET_<NAME>` variables), each variable checked to serve one tenant.
 */
function secretProviderOf(config: RetrydConfig): SecretProvider {
  checkSecretVariables(process.env);
  const env = envSecretProvider();
  return config.secretsFile === undefined ? env : chainSecretProviders(fileSecretProvider(config.secretsFile), env);
}

function taskSecretsOf(config: RetrydConfig, provider: SecretProvider): TaskSecrets {
  const keyring = config.encryptionKey === undefined ? undefined : parseKeyring(config.encryptionKey);
  return new TaskSecrets({ keyring, provider, credentialHeaders: parseCredentialHeaderNames(config.credentialHeaders) });
}

/** A store's own account of its durability (Redis: AOF settings), when it gives one. */
function durabilityOf(store: object): string | undefined {
  const describe = (store as { durability?: unknown }).durability;
  return typeof describe === 'function' ? String(describe.call(store)) : undefined;
}

/** A store or target URL without its password or query (which may carry tokens), for logs. */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    url.search = '';
    return url.toString();
  } catch {
    return raw.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/** The PEM file of `--grpc-ca-file`, read once at start; a file that cannot be read stops the start with its path. */
function readGrpcCa(path: string | undefined): Buffer | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path);
  } catch (error) {
    throw new ConfigError(`--grpc-ca-file: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
