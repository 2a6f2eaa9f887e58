import { readFileSync } from 'node:fs';
import { TENANT_ID_PATTERN } from '../access/api-keys.js';
import { DEFAULT_TENANT } from '../domain/task.js';

/**
 * Which secret a `{{secret:NAME}}` reference asks for: the tenant of the task (or of the target) that names it, and the
 * name. A name belongs to a tenant: tenant `acme`'s `STRIPE_KEY` and tenant `default`'s are two secrets.
 */
export interface SecretRef {
  tenantId: string;
  name: string;
}

/**
 * Where `{{secret:NAME}}` references are resolved: the service asks it at enqueue (is the name known?) and at every
 * dispatch (its value). Implement it to read a vault or a cloud secrets manager; `envSecretProvider` and
 * `fileSecretProvider` are the built-in ones.
 */
export interface SecretProvider {
  /**
   * The value of `ref.name` for `ref.tenantId`: the tenant's own secret of that name, else one the operator shares with
   * every tenant; undefined when there is neither, whether no tenant has such a secret or only others do (the two
   * must not be told apart). Never another tenant's: a provider that answers without reading `tenantId` hands every
   * tenant every secret. May throw when it cannot answer.
   */
  resolve(ref: SecretRef): Promise<string | undefined>;
}

/** What a secret name may be: letters, digits and `_`, 1 to 128 of them (it becomes part of a variable's name). */
export const SECRET_NAME_PATTERN = /^[A-Za-z0-9_]{1,128}$/;
/** The prefix of the variables of the `default` tenant's secrets: `RETRYD_SECRET_<NAME>`. */
export const SECRET_ENV_PREFIX = 'RETRYD_SECRET_';
/** The prefix of the variables of a tenant's secrets: `RETRYD_TENANT_SECRET_<TENANT>__<NAME>`. */
export const TENANT_SECRET_ENV_PREFIX = 'RETRYD_TENANT_SECRET_';
/** The prefix of the variables of the secrets shared with every tenant: `RETRYD_SHARED_SECRET_<NAME>`. */
export const SHARED_SECRET_ENV_PREFIX = 'RETRYD_SHARED_SECRET_';

/** The variable that holds tenant `tenantId`'s secret `name`: `RETRYD_TENANT_SECRET_acme__STRIPE_KEY`. */
export function tenantSecretVariable(tenantId: string, name: string): string {
  return `${TENANT_SECRET_ENV_PREFIX}${tenantId}__${name}`;
}

/**
 * The ways the rest of a `RETRYD_TENANT_SECRET_` variable reads as `<TENANT>__<NAME>`: tenant ids may hold `_` and
 * names `__`, so `a__b__C` is tenant `a`'s `b__C` and tenant `a__b`'s `C`. Such a variable serves no tenant.
 */
function readingsOf(rest: string): SecretRef[] {
  const readings: SecretRef[] = [];
  for (let at = rest.indexOf('__'); at >= 0; at = rest.indexOf('__', at + 1)) {
    const tenantId = rest.slice(0, at);
    const name = rest.slice(at + 2);
    if (TENANT_ID_PATTERN.test(tenantId) && SECRET_NAME_PATTERN.test(name)) readings.push({ tenantId, name });
  }
  return readings;
}

/**
 * Secrets from the environment, read at each call: tenant `acme`'s `{{secret:STRIPE_KEY}}` is
 * `RETRYD_TENANT_SECRET_acme__STRIPE_KEY`, else the shared `RETRYD_SHARED_SECRET_STRIPE_KEY`. The `default` tenant's
 * are also `RETRYD_SECRET_<NAME>`, as before tenants had secrets of their own, so a service with one tenant keeps its
 * variables. A variable that reads as two tenants' (see {@link checkSecretVariables}) serves neither.
 */
export function envSecretProvider(env: NodeJS.ProcessEnv = process.env): SecretProvider {
  return {
    resolve: async ({ tenantId, name }) => {
      if (!SECRET_NAME_PATTERN.test(name)) return undefined;
      const own = readingsOf(`${tenantId}__${name}`).length === 1 ? env[tenantSecretVariable(tenantId, name)] : undefined;
      return own ?? (tenantId === DEFAULT_TENANT ? env[`${SECRET_ENV_PREFIX}${name}`] : undefined) ?? env[`${SHARED_SECRET_ENV_PREFIX}${name}`];
    },
  };
}

