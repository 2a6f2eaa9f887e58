import { MAX_POLICY_MS } from '@retryd/core';
import { MAX_SUB_PARTITIONS } from '../backends/redis/sub-partitions.js';
import { DEFAULT_SQLITE_CACHE_MIB } from '../backends/sqlite/connection.js';
import { DEFAULT_MAX_RETRY_AFTER_MS } from '../engine/engine-options.js';
import { DEFAULT_CONNECTION_TIMEOUTS } from '../api/connection-limits.js';
import { DEFAULT_RETENTION } from '../retention/retention-periods.js';
import { DEFAULT_STORE_URL } from '../store/default-store-url.js';
import { integer, list, oneOf, period, port, retention, type ParserOf } from './setting-parsers.js';

/**
 * One setting of `retryd serve`: its commander option, its environment variable, its default, its `--help` line and
 * its row of the flags table in docs/server.md all come from this entry.
 */
export interface Setting<T> {
  /** The flag with the name of its value (`--port <port>`); none: an environment variable only (a flag would show in the process list). */
  readonly flag?: string;
  /** The environment variable, read when the flag is not given. */
  readonly env: string;
  /** The `--help` text (an environment variable only: its lines after the options, `\n` between them). */
  readonly help: string;
  /** Parses the flag's text, throwing a `ConfigError` that names the flag and the rule. None: the text itself. */
  readonly parse?: ParserOf<T>;
  /** The words the flag takes, checked by commander (its own message names the flag and the choices). */
  readonly choices?: readonly T[];
  /** The value when neither the flag nor the variable is given; `null` means none and is not shown by `--help`. */
  readonly default?: T;
  /** How `--help` shows the default: its text, or `false` to show none. Default: the default itself. */
  readonly helpDefault?: string | false;
  /** The default column of docs/server.md. Default: a number as it is, a word in backticks, otherwise `none`. */
  readonly docsDefault?: string;
  /** The meaning column of docs/server.md (markdown; may link further). */
  readonly docs: string;
}

/** A setting with a value whatever is given: a required field of the config. */
function required<T>(setting: Setting<T> & { readonly default: T }): Setting<T> & { readonly default: T } {
  return setting;
}

/** A setting that may be left unset: an optional field of the config (its default is worked out where it is used). */
function optional<T>(setting: Omit<Setting<T>, 'default'>): Setting<T> {
  return setting;
}

/** What one `retryd serve` process runs. */
export type RetrydRole = 'all' | 'api' | 'worker';

/** Whether targets are protected by default (see the `protection` setting). */
export type ProtectionMode = 'on' | 'off';

/** The connect timeout when none is given (`--connect-timeout`), in ms: 5000, or the attempt timeout when shorter. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

const PERIOD_WORDS = '`7d`, `12h`, `90m`, `60s` or ms';

/**
 * Everything `retryd serve` can be told, in the order of its `--help`: the one definition that the flags, the
 * config type ({@link ServeSettingValues}, `RetrydConfig`), the defaults, the help text and the flags table of
 * docs/server.md are derived from (a test holds the docs to it).
 */
