import { API_KEY_RULE, hashesMatch, hashSecret, parseApiKey, type ApiKeyParts } from '../access/api-key-token.js';
import { DEFAULT_TENANT } from '../domain/task.js';
import type { ApiKeyRecord, Store } from '../store/store.js';
import { callStore } from '../tasks/store-failure.js';
import { ConfigError } from './retryd-config.js';

/** The environment variable holding the first admin key of a deployment. */
export const BOOTSTRAP_ADMIN_KEY_VARIABLE = 'RETRYD_BOOTSTRAP_ADMIN_KEY';

/** The environment variable holding the first admin key of a deployment as its id and hash (`retryd keys hash`). */
export const BOOTSTRAP_ADMIN_KEY_SHA256_VARIABLE = 'RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256';

const KEY_RULE = `an API key: ${API_KEY_RULE}`;
const HASH_RULE =
  "a key's id and hash as retryd keys hash prints them: its 16 lower-case hex digits, :, then the 64 hex digits of the SHA-256 of the part after its second _";

/** The bootstrap key as the store keeps it: its id and the hash of its secret part, and the variable it came from. */
export interface BootstrapKey {
  keyId: string;
  /** Lower-case hex SHA-256 of the key's secret part (`hashSecret`). */
  secretHash: string;
  /** The variable that gave it, for the log lines and errors. */
  variable: string;
}

/**
 * The key of `RETRYD_BOOTSTRAP_ADMIN_KEY`, as the store keeps it; checked before the store opens.
 *
 * @throws ConfigError naming the variable and the rule (never echoing the value: it is a secret)
 */
export function parseBootstrapAdminKey(value: string): BootstrapKey {
  const parts = parseApiKey(value.trim());
  if (parts === undefined) throw new ConfigError(`${BOOTSTRAP_ADMIN_KEY_VARIABLE} must be ${KEY_RULE}; got ${value.length} characters that are not one`);
  return { keyId: parts.keyId, secretHash: hashSecret(parts.secret), variable: BOOTSTRAP_ADMIN_KEY_VARIABLE };
}

/**
 * The key of `RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256`: `<keyId>:<SHA-256 of the secret part, hex>`, what the store keeps, so
 * the key itself need not be in the service's environment. Upper-case hex digits of the hash are taken as lower-case.
 *
 * @throws ConfigError naming the variable and the rule
 */
export function parseBootstrapAdminKeyHash(value: string): BootstrapKey {
  const match = /^([0-9a-f]{16}):([0-9a-fA-F]{64})$/.exec(value.trim());
  if (match === null) {
    // `sha256sum` prints the hash, two spaces and `-`: the likeliest slip when building the value by hand.
    const hint = /\s-$/.test(value.trim()) ? " (sha256sum prints the hash then '  -': keep the hash alone)" : '';
    throw new ConfigError(`${BOOTSTRAP_ADMIN_KEY_SHA256_VARIABLE} must be ${HASH_RULE}; got ${value.length} characters that are not one${hint}`);
  }
  return { keyId: match[1] as string, secretHash: (match[2] as string).toLowerCase(), variable: BOOTSTRAP_ADMIN_KEY_SHA256_VARIABLE };
}

/**
 * The bootstrap key of the environment: `RETRYD_BOOTSTRAP_ADMIN_KEY` (the key) or `RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256`
 * (its id and hash), undefined when neither is set.
 *
 * @throws ConfigError when both are set, or the one set is malformed
 */
export function bootstrapKeyOf(values: { key?: string | undefined; keySha256?: string | undefined }): BootstrapKey | undefined {
  if (values.key !== undefined && values.keySha256 !== undefined) {
    throw new ConfigError(`${BOOTSTRAP_ADMIN_KEY_VARIABLE} and ${BOOTSTRAP_ADMIN_KEY_SHA256_VARIABLE} are both set: set one of them, the key or its hash`);
  }
  if (values.key !== undefined) return parseBootstrapAdminKey(values.key);
  if (values.keySha256 !== undefined) return parseBootstrapAdminKeyHash(values.keySha256);
  return undefined;
}

/** What `RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256` takes for a key: `<keyId>:<hex SHA-256 of its secret part>` (`retryd keys hash`). */
export function bootstrapHashOf(key: ApiKeyParts): string {
  return `${key.keyId}:${hashSecret(key.secret)}`;
}

/** What {@link bootstrapAdminKey} found or did: the key made now, already there, or there and revoked (left so). */
export type BootstrapOutcome = 'created' | 'present' | 'revoked';

/**
 * Makes sure the store holds the bootstrap key as an `admin` key of the default tenant, so a fresh deployment has its
 * first key without a shell into the store. Idempotent: a restart (or another instance starting at the same time)
 * with the same key finds it and adds nothing; a different key given later is added beside the first (the way to
 * hand over to a new one: set it, restart, revoke the old one). A revoked key stays revoked: the variable never
 * brings back a key an operator revoked.
 *
 * @throws ConfigError when the store holds this key id with another secret, or as a narrower key or another tenant's
 */
export async function bootstrapAdminKey(store: Pick<Store, 'kind' | 'access'>, key: BootstrapKey, now: number): Promise<{ outcome: BootstrapOutcome; keyId: string }> {
  const record: ApiKeyRecord = {
    keyId: key.keyId,
    tenantId: DEFAULT_TENANT,
    scope: 'admin',
    name: `bootstrap (${key.variable})`,
    secretHash: key.secretHash,
    createdAt: now,
    revokedAt: null,
  };
  // Read first, then create: the create refuses a taken id, so two instances starting together make one record.
  let existing = await callStore(store.kind, 'read the bootstrap API key', () => store.access.getApiKey(key.keyId));
  if (existing === undefined) {
    if (await callStore(store.kind, 'create the bootstrap API key', () => store.access.createApiKey(record))) return { outcome: 'created', keyId: key.keyId };
    existing = await callStore(store.kind, 'read the bootstrap API key', () => store.access.getApiKey(key.keyId));
    if (existing === undefined) throw new Error(`the store refused API key ${key.keyId} as taken, then did not hold it`);
  }
  if (!hashesMatch(key.secretHash, existing.secretHash) || existing.tenantId !== DEFAULT_TENANT || existing.scope !== 'admin') {
    throw new ConfigError(
      `${key.variable}: the store already holds API key ${key.keyId}, but not as this key of the ${DEFAULT_TENANT} tenant with scope admin ` +
        '(another secret, tenant or scope); make a new key for the variable',
    );
  }
  return { outcome: existing.revokedAt === null ? 'present' : 'revoked', keyId: key.keyId };
}