/**
 * The secrets configuration breaks its rule (`--secrets-file`, a secret variable, `--credential-headers`); the message
 * names the flag or variable and the rule, never a value.
 */
export class SecretsFileError extends Error {
  override readonly name = 'SecretsFileError';
  readonly code = 'INVALID_CONFIG';
}

/**
 * Refuses secret variables that would not serve whom they seem to: a `RETRYD_TENANT_SECRET_` variable that does not
 * read as `<TENANT>__<NAME>`, or reads so in two ways (tenant `a`'s `b__C` and tenant `a__b`'s `C`: give it in the
 * secrets file instead), and a `RETRYD_SHARED_SECRET_` one whose name breaks the rule. Checked at start.
 * @throws SecretsFileError naming the variable and the rule, never its value
 */
export function checkSecretVariables(env: NodeJS.ProcessEnv = process.env): void {
  for (const variable of Object.keys(env)) {
    if (variable.startsWith(TENANT_SECRET_ENV_PREFIX)) {
      const readings = readingsOf(variable.slice(TENANT_SECRET_ENV_PREFIX.length));
      if (readings.length === 0) {
        throw new SecretsFileError(
          `${variable} must be ${TENANT_SECRET_ENV_PREFIX}<TENANT>__<NAME> (TENANT: ${TENANT_ID_RULE}; NAME: ${SECRET_NAME_RULE})`,
        );
      }
      if (readings.length > 1) {
        const as = readings.map((r) => `tenant ${r.tenantId}'s ${r.name}`).join(' and as ');
        throw new SecretsFileError(`${variable} must name one tenant's secret; it reads as ${as}: give it in --secrets-file instead`);
      }
    } else if (variable.startsWith(SHARED_SECRET_ENV_PREFIX) && !SECRET_NAME_PATTERN.test(variable.slice(SHARED_SECRET_ENV_PREFIX.length))) {
      throw new SecretsFileError(`${variable} must be ${SHARED_SECRET_ENV_PREFIX}<NAME> (NAME: ${SECRET_NAME_RULE})`);
    }
  }
}

const SECRET_NAME_RULE = '1 to 128 letters, digits or _';
const TENANT_ID_RULE = '1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit';

/** A secrets file's sections (see {@link fileSecretProvider}). */
const TENANTS_SECTION = 'tenants';
const SHARED_SECTION = 'shared';

/**
 * Secrets from a JSON file, read once, at start. Each secret belongs to a tenant, or is shared with every tenant on
 * purpose:
 *
 * ```json
 * {
 *   "STRIPE_KEY": "sk_live_…",
 *   "tenants": { "acme": { "STRIPE_KEY": "sk_live_…" } },
 *   "shared": { "HOOKS_RELAY_TOKEN": "…" }
 * }
 * ```
 *
 * A name at the top level is the `default` tenant's (a file written before tenants had secrets of their own keeps
 * working for a service with one tenant); `tenants` gives each tenant's by tenant id; `shared` those every tenant may
 * name. A tenant's own secret wins over a shared one of the same name.
 * @throws SecretsFileError when the file cannot be read, is not such an object, or has a name, tenant id or value that
 * breaks the rule, or a `default` secret given both at the top level and in `tenants.default`
 */
