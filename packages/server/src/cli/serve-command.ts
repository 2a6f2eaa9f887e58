import { Command, Option } from 'commander';
import { MAX_SUB_PARTITIONS } from '../backends/redis/sub-partitions.js';
import { MAX_POLICY_MS } from '@retryd/core';
import { BlobsUrlError } from '../blobs/s3-blobs-url.js';
import { InvalidAllowListError } from '../security/target-guard.js';
import { EncryptionKeyError } from '../secrets/encryption-keys.js';
import { SecretsFileError } from '../secrets/secret-provider.js';
import { StoreUrlError } from '../service/open-store.js';
import { createLogger } from '../service/logger.js';
import {
  ConfigError,
  DEFAULT_CONFIG,
  DEFAULT_CONNECT_TIMEOUT_MS,
  parseChoiceOption,
  parseIntegerOption,
  parseListOption,
  parsePeriodOption,
  parseRetentionOption,
  type ProtectionMode,
  type RetrydConfig,
  type RetrydRole,
} from '../service/retryd-config.js';

const int = (flag: string, min: number, max?: number) => (value: string) => parseIntegerOption(flag, value, min, max);

/** `retryd serve`: the HTTP API and the workers in one process. */
export function serveCommand(): Command {
  return new Command('serve')
    .description('Run the retryd service: the HTTP API and the workers in one process, or one of them (--role).')
    .addOption(new Option('--port <port>', 'HTTP port to listen on (0 picks a free one)').env('RETRYD_PORT').default(DEFAULT_CONFIG.port).argParser(int('--port', 0, 65535)))
    .addOption(
      new Option('--metrics-port <port>', 'a port of its own (on --host) for /metrics, /healthz and /readyz: how a --role worker instance is scraped; on api or all, /metrics moves there from --port (0 picks a free one)')
        .env('RETRYD_METRICS_PORT')
        .argParser(int('--metrics-port', 0, 65535)),
    )
    .addOption(new Option('--host <host>', 'interface to listen on; 0.0.0.0 serves every interface').env('RETRYD_HOST').default(DEFAULT_CONFIG.host))
    .addOption(
      new Option('--store <url>', 'where tasks live: sqlite:<file> (embedded, the default), postgres://…, redis://… or redis+cluster://host:port[,host:port…] (Redis Cluster seed nodes)')
        .env('RETRYD_STORE')
        .default(DEFAULT_CONFIG.store),
    )
    .addOption(
      new Option(
        '--blobs <url>',
        'where bodies over 64 KiB live: s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1&force_path_style=true ' +
          '(credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the AWS SDK default chain; lets callers enqueue by bodyRef). ' +
          "Default: the store's own (a directory beside SQLite, the PostgreSQL blobs table, Redis keys)",
      ).env('RETRYD_BLOBS'),
    )
    .addOption(
      new Option('--concurrency <n>', 'most dispatches in flight at once').env('RETRYD_CONCURRENCY').default(DEFAULT_CONFIG.concurrency).argParser(int('--concurrency', 1, 100_000)),
    )
    .addOption(
      new Option(
        '--max-in-flight-per-tenant <n>',
        "most of an instance's dispatch slots one tenant may hold; past its fair share only while that leaves the rest free (default: all but a thirty-second of --concurrency)",
      )
        .env('RETRYD_MAX_IN_FLIGHT_PER_TENANT')
        .argParser(int('--max-in-flight-per-tenant', 1, 100_000)),
    )
    .addOption(
      new Option(
        '--max-in-flight-per-target <n>',
        "most of an instance's dispatch slots one target may hold, whatever its protection settings (default: all but a sixteenth of --concurrency)",
      )
        .env('RETRYD_MAX_IN_FLIGHT_PER_TARGET')
        .argParser(int('--max-in-flight-per-target', 1, 100_000)),
    )
    .addOption(
      new Option(
        '--max-retry-after <period>',
        "the longest wait a downstream's Retry-After may ask for unless the task's policy backs off longer itself: longer, the task is dead-lettered (retry_after_beyond_limit); a target's Retry-After hold is no longer either. 7d, 12h, 90m, 60s or ms",
      )
        .env('RETRYD_MAX_RETRY_AFTER')
        .default(DEFAULT_CONFIG.maxRetryAfterMs, '1h')
        .argParser((value) => parsePeriodOption('--max-retry-after', value, 0, MAX_POLICY_MS)),
    )
    .addOption(
      new Option(
        '--allow-targets <cidrs>',
        'comma-separated CIDRs exempt from the block on loopback, private, link-local and metadata targets (e.g. 127.0.0.1/32 for local testing)',
      )
        .env('RETRYD_ALLOW_TARGETS')
        .default(DEFAULT_CONFIG.allowTargets, 'none')
        .argParser(parseListOption),
    )
    .addOption(
      new Option('--attempt-timeout <ms>', 'most time one attempt may take (connect, send, response headers)')
        .env('RETRYD_ATTEMPT_TIMEOUT_MS')
        .default(DEFAULT_CONFIG.attemptTimeoutMs)
        .argParser(int('--attempt-timeout', 1)),
    )
    .addOption(
      new Option(
        '--connect-timeout <ms>',
        `most time an attempt may spend opening its connection (name resolution, TCP, TLS); at most the attempt timeout (default: ${DEFAULT_CONNECT_TIMEOUT_MS}, or the attempt timeout when shorter)`,
      )
        .env('RETRYD_CONNECT_TIMEOUT_MS')
        .argParser(int('--connect-timeout', 1)),
    )
    .addOption(
      new Option('--visibility-timeout <ms>', 'lease on a claimed task: if its worker dies, the task is due again this long after the claim (default: attempt timeout + 30000)')
        .env('RETRYD_VISIBILITY_TIMEOUT_MS')
        .argParser(int('--visibility-timeout', 1)),
    )
    .addOption(
      new Option(
        '--redis-sub-partitions <n>',
        "Redis: partitions per tenant (1 to 256); above 1 one tenant's tasks spread over that many hash tags, so over a cluster's masters (default: 1)",
      )
        .env('RETRYD_REDIS_SUB_PARTITIONS')
        .argParser(int('--redis-sub-partitions', 1, MAX_SUB_PARTITIONS)),
    )
    .addOption(
      new Option('--grace <ms>', 'at SIGTERM/SIGINT, how long in-flight calls may finish before their leases are handed back')
        .env('RETRYD_GRACE_MS')
        .default(DEFAULT_CONFIG.graceMs)
        .argParser(int('--grace', 0)),
    )
    .addOption(
      new Option('--sync <mode>', 'SQLite durability: full fsyncs every commit (nothing acknowledged is lost); normal may lose the last commits on power loss')
        .env('RETRYD_SQLITE_SYNC')
        .choices(['full', 'normal'])
        .default(DEFAULT_CONFIG.sqliteSync),
    )
    .addOption(
      new Option('--sqlite-cache <MiB>', "SQLite's page cache: more keeps more of a large backlog's indexes in memory (fewer reads from the OS's file cache, more resident memory)")
        .env('RETRYD_SQLITE_CACHE_MIB')
        .default(DEFAULT_CONFIG.sqliteCacheMiB)
        .argParser(int('--sqlite-cache', 1, 65_536)),
    )
    .addOption(
      new Option('--role <role>', 'all: the API and the workers; api: only the HTTP API; worker: only the workers (no API; --metrics-port serves its metrics)')
        .env('RETRYD_ROLE')
        .choices(['all', 'api', 'worker'])
        .default(DEFAULT_CONFIG.role),
    )
    .addOption(
      new Option(
        '--protection <mode>',
        "per-target protection of targets with no settings of their own: on (breakers with a slow start, adaptive throttling with the capacity probe, storm detection, Retry-After holds; no retry budget) or off (for downstreams that fail by design); PUT /targets/{targetKey} sets a target's own",
      )
        .env('RETRYD_PROTECTION')
        .default(DEFAULT_CONFIG.protection)
        .argParser((value) => parseChoiceOption('--protection', value, ['on', 'off'] as const)),
    )
    .addOption(
      new Option(
        '--secrets-file <path>',
        'JSON file of secrets that {{secret:NAME}} references (in headers and in the signing secrets of targets) resolve from, each among its tenant\'s own and the shared ones: {"NAME": "…"} (the default tenant\'s), "tenants": {"<tenant>": {"NAME": "…"}}, "shared": {"NAME": "…"}; asked before the RETRYD_TENANT_SECRET_<TENANT>__<NAME>, RETRYD_SECRET_<NAME> (default tenant) and RETRYD_SHARED_SECRET_<NAME> variables; read at start. Encryption keys come from RETRYD_ENCRYPTION_KEY',
      ).env('RETRYD_SECRETS_FILE'),
    )
    .addOption(
      new Option(
        '--credential-headers <names>',
        'comma-separated header names to treat as credentials (sealed at enqueue, shown redacted) besides those holding auth, token, key, secret, password, session, cookie, signature or credential',
      )
        .env('RETRYD_CREDENTIAL_HEADERS')
        .argParser(parseListOption),
    )
    .addOption(
      new Option(
        '--grpc-ca-file <path>',
        'PEM file of CA certificates trusted for grpcs:// targets besides the bundled roots (a private CA); read at start',
      ).env('RETRYD_GRPC_CA_FILE'),
    )
    .addOption(
      new Option(
        '--auth-done-upstream',
        'a proxy in front authenticates every request: listen beyond loopback without API keys (logged as a warning at every start). Without it and without a key, only loopback',
      ).env('RETRYD_AUTH_DONE_UPSTREAM'),
    )
    .addOption(
      new Option(
        '--allowed-hosts <names>',
        'comma-separated host names a service without API keys answers for besides localhost, 127.0.0.1 and [::1] (any port); other Host headers answer 421 (DNS rebinding)',
      )
        .env('RETRYD_ALLOWED_HOSTS')
        .default(DEFAULT_CONFIG.allowedHosts, 'none')
        .argParser(parseListOption),
    )
    .addOption(
      new Option('--request-timeout <ms>', 'most time to receive a whole request, headers and body; 408 and the connection closed beyond')
        .env('RETRYD_REQUEST_TIMEOUT_MS')
        .default(DEFAULT_CONFIG.requestTimeoutMs)
        .argParser(int('--request-timeout', 1)),
    )
    .addOption(
      new Option('--headers-timeout <ms>', "most time to receive a request's headers; at most --request-timeout")
        .env('RETRYD_HEADERS_TIMEOUT_MS')
        .default(DEFAULT_CONFIG.headersTimeoutMs)
        .argParser(int('--headers-timeout', 1)),
    )
    .addOption(
      new Option('--keep-alive-timeout <ms>', 'how long a connection is kept with no request between two; above the idle timeout of a load balancer in front')
        .env('RETRYD_KEEP_ALIVE_TIMEOUT_MS')
        .default(DEFAULT_CONFIG.keepAliveTimeoutMs)
        .argParser(int('--keep-alive-timeout', 1)),
    )
    .addOption(
      new Option('--max-connections <n>', "most connections the API holds at once; more are closed unread (default: half the process's open-file limit, at most 10000)")
        .env('RETRYD_MAX_CONNECTIONS')
        .argParser(int('--max-connections', 1)),
    )
    .addOption(
      new Option('--tenant-requests-per-second <n>', "each tenant's most API requests per second, per instance, unless it has its own (retryd tenants limits); 429 beyond")
        .env('RETRYD_TENANT_REQUESTS_PER_SECOND')
        .argParser(int('--tenant-requests-per-second', 1)),
    )
    .addOption(
      new Option('--tenant-max-pending-tasks <n>', "each tenant's most tasks pending or in flight, unless it has its own (retryd tenants limits); enqueues beyond answer 429")
        .env('RETRYD_TENANT_MAX_PENDING_TASKS')
        .argParser(int('--tenant-max-pending-tasks', 1)),
    )
    .addOption(
      new Option('--retention-succeeded <period>', 'how long a SUCCEEDED task is kept (with its attempts and idempotency key) unless its tenant or policy has its own: 7d, 12h, 90m, 60s or ms, from 1m to 3650d')
        .env('RETRYD_RETENTION_SUCCEEDED')
        .default(DEFAULT_CONFIG.retention.succeededMs, '7d')
        .argParser((value) => parseRetentionOption('--retention-succeeded', value)),
    )
    .addOption(
      new Option('--retention-dead-letters <period>', 'how long a FAILED or EXHAUSTED task (a dead letter, replayable until then) is kept unless its tenant or policy has its own')
        .env('RETRYD_RETENTION_DEAD_LETTERS')
        .default(DEFAULT_CONFIG.retention.deadLettersMs, '30d')
        .argParser((value) => parseRetentionOption('--retention-dead-letters', value)),
    )
    .addOption(
      new Option('--retention-cancelled <period>', 'how long a CANCELLED task is kept unless its tenant or policy has its own')
        .env('RETRYD_RETENTION_CANCELLED')
        .default(DEFAULT_CONFIG.retention.cancelledMs, '7d')
        .argParser((value) => parseRetentionOption('--retention-cancelled', value)),
    )
    .addOption(
      new Option('--purge-interval <ms>', 'how often the purge of tasks past their retention looks (one instance at a time purges)')
        .env('RETRYD_PURGE_INTERVAL_MS')
        .default(DEFAULT_CONFIG.purgeIntervalMs)
        .argParser(int('--purge-interval', 100, 3_600_000)),
    )
    .addOption(
      new Option('--max-policy-attempts <n>', "the most attempts any tenant's policy (registered or inline) may ask for, unless the tenant has its own ceilings (retryd tenants ceilings)")
        .env('RETRYD_MAX_POLICY_ATTEMPTS')
        .argParser(int('--max-policy-attempts', 1, 10_000)),
    )
    .addOption(
      new Option('--max-policy-budget <period>', "the longest totalBudgetMs any tenant's policy may ask for, and the budget of one that sets none: 7d, 12h, 90m, 60s or ms")
        .env('RETRYD_MAX_POLICY_BUDGET')
        .argParser((value) => parsePeriodOption('--max-policy-budget', value, 1, MAX_POLICY_MS)),
    )
    .addOption(
      new Option('--max-policy-delay <period>', "the longest delay (initialDelayMs, maxDelayMs, backoffByClass's) any tenant's policy may ask for")
        .env('RETRYD_MAX_POLICY_DELAY')
        .argParser((value) => parsePeriodOption('--max-policy-delay', value, 1, MAX_POLICY_MS)),
    )
    .addOption(new Option('--log-level <level>', 'log level').env('RETRYD_LOG_LEVEL').choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default(DEFAULT_CONFIG.logLevel))
    .addHelpText(
      'after',
      '\nEnvironment variables only (a flag would show in the process list):\n' +
        '  RETRYD_ENCRYPTION_KEY       keys that encrypt stored credentials: base64 of 32 bytes, or id:base64,id:base64 (the first encrypts)\n' +
        '  RETRYD_BOOTSTRAP_ADMIN_KEY  an API key (rtd_<16 hex>_<43 base64url>) created at start as an admin key of the default\n' +
        '                              tenant unless the store holds it; only its hash is stored, and it is never logged\n' +
        '  RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256  the same key as its id and hash, <16 hex>:<64 hex> (retryd keys hash prints it),\n' +
        '                              so the key itself stays out of the environment; set one of the two',
    )
    .action(async (flags: ServeFlags) => {
      const options = configFromFlags(flags);
      const logger = createLogger(options.logLevel);
      let service;
      try {
        // Loaded when the service starts, not for `retryd serve --help`: the engine, fastify and the API take a while.
        const { startRetryd } = await import('../service/start-retryd.js');
        service = await startRetryd(options, logger);
      } catch (error) {
        if (isUsageError(error)) {
          console.error(`retryd: ${error.message}`);
          process.exitCode = 2;
          return;
        }
        logger.fatal({ event: 'start_failed', err: error }, error instanceof Error ? error.message : String(error));
        process.exitCode = 1;
        return;
      }
      let signals = 0;
      const shutdown = (signal: NodeJS.Signals) => {
        signals += 1;
        if (signals > 1) {
          logger.warn({ event: 'forced_stop', signal }, 'second signal: exiting without waiting');
          process.exit(1);
        }
        logger.info({ event: 'stopping', signal }, 'stopping: finishing in-flight calls');
        service.close().then(
          () => process.exit(0),
          (error: unknown) => {
            logger.error({ event: 'stop_failed', err: error }, 'stop failed');
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', shutdown);
      process.on('SIGINT', shutdown);
    });
}

/** The parsed flags, named as commander names them (from the flag, not the config field). */
interface ServeFlags {
  port: number;
  metricsPort?: number;
  host: string;
  store: string;
  blobs?: string;
  concurrency: number;
  maxInFlightPerTenant?: number;
  maxInFlightPerTarget?: number;
  maxRetryAfter: number;
  allowTargets: string[];
  attemptTimeout: number;
  connectTimeout?: number;
  visibilityTimeout?: number;
  redisSubPartitions?: number;
  grace: number;
  sync: 'full' | 'normal';
  sqliteCache: number;
  logLevel: string;
  role: RetrydRole;
  protection: ProtectionMode;
  secretsFile?: string;
  credentialHeaders?: string[];
  grpcCaFile?: string;
  authDoneUpstream?: boolean;
  allowedHosts: string[];
  requestTimeout: number;
  headersTimeout: number;
  keepAliveTimeout: number;
  maxConnections?: number;
  tenantRequestsPerSecond?: number;
  tenantMaxPendingTasks?: number;
  retentionSucceeded: number;
  retentionDeadLetters: number;
  retentionCancelled: number;
  purgeInterval: number;
  maxPolicyAttempts?: number;
  maxPolicyBudget?: number;
  maxPolicyDelay?: number;
}

function configFromFlags(flags: ServeFlags): RetrydConfig {
  return {
    port: flags.port,
    ...(flags.metricsPort === undefined ? {} : { metricsPort: flags.metricsPort }),
    host: flags.host,
    store: flags.store,
    ...(flags.blobs === undefined ? {} : { blobs: flags.blobs }),
    concurrency: flags.concurrency,
    ...(flags.maxInFlightPerTenant === undefined ? {} : { maxInFlightPerTenant: flags.maxInFlightPerTenant }),
    ...(flags.maxInFlightPerTarget === undefined ? {} : { maxInFlightPerTarget: flags.maxInFlightPerTarget }),
    maxRetryAfterMs: flags.maxRetryAfter,
    allowTargets: flags.allowTargets,
    attemptTimeoutMs: flags.attemptTimeout,
    ...(flags.connectTimeout === undefined ? {} : { connectTimeoutMs: flags.connectTimeout }),
    ...(flags.visibilityTimeout === undefined ? {} : { visibilityTimeoutMs: flags.visibilityTimeout }),
    ...(flags.redisSubPartitions === undefined ? {} : { redisSubPartitions: flags.redisSubPartitions }),
    graceMs: flags.grace,
    sqliteSync: flags.sync,
    sqliteCacheMiB: flags.sqliteCache,
    logLevel: flags.logLevel,
    role: flags.role,
    protection: flags.protection,
    ...(flags.secretsFile === undefined ? {} : { secretsFile: flags.secretsFile }),
    ...(flags.credentialHeaders === undefined ? {} : { credentialHeaders: flags.credentialHeaders }),
    ...(flags.grpcCaFile === undefined ? {} : { grpcCaFile: flags.grpcCaFile }),
    authDoneUpstream: flags.authDoneUpstream === true,
    allowedHosts: flags.allowedHosts,
    requestTimeoutMs: flags.requestTimeout,
    headersTimeoutMs: flags.headersTimeout,
    keepAliveTimeoutMs: flags.keepAliveTimeout,
    ...(flags.maxConnections === undefined ? {} : { maxConnections: flags.maxConnections }),
    tenantRequestsPerSecond: flags.tenantRequestsPerSecond ?? null,
    tenantMaxPendingTasks: flags.tenantMaxPendingTasks ?? null,
    retention: { succeededMs: flags.retentionSucceeded, deadLettersMs: flags.retentionDeadLetters, cancelledMs: flags.retentionCancelled },
    purgeIntervalMs: flags.purgeInterval,
    ceilings: { maxAttempts: flags.maxPolicyAttempts ?? null, totalBudgetMs: flags.maxPolicyBudget ?? null, maxDelayMs: flags.maxPolicyDelay ?? null },
    // Never a flag: a key on the command line would show in the process list.
    ...(process.env.RETRYD_ENCRYPTION_KEY === undefined ? {} : { encryptionKey: process.env.RETRYD_ENCRYPTION_KEY }),
    ...(process.env.RETRYD_BOOTSTRAP_ADMIN_KEY === undefined ? {} : { bootstrapAdminKey: process.env.RETRYD_BOOTSTRAP_ADMIN_KEY }),
    ...(process.env.RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256 === undefined ? {} : { bootstrapAdminKeySha256: process.env.RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256 }),
  };
}

/** Errors that mean the operator's flags are wrong: told in one line, exit code 2, no stack. */
export function isUsageError(error: unknown): error is Error {
  return (
    error instanceof ConfigError ||
    error instanceof InvalidAllowListError ||
    error instanceof StoreUrlError ||
    error instanceof BlobsUrlError ||
    error instanceof EncryptionKeyError ||
    error instanceof SecretsFileError
  );
}
