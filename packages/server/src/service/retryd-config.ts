import { DEFAULT_SQLITE_CACHE_MIB } from '../backends/sqlite/connection.js';
import { DEFAULT_MAX_RETRY_AFTER_MS } from '../engine/engine-options.js';
import { DEFAULT_STORE_URL } from './open-store.js';
import { DEFAULT_CONNECTION_TIMEOUTS, defaultConnectionLimits, type ConnectionLimits } from '../api/connection-limits.js';
import { normaliseAllowedHost } from '../access/open-hosts.js';
import { NO_CEILINGS, type PolicyCeilings } from '../policies/policy-ceilings.js';
import { DEFAULT_RETENTION, durationText, MAX_RETENTION_MS, MIN_RETENTION_MS, parseDurationText, type RetentionPeriods } from '../retention/retention-periods.js';

/** Everything `retryd serve` can be told, with its flag and environment variable. */
export interface RetrydConfig {
  /** `--port` / `RETRYD_PORT`: HTTP port (0 picks a free one). Default 8080. */
  port: number;
  /**
   * `--metrics-port` / `RETRYD_METRICS_PORT`: a port of its own, on `host`, serving `/metrics`, `/healthz` and
   * `/readyz` (0 picks a free one): how a `worker` instance, which has no API, is scraped and probed. Given to an
   * `api` or `all` instance, `/metrics` moves there from the API's port. Default none: `/metrics` on the API's port.
   */
  metricsPort?: number;
  /** `--host` / `RETRYD_HOST`: interface to listen on. Default 127.0.0.1 (use 0.0.0.0 to serve the network). */
  host: string;
  /** `--store` / `RETRYD_STORE`: where state lives. Default `sqlite:./retryd.db`. */
  store: string;
  /**
   * `--blobs` / `RETRYD_BLOBS`: where bodies over 64 KiB live, `s3://bucket/prefix?endpoint=…&region=…&force_path_style=true`
   * (credentials from the AWS environment variables or the SDK's default chain). Default: the store's own (a directory
   * beside SQLite, the PostgreSQL `blobs` table, Redis keys).
   */
  blobs?: string;
  /** `--concurrency` / `RETRYD_CONCURRENCY`: most dispatches in flight. Default 256. */
  concurrency: number;
  /**
   * `--max-in-flight-per-tenant` / `RETRYD_MAX_IN_FLIGHT_PER_TENANT`: most of an instance's dispatch slots one tenant
   * may hold (past its fair share, only while that leaves the rest free). Default all but a thirty-second of
   * `concurrency` (248 of 256); at most `concurrency`.
   */
  maxInFlightPerTenant?: number;
  /**
   * `--max-in-flight-per-target` / `RETRYD_MAX_IN_FLIGHT_PER_TARGET`: most of an instance's dispatch slots one target
   * may hold, whatever its protection settings. Default all but a sixteenth of `concurrency` (240 of 256).
   */
  maxInFlightPerTarget?: number;
  /**
   * `--max-retry-after` / `RETRYD_MAX_RETRY_AFTER`: the longest wait a downstream's `Retry-After` may ask for, unless
   * the task's policy backs off longer itself; a task asked for longer is dead-lettered (`retry_after_beyond_limit`),
   * and a target's `Retry-After` hold is no longer. Default 1 hour.
   */
  maxRetryAfterMs: number;
  /** `--allow-targets` / `RETRYD_ALLOW_TARGETS`: CIDRs exempt from the private-address block. Default none. */
  allowTargets: string[];
  /** `--attempt-timeout` / `RETRYD_ATTEMPT_TIMEOUT_MS`: most time one attempt may take, in ms. Default 30000. */
  attemptTimeoutMs: number;
  /**
   * `--connect-timeout` / `RETRYD_CONNECT_TIMEOUT_MS`: most time an attempt may spend opening its connection (name
   * resolution, TCP, TLS), in ms; at most the attempt timeout. Default 5000, or the attempt timeout when that is
   * shorter. A task's or its target's own win.
   */
  connectTimeoutMs?: number;
  /**
   * `--visibility-timeout` / `RETRYD_VISIBILITY_TIMEOUT_MS`: the lease on a claimed task, in ms; if its worker dies,
   * the task is due again this long after the claim. Default attempt timeout + 30000.
   */
  visibilityTimeoutMs?: number;
  /**
   * `--redis-sub-partitions` / `RETRYD_REDIS_SUB_PARTITIONS`: partitions per tenant in a Redis store, 1 to 256
   * (`RedisStoreOptions.subPartitions`). Default 1.
   */
  redisSubPartitions?: number;
  /** `--grace` / `RETRYD_GRACE_MS`: how long in-flight calls may finish at shutdown, in ms. Default 10000. */
  graceMs: number;
  /** `--sync` / `RETRYD_SQLITE_SYNC`: SQLite durability, `full` (default, nothing acknowledged is lost) or `normal`. */
  sqliteSync: 'full' | 'normal';
  /**
   * `--sqlite-cache` / `RETRYD_SQLITE_CACHE_MIB`: SQLite's page cache, in MiB. Default 16: a steady load's pages stay
   * in it; a larger cache keeps more of a large backlog's indexes in memory, so that inserts read fewer of their
   * pages from the operating system's file cache, at the cost of resident memory (docs/server.md).
   */
  sqliteCacheMiB: number;
  /** `--log-level` / `RETRYD_LOG_LEVEL`: pino level. Default `info`. */
  logLevel: string;
  /**
   * `--role` / `RETRYD_ROLE`: `all` (default) runs the API and the workers; `api` only takes and answers requests;
   * `worker` only makes attempts (no API; `metricsPort` gives it `/metrics` and the health probes). Instances on one PostgreSQL or Redis store share the work.
   */
  role: RetrydRole;
  /**
   * `--protection` / `RETRYD_PROTECTION`: the per-target protections every target has until an operator sets its own
   * (`PUT /targets/{targetKey}`): `on` (default: breakers, adaptive throttling, retry budgets, storm detection and
   * Retry-After holds, with conservative settings) or `off` (for downstreams that fail by design, such as a benchmark's).
   */
  protection: ProtectionMode;
  /**
   * `RETRYD_ENCRYPTION_KEY` (an environment variable only: a flag would show in the process list): the keys credential
   * headers and sensitive bodies are encrypted with, `base64` of 32 bytes, or several `id:base64` entries separated by
   * commas, the first encrypting and all decrypting (see `parseKeyring`). Default none: a literal credential is refused.
   */
  encryptionKey?: string;
  /**
   * `RETRYD_BOOTSTRAP_ADMIN_KEY` (an environment variable only): an API key (`rtd_<16 hex>_<43 base64url>`) created at
   * start, if the store does not hold it yet, as an `admin` key of the `default` tenant; only its hash is stored.
   * Default none. See `bootstrapAdminKey`.
   */
  bootstrapAdminKey?: string;
  /**
   * `RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256` (an environment variable only): the bootstrap key as the store keeps it,
   * `<keyId>:<hex SHA-256 of its secret part>` (`retryd keys hash` prints it), so the key itself need not be in the
   * service's environment. At most one of the two. Default none.
   */
  bootstrapAdminKeySha256?: string;
  /**
   * `--secrets-file` / `RETRYD_SECRETS_FILE`: a JSON file of secrets, read at start: names at its top level are the
   * `default` tenant's, `tenants.<id>` each tenant's, `shared` every tenant's; `{{secret:NAME}}` references resolve from
   * it before the variables (`RETRYD_SECRET_<NAME>`, `RETRYD_TENANT_SECRET_<TENANT>__<NAME>`,
   * `RETRYD_SHARED_SECRET_<NAME>`). Default none.
   */
  secretsFile?: string;
  /**
   * `--credential-headers` / `RETRYD_CREDENTIAL_HEADERS`: header names (comma-separated, any letter case) counted as
   * credentials besides the built-in rule (names holding auth, token, key, secret, password, session, cookie,
   * signature or credential): sealed at enqueue, or refused without `RETRYD_ENCRYPTION_KEY`. Default none.
   */
  credentialHeaders?: string[];
  /**
   * `--grpc-ca-file` / `RETRYD_GRPC_CA_FILE`: a PEM file of CA certificates trusted for `grpcs://` targets besides
   * Node's bundled roots (a private CA), read at start. Default none: the bundled roots and `NODE_EXTRA_CA_CERTS`.
   */
  grpcCaFile?: string;
  /**
   * `--auth-done-upstream` / `RETRYD_AUTH_DONE_UPSTREAM`: a proxy in front authenticates every request, so the service
   * may listen beyond loopback without API keys (every request then acts for the default tenant with every right,
   * until a key is created). Logged as a warning at every start. Default false: without a key, only loopback.
   */
  authDoneUpstream: boolean;
  /**
   * `--allowed-hosts` / `RETRYD_ALLOWED_HOSTS`: host names (comma-separated) a service with no API key yet answers
   * for besides `localhost` and the loopback addresses, on any port; a request for any other `Host` answers
   * `421 HOST_NOT_ALLOWED` (a page whose name is rebound to this machine cannot use an open service). Default none.
   */
  allowedHosts: string[];
  /**
   * `--request-timeout` / `RETRYD_REQUEST_TIMEOUT_MS`: most time, in ms, to receive a whole request, its headers and
   * its body; `408 REQUEST_TIMEOUT` and the connection closed beyond. Default 30000.
   */
  requestTimeoutMs: number;
  /** `--headers-timeout` / `RETRYD_HEADERS_TIMEOUT_MS`: most time, in ms, to receive a request's headers; at most the request timeout. Default 10000. */
  headersTimeoutMs: number;
  /**
   * `--keep-alive-timeout` / `RETRYD_KEEP_ALIVE_TIMEOUT_MS`: how long, in ms, a connection is kept with no request
   * between two; above the idle timeout of a load balancer in front. Default 72000.
   */
  keepAliveTimeoutMs: number;
  /**
   * `--max-connections` / `RETRYD_MAX_CONNECTIONS`: most connections the API holds at once; one over it is closed
   * before it is read. Default half the process's open-file limit, at most 10000 (`defaultMaxConnections`).
   */
  maxConnections?: number;
  /** `--tenant-requests-per-second` / `RETRYD_TENANT_REQUESTS_PER_SECOND`: each tenant's API requests per second, per instance, unless it has its own. Default none. */
  tenantRequestsPerSecond: number | null;
  /** `--tenant-max-pending-tasks` / `RETRYD_TENANT_MAX_PENDING_TASKS`: each tenant's most tasks pending or in flight, unless it has its own. Default none. */
  tenantMaxPendingTasks: number | null;
  /**
   * `--retention-succeeded`, `--retention-dead-letters`, `--retention-cancelled` (`RETRYD_RETENTION_SUCCEEDED` …): how
   * long a finished task is kept, by how it ended, unless its tenant or its policy has its own; then it is deleted
   * with its attempts and its idempotency key. Default 7 days, 30 days, 7 days (`DEFAULT_RETENTION`).
   */
  retention: RetentionPeriods;
  /** `--purge-interval` / `RETRYD_PURGE_INTERVAL_MS`: how often the purge of expired tasks looks, in ms. Default 10000. */
  purgeIntervalMs: number;
  /**
   * `--max-policy-attempts`, `--max-policy-budget`, `--max-policy-delay` (`RETRYD_MAX_POLICY_*`): the most any
   * tenant's policy (registered or inline) may ask for, unless the tenant has its own (`retryd tenants ceilings`); a
   * policy with no budget gets the budget ceiling. Default none.
   */
  ceilings: PolicyCeilings;
}