export const SERVE_SETTINGS = {
  port: required<number>({ flag: '--port <port>', env: 'RETRYD_PORT', help: 'HTTP port to listen on (0 picks a free one)', parse: port, default: 8080, docs: 'HTTP port (0 picks a free one)' }),
  metricsPort: optional<number>({
    flag: '--metrics-port <port>',
    env: 'RETRYD_METRICS_PORT',
    help: 'a port of its own (on --host) for /metrics, /healthz and /readyz: how a --role worker instance is scraped; on api or all, /metrics moves there from --port (0 picks a free one)',
    parse: port,
    docs: 'a port of its own (on `--host`; 0 picks a free one) serving `/metrics`, `/healthz` and `/readyz`, and nothing else: how a `--role worker` instance is scraped and probed; on an `api` or `all` instance `/metrics` moves there from `--port` ([metrics](#metrics))',
  }),
  host: required<string>({
    flag: '--host <host>',
    env: 'RETRYD_HOST',
    help: 'interface to listen on; 0.0.0.0 serves every interface',
    default: '127.0.0.1',
    docs: 'interface to listen on (`0.0.0.0` for every interface)',
  }),
  store: required<string>({
    flag: '--store <url>',
    env: 'RETRYD_STORE',
    help: 'where tasks live: sqlite:<file> (embedded, the default), postgres://…, redis://… or redis+cluster://host:port[,host:port…] (Redis Cluster seed nodes)',
    default: DEFAULT_STORE_URL,
    docs: 'where state lives: `sqlite:<file>`, `sqlite::memory:`, `postgres://…?schema=`, `redis://…?prefix=`, `redis+cluster://host:port,…?prefix=` ([stores](stores.md))',
  }),
  blobs: optional<string>({
    flag: '--blobs <url>',
    env: 'RETRYD_BLOBS',
    help:
      'where bodies over 64 KiB live: s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1&force_path_style=true ' +
      '(credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the AWS SDK default chain; lets callers enqueue by bodyRef). ' +
      "Default: the store's own (a directory beside SQLite, the PostgreSQL blobs table, Redis keys)",
    docsDefault: 'beside the store',
    docs: 'where bodies over 64 KiB go: `s3://bucket/prefix?endpoint=…&region=…` ([bodies in object storage](#bodies-in-object-storage)); by default a directory beside a SQLite file, or the PostgreSQL or Redis store itself',
  }),
  concurrency: required<number>({
    flag: '--concurrency <n>',
    env: 'RETRYD_CONCURRENCY',
    help: 'most dispatches in flight at once',
    parse: integer(1, 100_000),
    default: 256,
    docs: 'most dispatches in flight',
  }),
  maxInFlightPerTenant: optional<number>({
    flag: '--max-in-flight-per-tenant <n>',
    env: 'RETRYD_MAX_IN_FLIGHT_PER_TENANT',
    help: "most of an instance's dispatch slots one tenant may hold; past its fair share only while that leaves the rest free (default: all but a thirty-second of --concurrency)",
    parse: integer(1, 100_000),
    docsDefault: 'all but a thirty-second of `--concurrency` (248 of 256)',
    docs: "most of an instance's dispatch slots one tenant may hold ([dispatch slots](#dispatch-slots-shared-between-tenants-and-targets))",
  }),
  maxInFlightPerTarget: optional<number>({
    flag: '--max-in-flight-per-target <n>',
    env: 'RETRYD_MAX_IN_FLIGHT_PER_TARGET',
    help: "most of an instance's dispatch slots one target may hold, whatever its protection settings (default: all but a sixteenth of --concurrency)",
    parse: integer(1, 100_000),
    docsDefault: 'all but a sixteenth of `--concurrency` (240 of 256)',
    docs: "most of an instance's dispatch slots one target may hold, whatever its protection settings",
  }),
  maxRetryAfterMs: required<number>({
    flag: '--max-retry-after <period>',
    env: 'RETRYD_MAX_RETRY_AFTER',
    help: "the longest wait a downstream's Retry-After may ask for unless the task's policy backs off longer itself: longer, the task is dead-lettered (retry_after_beyond_limit); a target's Retry-After hold is no longer either. 7d, 12h, 90m, 60s or ms",
    parse: period(0, MAX_POLICY_MS),
    default: DEFAULT_MAX_RETRY_AFTER_MS,
    helpDefault: '1h',
    docsDefault: '`1h`',
    docs: `the longest wait a downstream's \`Retry-After\` may ask for unless the task's policy backs off longer itself: a longer one dead-letters the task (\`retry_after_beyond_limit\`), and no \`Retry-After\` holds a whole target longer ([Retry-After](#retry-after-holds-the-target)); ${PERIOD_WORDS}`,
  }),
  allowTargets: required<string[]>({
    flag: '--allow-targets <cidrs>',
    env: 'RETRYD_ALLOW_TARGETS',
    help: 'comma-separated CIDRs exempt from the block on loopback, private, link-local and metadata targets (e.g. 127.0.0.1/32 for local testing)',
    parse: list,
    default: [],
    helpDefault: 'none',
    docs: 'comma-separated CIDRs exempt from the blocked-address check, at creation and at every connection (`127.0.0.1/32` for local testing)',
  }),
  attemptTimeoutMs: required<number>({
    flag: '--attempt-timeout <ms>',
    env: 'RETRYD_ATTEMPT_TIMEOUT_MS',
    help: 'most time one attempt may take (connect, send, response headers)',
    parse: integer(1),
    default: 30_000,
    docs: 'most time one attempt may take, unless its task or its target sets its own ([timeouts](#timeouts-of-an-attempt))',
  }),
  connectTimeoutMs: optional<number>({
    flag: '--connect-timeout <ms>',
    env: 'RETRYD_CONNECT_TIMEOUT_MS',
    help: `most time an attempt may spend opening its connection (name resolution, TCP, TLS); at most the attempt timeout (default: ${DEFAULT_CONNECT_TIMEOUT_MS}, or the attempt timeout when shorter)`,
    parse: integer(1),
    docsDefault: `${DEFAULT_CONNECT_TIMEOUT_MS} (the attempt timeout when shorter)`,
    docs: 'most time an attempt may spend opening its connection (name resolution, TCP, TLS), at most `--attempt-timeout`, unless its task or its target sets its own',
  }),
  visibilityTimeoutMs: optional<number>({
    flag: '--visibility-timeout <ms>',
    env: 'RETRYD_VISIBILITY_TIMEOUT_MS',
    help: 'lease on a claimed task: if its worker dies, the task is due again this long after the claim (default: attempt timeout + 30000)',
    parse: integer(1),
    docsDefault: 'attempt timeout + 30000',
    docs: 'lease on a claimed task: if its worker dies, the task is due again after this',
  }),
  redisSubPartitions: optional<number>({
    flag: '--redis-sub-partitions <n>',
    env: 'RETRYD_REDIS_SUB_PARTITIONS',
    help: "Redis: partitions per tenant (1 to 256); above 1 one tenant's tasks spread over that many hash tags, so over a cluster's masters (default: 1)",
    parse: integer(1, MAX_SUB_PARTITIONS),
    docsDefault: '1',
    docs: "Redis: partitions per tenant, 1 to 256; above 1 one tenant's tasks spread over that many hash tags, so over a cluster's masters ([stores](stores.md#sub-partitions-one-tenant-over-several-masters))",
  }),
  graceMs: required<number>({
    flag: '--grace <ms>',
    env: 'RETRYD_GRACE_MS',
    help: 'at SIGTERM/SIGINT, how long in-flight calls may finish before their leases are handed back',
    parse: integer(0),
    default: 10_000,
    docs: 'at SIGTERM/SIGINT, how long in-flight calls may finish',
  }),
  sqliteSync: required<'full' | 'normal'>({
    flag: '--sync <mode>',
    env: 'RETRYD_SQLITE_SYNC',
    help: 'SQLite durability: full fsyncs every commit (nothing acknowledged is lost); normal may lose the last commits on power loss',
    choices: ['full', 'normal'],
    default: 'full',
    docs: 'SQLite durability (see below)',
  }),
  sqliteCacheMiB: required<number>({
    flag: '--sqlite-cache <MiB>',
    env: 'RETRYD_SQLITE_CACHE_MIB',
    help: "SQLite's page cache: more keeps more of a large backlog's indexes in memory (fewer reads from the OS's file cache, more resident memory)",
    parse: integer(1, 65_536),
    default: DEFAULT_SQLITE_CACHE_MIB,
    docs: "SQLite's page cache, in MiB (see below)",
  }),
  role: required<RetrydRole>({
    flag: '--role <role>',
    env: 'RETRYD_ROLE',
    help: 'all: the API and the workers; api: only the HTTP API; worker: only the workers (no API; --metrics-port serves its metrics)',
    choices: ['all', 'api', 'worker'],
    default: 'all',
    docs: '`api` runs only the HTTP API, `worker` only the workers, with no API (`--metrics-port` gives it `/metrics`) ([scaling](scaling.md))',
  }),
  protection: required<ProtectionMode>({
    flag: '--protection <mode>',
    env: 'RETRYD_PROTECTION',
    help: "per-target protection of targets with no settings of their own: on (breakers with a slow start, adaptive throttling with the capacity probe, storm detection, Retry-After holds; no retry budget) or off (for downstreams that fail by design); PUT /targets/{targetKey} sets a target's own",
    parse: oneOf(['on', 'off']),
    default: 'on',
    docs: "the [downstream protection](#downstream-protection) of targets with no settings of their own: `on` (breakers with a slow start, adaptive throttling with the capacity probe, storm detection, Retry-After holds; the retry budget is off until a target's settings turn it on) or `off` (for downstreams that fail by design)",
  }),
  secretsFile: optional<string>({
    flag: '--secrets-file <path>',
    env: 'RETRYD_SECRETS_FILE',
    help: 'JSON file of secrets that {{secret:NAME}} references (in headers and in the signing secrets of targets) resolve from, each among its tenant\'s own and the shared ones: {"NAME": "…"} (the default tenant\'s), "tenants": {"<tenant>": {"NAME": "…"}}, "shared": {"NAME": "…"}; asked before the RETRYD_TENANT_SECRET_<TENANT>__<NAME>, RETRYD_SECRET_<NAME> (default tenant) and RETRYD_SHARED_SECRET_<NAME> variables; read at start. Encryption keys come from RETRYD_ENCRYPTION_KEY',
    docs: "a JSON file of secrets that `{{secret:NAME}}` references (in headers and in a target's signing secrets) resolve from, each among its tenant's own and the shared ones: names at the top level are the `default` tenant's, `\"tenants\": {\"<id>\": {…}}` each tenant's, `\"shared\": {…}` every tenant's; asked before the variables below; read at start ([secrets](#secrets))",
  }),
  credentialHeaders: optional<string[]>({
    flag: '--credential-headers <names>',
    env: 'RETRYD_CREDENTIAL_HEADERS',
    help: 'comma-separated header names to treat as credentials (sealed at enqueue, shown redacted) besides those holding auth, token, key, secret, password, session, cookie, signature or credential',
    parse: list,
    docs: 'comma-separated header names counted as credentials (sealed at enqueue, shown `[REDACTED]`) besides those whose names hold auth, token, key, secret, password, session, cookie, signature or credential ([secrets](#secrets))',
  }),
  encryptionKey: optional<string>({
    env: 'RETRYD_ENCRYPTION_KEY',
    help: 'keys that encrypt stored credentials: base64 of 32 bytes, or id:base64,id:base64 (the first encrypts)',
    docs: 'the keys credential headers and sensitive bodies are encrypted with: base64 of 32 bytes, or `id:base64,id:base64` (the first encrypts, all decrypt; `retryd keys rotate-encryption` moves stored secrets to the first); an environment variable only ([secrets](#secrets))',
  }),
  bootstrapAdminKey: optional<string>({
    env: 'RETRYD_BOOTSTRAP_ADMIN_KEY',
    help: 'an API key (rtd_<16 hex>_<43 base64url>) created at start as an admin key of the default\ntenant unless the store holds it; only its hash is stored, and it is never logged',
    docs: 'an API key (`rtd_<16 hex>_<43 base64url>`) created at start as an `admin` key of the `default` tenant if the store does not hold it; only its hash is stored, and it is never logged ([the first key from the environment](#the-first-key-from-the-environment)); an environment variable only',
  }),
  bootstrapAdminKeySha256: optional<string>({
    env: 'RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256',
    help: 'the same key as its id and hash, <16 hex>:<64 hex> (retryd keys hash prints it),\nso the key itself stays out of the environment; set one of the two',
    docs: "the same first key as its id and hash, `<16 hex>:<64 hex>` (`retryd keys hash` prints it), so the key itself stays out of the service's environment; at most one of the two ([the first key from the environment](#the-first-key-from-the-environment)); an environment variable only",
  }),
  grpcCaFile: optional<string>({
    flag: '--grpc-ca-file <path>',
    env: 'RETRYD_GRPC_CA_FILE',
    help: 'PEM file of CA certificates trusted for grpcs:// targets besides the bundled roots (a private CA); read at start',
    docs: "a PEM file of CA certificates trusted for `grpcs://` targets besides Node's bundled roots (a private CA); read at start ([gRPC targets](#grpc-targets))",
  }),
  authDoneUpstream: required<boolean>({
    flag: '--auth-done-upstream',
    env: 'RETRYD_AUTH_DONE_UPSTREAM',
    help: 'a proxy in front authenticates every request: listen beyond loopback without API keys (logged as a warning at every start). Without it and without a key, only loopback',
    default: false,
    helpDefault: false,
    docsDefault: 'off',
    docs: 'a proxy in front authenticates every request: listen beyond loopback without API keys (a warning at every start) ([API keys and tenants](#api-keys-and-tenants))',
  }),
  allowedHosts: required<string[]>({
    flag: '--allowed-hosts <names>',
    env: 'RETRYD_ALLOWED_HOSTS',
    help: 'comma-separated host names a service without API keys answers for besides localhost, 127.0.0.1 and [::1] (any port); other Host headers answer 421 (DNS rebinding)',
    parse: list,
    default: [],
    helpDefault: 'none',
    docs: 'comma-separated host names a service with no API key yet answers for besides `localhost`, `127.0.0.1` and `[::1]` (any port); any other `Host` answers `421 HOST_NOT_ALLOWED` ([API keys and tenants](#api-keys-and-tenants))',
  }),
  requestTimeoutMs: required<number>({
    flag: '--request-timeout <ms>',
    env: 'RETRYD_REQUEST_TIMEOUT_MS',
    help: 'most time to receive a whole request, headers and body; 408 and the connection closed beyond',
    parse: integer(1),
    default: DEFAULT_CONNECTION_TIMEOUTS.requestTimeoutMs,
    docs: 'most time to receive a whole request, headers and body; `408 REQUEST_TIMEOUT` and the connection closed beyond ([connections](#connections-and-slow-clients))',
  }),
  headersTimeoutMs: required<number>({
    flag: '--headers-timeout <ms>',
    env: 'RETRYD_HEADERS_TIMEOUT_MS',
    help: "most time to receive a request's headers; at most --request-timeout",
    parse: integer(1),
    default: DEFAULT_CONNECTION_TIMEOUTS.headersTimeoutMs,
    docs: "most time to receive a request's line and headers; at most `--request-timeout`",
  }),
  keepAliveTimeoutMs: required<number>({
    flag: '--keep-alive-timeout <ms>',
    env: 'RETRYD_KEEP_ALIVE_TIMEOUT_MS',
    help: 'how long a connection is kept with no request between two; above the idle timeout of a load balancer in front',
    parse: integer(1),
    default: DEFAULT_CONNECTION_TIMEOUTS.keepAliveTimeoutMs,
    docs: 'how long a connection is kept with no request between two; keep it above the idle timeout of a load balancer in front',
  }),
  maxConnections: optional<number>({
    flag: '--max-connections <n>',
    env: 'RETRYD_MAX_CONNECTIONS',
    help: "most connections the API holds at once; more are closed unread (default: half the process's open-file limit, at most 10000)",
    parse: integer(1),
    docsDefault: 'half the open-file limit, at most 10000',
    docs: 'most connections the API holds at once; one more is closed before it is read ([connections](#connections-and-slow-clients))',
  }),
  tenantRequestsPerSecond: required<number | null>({
    flag: '--tenant-requests-per-second <n>',
    env: 'RETRYD_TENANT_REQUESTS_PER_SECOND',
    help: "each tenant's most API requests per second, per instance, unless it has its own (retryd tenants limits); 429 beyond",
    parse: integer(1),
    default: null,
    docs: "each tenant's most API requests per second, per instance, unless it has its own; `429 RATE_LIMITED` beyond",
  }),
  tenantMaxPendingTasks: required<number | null>({
    flag: '--tenant-max-pending-tasks <n>',
    env: 'RETRYD_TENANT_MAX_PENDING_TASKS',
    help: "each tenant's most tasks pending or in flight, unless it has its own (retryd tenants limits); enqueues beyond answer 429",
    parse: integer(1),
    default: null,
    docs: "each tenant's most tasks PENDING or IN_FLIGHT, unless it has its own; enqueues and replays beyond answer `429 TOO_MANY_PENDING_TASKS`",
  }),
  retentionSucceededMs: required<number>({
    flag: '--retention-succeeded <period>',
    env: 'RETRYD_RETENTION_SUCCEEDED',
    help: 'how long a SUCCEEDED task is kept (with its attempts and idempotency key) unless its tenant or policy has its own: 7d, 12h, 90m, 60s or ms, from 1m to 3650d',
    parse: retention,
    default: DEFAULT_RETENTION.succeededMs,
    helpDefault: '7d',
    docsDefault: '`7d`',
    docs: `how long a SUCCEEDED task is kept, with its attempts and idempotency key, unless its tenant or policy has its own ([retention](#retention)): ${PERIOD_WORDS}, a minute to ten years`,
  }),
  retentionDeadLettersMs: required<number>({
    flag: '--retention-dead-letters <period>',
    env: 'RETRYD_RETENTION_DEAD_LETTERS',
    help: 'how long a FAILED or EXHAUSTED task (a dead letter, replayable until then) is kept unless its tenant or policy has its own',
    parse: retention,
    default: DEFAULT_RETENTION.deadLettersMs,
    helpDefault: '30d',
    docsDefault: '`30d`',
    docs: 'how long a FAILED or EXHAUSTED task (a dead letter, replayable until then) is kept unless its tenant or policy has its own',
  }),
  retentionCancelledMs: required<number>({
    flag: '--retention-cancelled <period>',
    env: 'RETRYD_RETENTION_CANCELLED',
    help: 'how long a CANCELLED task is kept unless its tenant or policy has its own',
    parse: retention,
    default: DEFAULT_RETENTION.cancelledMs,
    helpDefault: '7d',
    docsDefault: '`7d`',
    docs: 'how long a CANCELLED task is kept unless its tenant or policy has its own',
  }),
  purgeIntervalMs: required<number>({
    flag: '--purge-interval <ms>',
    env: 'RETRYD_PURGE_INTERVAL_MS',
    help: 'how often the purge of tasks past their retention looks (one instance at a time purges)',
    parse: integer(100, 3_600_000),
    default: 10_000,
    docs: 'how often the purge of tasks past their retention looks, in ms (100 to 3,600,000)',
  }),
  maxPolicyAttempts: required<number | null>({
    flag: '--max-policy-attempts <n>',
    env: 'RETRYD_MAX_POLICY_ATTEMPTS',
    help: "the most attempts any tenant's policy (registered or inline) may ask for, unless the tenant has its own ceilings (retryd tenants ceilings)",
    parse: integer(1, 10_000),
    default: null,
    docs: "the most attempts any tenant's policy (registered or inline) may ask for, unless the tenant has its own ([ceilings](#limits))",
  }),
  maxPolicyBudgetMs: required<number | null>({
    flag: '--max-policy-budget <period>',
    env: 'RETRYD_MAX_POLICY_BUDGET',
    help: "the longest totalBudgetMs any tenant's policy may ask for, and the budget of one that sets none: 7d, 12h, 90m, 60s or ms",
    parse: period(1, MAX_POLICY_MS),
    default: null,
    docs: `the longest \`totalBudgetMs\` any tenant's policy may ask for, and the budget of one that sets none: ${PERIOD_WORDS}`,
  }),
  maxPolicyDelayMs: required<number | null>({
    flag: '--max-policy-delay <period>',
    env: 'RETRYD_MAX_POLICY_DELAY',
    help: "the longest delay (initialDelayMs, maxDelayMs, backoffByClass's) any tenant's policy may ask for",
    parse: period(1, MAX_POLICY_MS),
    default: null,
    docs: "the longest delay (`initialDelayMs`, `maxDelayMs`, `backoffByClass`'s) any tenant's policy may ask for",
  }),
  logLevel: required<string>({
    flag: '--log-level <level>',
    env: 'RETRYD_LOG_LEVEL',
    help: 'log level',
    choices: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'],
    default: 'info',
    docs: '`debug` adds one line per HTTP request to the API and one per attempt ([logs](#logs-of-a-task))',
  }),
};

type Settings = typeof SERVE_SETTINGS;
type ValueOf<S> = S extends Setting<infer T> ? T : never;

/**
 * The value of every setting, named as the config names it: a setting with a default is always there, one without
 * may be missing. `RetrydConfig` is these with the retention periods and the policy ceilings gathered.
 */
export type ServeSettingValues = {
  -readonly [K in keyof Settings as Settings[K] extends { readonly default: unknown } ? K : never]: ValueOf<Settings[K]>;
} & {
  -readonly [K in keyof Settings as Settings[K] extends { readonly default: unknown } ? never : K]?: ValueOf<Settings[K]>;
};

/** The name of a setting. */
export type SettingName = keyof Settings;

/** The settings as `[name, setting]` pairs, in `--help` order. */
export function settingEntries(): [SettingName, Setting<unknown>][] {
  return Object.entries(SERVE_SETTINGS) as [SettingName, Setting<unknown>][];
}