export function fileSecretProvider(path: string, flag = '--secrets-file'): SecretProvider {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const why = error instanceof SyntaxError ? 'is not valid JSON' : `cannot be read (${(error as { code?: string }).code ?? 'error'})`;
    throw new SecretsFileError(`${flag} must name a readable JSON file of secret names to string values; ${path} ${why}`);
  }
  if (!isObject(parsed)) {
    throw new SecretsFileError(`${flag} must name a JSON object of secret names to string values; ${path} holds another JSON value`);
  }
  const byTenant = new Map<string, Map<string, string>>();
  const shared = new Map<string, string>();
  const section = (where: string, value: unknown, into: Map<string, string>) => {
    if (!isObject(value)) throw new SecretsFileError(`${flag} must give ${where} as an object of secret names to string values; in ${path} it is not one`);
    for (const [name, secret] of Object.entries(value)) addSecret(into, name, secret, where);
  };
  const addSecret = (into: Map<string, string>, name: string, value: unknown, where: string) => {
    const at = where === '' ? '' : ` in ${where}`;
    if (!SECRET_NAME_PATTERN.test(name)) {
      throw new SecretsFileError(`${flag} must use secret names of ${SECRET_NAME_RULE}; ${path} has ${JSON.stringify(name.slice(0, 40))}${at}`);
    }
    if (typeof value !== 'string') throw new SecretsFileError(`${flag} must give each secret a string value; ${name}${at} in ${path} is not a string`);
    if (into.has(name)) {
      throw new SecretsFileError(`${flag} must give each secret of a tenant once; ${name} of tenant ${DEFAULT_TENANT} is both at the top level and in tenants.${DEFAULT_TENANT} in ${path}`);
    }
    into.set(name, value);
  };
  const tenantSecrets = (tenantId: string) => {
    let secrets = byTenant.get(tenantId);
    if (secrets === undefined) byTenant.set(tenantId, (secrets = new Map()));
    return secrets;
  };
  for (const [key, value] of Object.entries(parsed)) {
    if (key === SHARED_SECTION) section(SHARED_SECTION, value, shared);
    else if (key === TENANTS_SECTION) {
      if (!isObject(value)) throw new SecretsFileError(`${flag} must give tenants as an object of tenant ids to their secrets; in ${path} it is not one`);
      for (const [tenantId, secrets] of Object.entries(value)) {
        if (!TENANT_ID_PATTERN.test(tenantId)) {
          throw new SecretsFileError(`${flag} must use tenant ids of ${TENANT_ID_RULE}; ${path} has ${JSON.stringify(tenantId.slice(0, 70))} in tenants`);
        }
        section(`tenants.${tenantId}`, secrets, tenantSecrets(tenantId));
      }
    } else addSecret(tenantSecrets(DEFAULT_TENANT), key, value, '');
  }
  return { resolve: async ({ tenantId, name }) => byTenant.get(tenantId)?.get(name) ?? shared.get(name) };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Asks each provider in turn; the first that knows the name for the tenant answers (each answers with the tenant's own
 * secret, else a shared one).
 */
export function chainSecretProviders(...providers: readonly SecretProvider[]): SecretProvider {
  return {
    async resolve(ref) {
      for (const provider of providers) {
        const value = await provider.resolve(ref);
        if (value !== undefined) return value;
      }
      return undefined;
    },
  };
}

/**
 * The rule an unknown reference breaks, for tenant `tenantId`: the same whether no tenant has the name or only
 * another does, so that a tenant learns nothing of others' secrets by trying names.
 */
export function unknownSecretRule(tenantId: string, name: string): string {
  const own = tenantId === DEFAULT_TENANT ? `${SECRET_ENV_PREFIX}${name}` : tenantSecretVariable(tenantId, name);
  return `{{secret:${name}}} must name a secret of tenant ${tenantId} or a shared one (--secrets-file, ${own} or ${SHARED_SECRET_ENV_PREFIX}${name}); it is unknown`;
}

const REFERENCE = /\{\{secret:([^{}]*)\}\}/g;

/** The names a header value refers to with `{{secret:NAME}}`, in order (a name that breaks the rule included). */
export function secretReferences(value: string): string[] {
  return [...value.matchAll(REFERENCE)].map((m) => m[1] as string);
}

/** Whether a header value holds at least one `{{secret:NAME}}` reference. */
export function hasSecretReference(value: string): boolean {
  return value.includes('{{secret:');
}

/**
 * The value with each reference replaced by tenant `tenantId`'s secret; the first unknown name when one is missing.
 * Each secret's value is also handed to `sent`, when given, as it is revealed.
 */
export async function resolveReferences(
  value: string,
  tenantId: string,
  provider: SecretProvider,
  sent?: (secret: string) => void,
): Promise<{ ok: true; value: string } | { ok: false; name: string }> {
  const names = secretReferences(value);
  const values = new Map<string, string>();
  for (const name of names) {
    const secret = SECRET_NAME_PATTERN.test(name) ? await provider.resolve({ tenantId, name }) : undefined;
    if (secret === undefined) return { ok: false, name };
    values.set(name, secret);
    sent?.(secret);
  }
  return { ok: true, value: value.replace(REFERENCE, (_, name: string) => values.get(name) as string) };
}
