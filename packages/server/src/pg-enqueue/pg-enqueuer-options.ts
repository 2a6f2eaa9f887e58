import { MAX_POLICY_MS, type Clock } from '@retryd/core';
import { DEFAULT_TENANT } from '../domain/task.js';
import { TENANT_ID_PATTERN } from '../access/api-keys.js';
import { checkSchemaName, DEFAULT_SCHEMA } from '../backends/postgres/connection.js';
import { CEILING_FIELDS, type PolicyCeilings } from '../policies/policy-ceilings.js';
import { durationText, parseDurationText } from '../retention/retention-periods.js';
import { parseKeyring } from '../secrets/encryption-keys.js';
import { parseCredentialHeaderNames } from '../secrets/credential-header-names.js';
import { chainSecretProviders, checkSecretVariables, envSecretProvider, fileSecretProvider } from '../secrets/secret-provider.js';
import { TaskSecrets } from '../secrets/task-secrets.js';
import { parseAllowList, TargetGuard } from '../security/target-guard.js';

/**
 * Options of `createPgEnqueuer`. Each one the service also has defaults to the environment variable `retryd serve`
 * reads, so an application deployed beside the service with the same environment checks and seals tasks alike.
 */
export interface PgEnqueuerOptions {
  /** retryd's schema in the caller's database, as in the service's `--store postgres://…?schema=`. Default `retryd`. */
  schema?: string;
  /** The tenant the tasks belong to (as an API key's tenant). Default `default`. */
  tenantId?: string;
  /**
   * The keys credential headers and sensitive bodies are sealed with, in `RETRYD_ENCRYPTION_KEY`'s format (base64 of
   * 32 bytes, or `id:base64,id:base64`: the first seals). Default `RETRYD_ENCRYPTION_KEY`; none: a literal credential
   * header is refused, as the API refuses it. The service must hold the same key to open them.
   */
  encryptionKey?: string;
  /**
   * The secrets file `{{secret:NAME}}` references must name a secret of (the tenant's own or a shared one), as the
   * service's `--secrets-file`. Default `RETRYD_SECRETS_FILE`, then the `RETRYD_TENANT_SECRET_<TENANT>__<NAME>`,
   * `RETRYD_SECRET_<NAME>` (the `default` tenant's) and `RETRYD_SHARED_SECRET_<NAME>` variables.
   */
  secretsFile?: string;
  /**
   * Header names counted as credentials besides the built-in rule, as the service's `--credential-headers` (a string
   * with commas or an array). Default `RETRYD_CREDENTIAL_HEADERS`; none.
   */
  credentialHeaders?: string | readonly string[];
  /**
   * Networks exempt from the private-address block at creation, as `--allow-targets` (CIDRs, a string with commas
   * or an array). Default `RETRYD_ALLOW_TARGETS`; none: loopback, private, link-local and metadata targets are refused.
   */
  allowTargets?: string | readonly string[];
  /**
   * The service's ceilings on inline policies and on a tenant's `default` (`--max-policy-attempts|budget|delay`);
   * a tenant's own (`retryd tenants ceilings`) are read from the schema. Default `RETRYD_MAX_POLICY_ATTEMPTS`,
   * `RETRYD_MAX_POLICY_BUDGET`, `RETRYD_MAX_POLICY_DELAY`; none: no service ceiling.
   */
  ceilings?: Partial<PolicyCeilings>;
  /** Where the defaults above are read. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The source of "now" (epoch ms): creation and due times. Default the system clock. */
  clock?: Pick<Clock, 'now'>;
}

/** What an enqueuer is made of, from its options and the environment. */
export interface PgEnqueuerSettings {
  schema: string;
  tenantId: string;
  secrets: TaskSecrets;
  guard: TargetGuard;
  ceilings: PolicyCeilings;
}

/**
 * The settings of `options`, each defaulted from `options.env` as `retryd serve` reads it.
 *
 * @throws TypeError or RangeError naming the option (or variable) and its rule; `EncryptionKeyError`,
 *   `InvalidAllowListError`, `SecretsFileError` as the service throws them at start
 */
