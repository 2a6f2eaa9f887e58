import { readFileSync } from 'node:fs';

/**
 * Where `{{secret:NAME}}` references are resolved: the service asks it at enqueue (is the name known?) and at every
 * dispatch (its value). Implement it to read a vault or a cloud secrets manager; `envSecretProvider` and
 * `fileSecretProvider` are the built-in ones.
 */
export interface SecretProvider {
  /** The secret's value, or undefined when the provider has no secret of that name. May throw when it cannot answer. */
  resolve(name: string): Promise<string | undefined>;
}

/** What a secret name may be: letters, digits and `_`, 1 to 128 of them (it becomes part of a variable's name). */
export const SECRET_NAME_PATTERN = /^[A-Za-z0-9_]{1,128}$/;
/** The prefix of the environment variables `envSecretProvider` reads. */
export const SECRET_ENV_PREFIX = 'RETRYD_SECRET_';

/** Secrets from the environment: `{{secret:STRIPE_KEY}}` is `RETRYD_SECRET_STRIPE_KEY`, read at each call. */
export function envSecretProvider(env: NodeJS.ProcessEnv = process.env): SecretProvider {
  return { resolve: async (name) => (SECRET_NAME_PATTERN.test(name) ? env[`${SECRET_ENV_PREFIX}${name}`] : undefined) };
}

/** `--secrets-file` breaks its rule; the message names the flag and the rule, never a value. */
export class SecretsFileError extends Error {
  override readonly name = 'SecretsFileError';
  readonly code = 'INVALID_CONFIG';
}

/**
 * Secrets from a JSON file of names to string values (`{"STRIPE_KEY": "sk_live_…"}`), read once, at start.
 * @throws SecretsFileError when the file cannot be read, is not such an object, or has a name that breaks the rule
 */
export function fileSecretProvider(path: string, flag = '--secrets-file'): SecretProvider {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const why = error instanceof SyntaxError ? 'is not valid JSON' : `cannot be read (${(error as { code?: string }).code ?? 'error'})`;
    throw new SecretsFileError(`${flag} must name a readable JSON file of secret names to string values; ${path} ${why}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new SecretsFileError(`${flag} must name a JSON object of secret names to string values; ${path} holds another JSON value`);
  }
  const secrets = new Map<string, string>();
  for (const [name, value] of Object.entries(parsed)) {
    if (!SECRET_NAME_PATTERN.test(name)) {
      throw new SecretsFileError(`${flag} must use secret names of 1 to 128 letters, digits or _; ${path} has ${JSON.stringify(name.slice(0, 40))}`);
    }
    if (typeof value !== 'string') throw new SecretsFileError(`${flag} must give each secret a string value; ${name} in ${path} is not a string`);
    secrets.set(name, value);
  }
  return { resolve: async (name) => secrets.get(name) };
}

/** Asks each provider in turn; the first that knows the name answers. */
export function chainSecretProviders(...providers: readonly SecretProvider[]): SecretProvider {
  return {
    async resolve(name) {
      for (const provider of providers) {
        const value = await provider.resolve(name);
        if (value !== undefined) return value;
      }
      return undefined;
    },
  };
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

/** The value with each reference replaced by its secret; the first unknown name when one is missing. */
export async function resolveReferences(
  value: string,
  provider: SecretProvider,
): Promise<{ ok: true; value: string } | { ok: false; name: string }> {
  const names = secretReferences(value);
  const values = new Map<string, string>();
  for (const name of names) {
    const secret = SECRET_NAME_PATTERN.test(name) ? await provider.resolve(name) : undefined;
    if (secret === undefined) return { ok: false, name };
    values.set(name, secret);
  }
  return { ok: true, value: value.replace(REFERENCE, (_, name: string) => values.get(name) as string) };
}
