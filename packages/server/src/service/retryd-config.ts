import { normaliseAllowedHost } from '../access/open-hosts.js';
import { defaultConnectionLimits, type ConnectionLimits } from '../api/connection-limits.js';
import type { PolicyCeilings } from '../policies/policy-ceilings.js';
import type { RetentionPeriods } from '../retention/retention-periods.js';
import { settingEntries, type ServeSettingValues } from './serve-settings.js';
import { ConfigError } from './setting-parsers.js';

export { DEFAULT_CONNECT_TIMEOUT_MS, type ProtectionMode, type RetrydRole } from './serve-settings.js';
export { ConfigError, parseChoiceOption, parseIntegerOption, parseListOption, parsePeriodOption, parseRetentionOption } from './setting-parsers.js';

/**
 * Everything `retryd serve` can be told: the settings of `SERVE_SETTINGS` in serve-settings.ts (where each one's flag, variable,
 * default and meaning are), with the retention periods and the policy ceilings gathered into objects of their own.
 */
export type RetrydConfig = Omit<ServeSettingValues, GatheredSetting> & {
  /** `--retention-succeeded`, `--retention-dead-letters`, `--retention-cancelled`. Default `DEFAULT_RETENTION`. */
  retention: RetentionPeriods;
  /** `--max-policy-attempts`, `--max-policy-budget`, `--max-policy-delay`. Default none. */
  ceilings: PolicyCeilings;
};

type GatheredSetting =
  | 'retentionSucceededMs'
  | 'retentionDeadLettersMs'
  | 'retentionCancelledMs'
  | 'maxPolicyAttempts'
  | 'maxPolicyBudgetMs'
  | 'maxPolicyDelayMs';

/** The config of the settings' values: the retention periods and the policy ceilings gathered. */
export function configOfSettings(values: ServeSettingValues): RetrydConfig {
  const { retentionSucceededMs, retentionDeadLettersMs, retentionCancelledMs, maxPolicyAttempts, maxPolicyBudgetMs, maxPolicyDelayMs, ...rest } = values;
  return {
    ...rest,
    retention: { succeededMs: retentionSucceededMs, deadLettersMs: retentionDeadLettersMs, cancelledMs: retentionCancelledMs },
    ceilings: { maxAttempts: maxPolicyAttempts, totalBudgetMs: maxPolicyBudgetMs, maxDelayMs: maxPolicyDelayMs },
  };
}

/** The default of every setting that has one, by its name. */
function settingDefaults(): ServeSettingValues {
  const defaults: Record<string, unknown> = {};
  for (const [name, setting] of settingEntries()) if (setting.default !== undefined) defaults[name] = setting.default;
  // Every setting the type requires has a default: `required` in serve-settings.ts insists on one.
  return defaults as ServeSettingValues;
}

/** The defaults of {@link RetrydConfig}. */
export const DEFAULT_CONFIG: Readonly<RetrydConfig> = Object.freeze(configOfSettings(settingDefaults()));

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