/** Whether targets are protected by default (see {@link RetrydConfig.protection}). */
export type ProtectionMode = 'on' | 'off';

/** What one `retryd serve` process runs. */
export type RetrydRole = 'all' | 'api' | 'worker';

/** The defaults of {@link RetrydConfig}. */
export const DEFAULT_CONFIG: Readonly<RetrydConfig> = Object.freeze({
  port: 8080,
  host: '127.0.0.1',
  store: DEFAULT_STORE_URL,
  concurrency: 256,
  maxRetryAfterMs: DEFAULT_MAX_RETRY_AFTER_MS,
  allowTargets: [],
  attemptTimeoutMs: 30_000,
  graceMs: 10_000,
  sqliteSync: 'full',
  sqliteCacheMiB: DEFAULT_SQLITE_CACHE_MIB,
  logLevel: 'info',
  role: 'all',
  protection: 'on',
  authDoneUpstream: false,
  allowedHosts: [],
  requestTimeoutMs: DEFAULT_CONNECTION_TIMEOUTS.requestTimeoutMs,
  headersTimeoutMs: DEFAULT_CONNECTION_TIMEOUTS.headersTimeoutMs,
  keepAliveTimeoutMs: DEFAULT_CONNECTION_TIMEOUTS.keepAliveTimeoutMs,
  tenantRequestsPerSecond: null,
  tenantMaxPendingTasks: null,
  retention: DEFAULT_RETENTION,
  purgeIntervalMs: 10_000,
  ceilings: NO_CEILINGS,
});

