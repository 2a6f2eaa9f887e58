import type { Logger } from 'pino';
import { buildApp } from '../api/build-app.js';
import { Engine } from '../engine/engine.js';
import { parseAllowList, TargetGuard } from '../security/target-guard.js';
import { openStore } from '../store/open-store.js';
import { TaskService } from '../tasks/task-service.js';
import { ConfigError, type RetrydConfig } from './retryd-config.js';

/** A running service: its address, and how to stop it. */
export interface RunningRetryd extends AsyncDisposable {
  /** `http://host:port` the API listens on. */
  url: string;
  /**
   * Graceful stop: the API stops accepting, the engine stops claiming and lets in-flight calls finish within
   * `graceMs`, hands back the leases of anything unfinished, then the store closes.
   */
  close(): Promise<void>;
}

/**
 * Starts the HTTP API and the workers in one process on the configured store — what `retryd serve` runs.
 * One log line at start, one at stop, one per dead-lettered task; never headers or bodies.
 */
export async function startRetryd(config: RetrydConfig, logger: Logger): Promise<RunningRetryd> {
  if (config.visibilityTimeoutMs !== undefined && config.visibilityTimeoutMs <= config.attemptTimeoutMs) {
    throw new ConfigError(
      `--visibility-timeout must be greater than --attempt-timeout (${config.attemptTimeoutMs}), got ${config.visibilityTimeoutMs}`,
    );
  }
  const allow = parseAllowList(config.allowTargets);
  const { store, blobs } = await openStore(config.store, { synchronous: config.sqliteSync === 'normal' ? 'NORMAL' : 'FULL' });
  const engine = new Engine({
    store,
    loadBody: (ref) => blobs.get(ref),
    concurrency: config.concurrency,
    attemptTimeoutMs: config.attemptTimeoutMs,
    ...(config.visibilityTimeoutMs === undefined ? {} : { leaseMs: config.visibilityTimeoutMs }),
    onDeadLetter: (task) =>
      logger.warn(
        {
          event: 'dead_letter',
          tenantId: task.tenantId,
          taskId: task.taskId,
          status: task.status,
          reason: task.deadLetterReason,
          attempts: task.attemptNumber,
          lastResponseStatus: task.lastResponseStatus,
          target: redactUrl(task.targetUrl),
        },
        'task dead-lettered',
      ),
    onError: (error, context) => logger.error({ event: 'engine_error', err: error, context }, 'engine error'),
  });
  const taskService = new TaskService({
    store,
    blobs,
    targetGuard: new TargetGuard({ allow }),
    wake: () => engine.wake(),
    onPolicyChanged: (tenantId, policyId) => engine.invalidatePolicy(tenantId, policyId),
  });
  const verbose = logger.isLevelEnabled('debug');
  const app = await buildApp({ taskService, store, ...(verbose ? { logger } : {}) });
  try {
    await taskService.ensureDefaultPolicy();
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app.close();
    await taskService.close();
    await store.close();
    throw error;
  }
  await engine.start();
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info(
    {
      event: 'start',
      url,
      store: redactUrl(config.store),
      storeKind: store.kind,
      concurrency: config.concurrency,
      attemptTimeoutMs: config.attemptTimeoutMs,
      visibilityTimeoutMs: config.visibilityTimeoutMs ?? config.attemptTimeoutMs + 30_000,
      graceMs: config.graceMs,
      sqliteSync: config.sqliteSync,
      allowTargets: allow.map((a) => a.cidr),
    },
    'retryd started',
  );

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const started = Date.now();
      await app.close();
      await engine.stop({ graceMs: config.graceMs });
      await taskService.close();
      await store.close();
      logger.info({ event: 'stop', durationMs: Date.now() - started }, 'retryd stopped');
    })());
  return { url, close, [Symbol.asyncDispose]: close };
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
