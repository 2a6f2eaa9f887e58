import { DEFAULT_SQLITE_CACHE_MIB } from '../backends/sqlite/connection.js';
import { DEFAULT_STORE_URL } from './open-store.js';
import { NO_CEILINGS, type PolicyCeilings } from '../policies/policy-ceilings.js';
import { DEFAULT_RETENTION, durationText, MAX_RETENTION_MS, MIN_RETENTION_MS, parseDurationText, type RetentionPeriods } from '../retention/retention-periods.js';

/** Everything `retryd serve` can be told, with its flag and environment variable. */
export interface RetrydConfig {
  /** `--port` / `RETRYD_PORT`: HTTP port (0 picks a free one). Default 8080. */
  port: number;
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
   * `worker` only makes attempts (no HTTP port). Instances on one PostgreSQL or Redis store share the work.
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
   * `--secrets-file` / `RETRYD_SECRETS_FILE`: a JSON file of secret names to values, read at start, that
   * `{{secret:NAME}}` references resolve from before the `RETRYD_SECRET_<NAME>` variables. Default none.
   */
  secretsFile?: string;
  /**
   * `--auth-done-upstream` / `RETRYD_AUTH_DONE_UPSTREAM`: a proxy in front authenticates every request, so the service
   * may listen beyond loopback without API keys (every request then acts for the default tenant with every right,
   * until a key is created). Logged as a warning at every start. Default false: without a key, only loopback.
   */
  authDoneUpstream: boolean;
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
  allowTargets: [],
  attemptTimeoutMs: 30_000,
  graceMs: 10_000,
  sqliteSync: 'full',
  sqliteCacheMiB: DEFAULT_SQLITE_CACHE_MIB,
  logLevel: 'info',
  role: 'all',
  protection: 'on',
  authDoneUpstream: false,
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

/** Splits a comma-separated list, dropping blanks. */
export function parseListOption(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