/** The connect timeout when none is given (`--connect-timeout`), in ms: 5000, or the attempt timeout when shorter. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

/** A flag or variable with a value that breaks its rule; the message names both. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly code = 'INVALID_CONFIG';
}

/** Parses an integer option, naming the flag and the rule when it is wrong. */
export function parseIntegerOption(flag: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(`${flag} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return n;
}

/** Parses an option that takes one of a few words, naming the flag and the choices when it is wrong. */
export function parseChoiceOption<T extends string>(flag: string, value: string, choices: readonly T[]): T {
  if ((choices as readonly string[]).includes(value)) return value as T;
  throw new ConfigError(`${flag} must be one of ${choices.join(', ')}, got ${JSON.stringify(value)}`);
}

/** Parses a retention period (`7d`, `12h`, `90m`, `60s` or ms), naming the flag and the rule when it is wrong. */
export function parseRetentionOption(flag: string, value: string): number {
  return parsePeriodOption(flag, value, MIN_RETENTION_MS, MAX_RETENTION_MS);
}

/** Parses a period (`7d`, `12h`, `90m`, `60s`, `500ms` or plain ms) from `minMs` to `maxMs`, naming the flag and the rule when it is wrong. */
export function parsePeriodOption(flag: string, value: string, minMs: number, maxMs: number): number {
  const ms = parseDurationText(value);
  if (ms === undefined || ms < minMs || ms > maxMs) {
    throw new ConfigError(
      `${flag} must be a period from ${durationText(minMs)} to ${durationText(maxMs)} (a number with ms, s, m, h or d; plain ms), got ${JSON.stringify(value)}`,
    );
  }
  return ms;
}

/**
 * The API server's deadlines and connection cap of `config` (`maxConnections` unset: its default).
 *
 * @throws ConfigError when the headers timeout is longer than the request timeout
 */
export function connectionLimitsOf(config: RetrydConfig): ConnectionLimits {
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    throw new ConfigError(`--headers-timeout must be at most --request-timeout (${config.requestTimeoutMs}), got ${config.headersTimeoutMs}`);
  }
  return {
    ...defaultConnectionLimits(),
    requestTimeoutMs: config.requestTimeoutMs,
    headersTimeoutMs: config.headersTimeoutMs,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    ...(config.maxConnections === undefined ? {} : { maxConnections: config.maxConnections }),
  };
}

/**
 * `--allowed-hosts` normalised (lower-case, IPv6 in brackets).
 *
 * @throws ConfigError naming the first entry that is not a host name without a port or scheme
 */
export function allowedHostsOf(config: RetrydConfig): string[] {
  return config.allowedHosts.map((entry) => {
    const host = normaliseAllowedHost(entry);
    if (host === undefined) {
      throw new ConfigError(`--allowed-hosts must be host names or addresses without a scheme or port (e.g. retryd.internal), got ${JSON.stringify(entry)}`);
    }
    return host;
  });
}

/** Splits a comma-separated list, dropping blanks. */
export function parseListOption(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