export function pgEnqueuerSettings(options: PgEnqueuerOptions): PgEnqueuerSettings {
  const env = options.env ?? process.env;
  const schema = checkSchemaName(options.schema ?? DEFAULT_SCHEMA, '`schema`');
  const tenantId = options.tenantId ?? DEFAULT_TENANT;
  if (!TENANT_ID_PATTERN.test(tenantId)) {
    throw new TypeError(`Expected \`tenantId\` to be 1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit; got ${JSON.stringify(tenantId)}.`);
  }
  const key = options.encryptionKey ?? env.RETRYD_ENCRYPTION_KEY;
  const keyring = key === undefined ? undefined : parseKeyring(key, options.encryptionKey === undefined ? 'RETRYD_ENCRYPTION_KEY' : '`encryptionKey`');
  const file = options.secretsFile ?? env.RETRYD_SECRETS_FILE;
  checkSecretVariables(env);
  const references = envSecretProvider(env);
  const provider = file === undefined ? references : chainSecretProviders(fileSecretProvider(file, options.secretsFile === undefined ? 'RETRYD_SECRETS_FILE' : '`secretsFile`'), references);
  const allow = parseAllowList(options.allowTargets ?? env.RETRYD_ALLOW_TARGETS);
  // Host names are resolved by the system resolver, as the service's check at creation resolves them.
  const guard = new TargetGuard({ allow });
  const credentialHeaders = parseCredentialHeaderNames(
    options.credentialHeaders ?? env.RETRYD_CREDENTIAL_HEADERS,
    options.credentialHeaders === undefined ? 'RETRYD_CREDENTIAL_HEADERS' : '`credentialHeaders`',
  );
  return { schema, tenantId, secrets: new TaskSecrets({ keyring, provider, credentialHeaders }), guard, ceilings: ceilingsOf(options.ceilings, env) };
}

/** The variable of each ceiling, as `retryd serve` reads it. */
const CEILING_VARIABLES = {
  maxAttempts: 'RETRYD_MAX_POLICY_ATTEMPTS',
  totalBudgetMs: 'RETRYD_MAX_POLICY_BUDGET',
  maxDelayMs: 'RETRYD_MAX_POLICY_DELAY',
} as const satisfies Record<keyof PolicyCeilings, string>;

/** Each ceiling from `given`, else from its variable (attempts: 1 to 10,000; periods: 7d, 12h, 90m, 60s or ms), else none. */
function ceilingsOf(given: Partial<PolicyCeilings> | undefined, env: NodeJS.ProcessEnv): PolicyCeilings {
  const ceilings: PolicyCeilings = { maxAttempts: null, totalBudgetMs: null, maxDelayMs: null };
  for (const field of CEILING_FIELDS) {
    const own = given?.[field];
    const max = field === 'maxAttempts' ? 10_000 : MAX_POLICY_MS;
    if (own !== undefined) {
      if (own !== null && (!Number.isSafeInteger(own) || own < 1 || own > max)) {
        throw new RangeError(`Expected \`ceilings.${field}\` to be null or an integer from 1 to ${max}; got ${String(own)}.`);
      }
      ceilings[field] = own;
      continue;
    }
    const text = env[CEILING_VARIABLES[field]];
    if (text === undefined || text === '') continue;
    const value = field === 'maxAttempts' ? (/^\d+$/.test(text.trim()) ? Number(text) : undefined) : parseDurationText(text);
    if (value === undefined || value < 1 || value > max) {
      const rule = field === 'maxAttempts' ? `an integer from 1 to ${max}` : `a period from 1 ms to ${durationText(max)} (a number with ms, s, m, h or d; plain ms)`;
      throw new RangeError(`${CEILING_VARIABLES[field]} must be ${rule}, got ${JSON.stringify(text)}`);
    }
    ceilings[field] = value;
  }
  return ceilings;
}
