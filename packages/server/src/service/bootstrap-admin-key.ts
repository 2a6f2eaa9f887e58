import { API_KEY_PREFIX, hashSecret, parseApiKey, secretMatches, type ApiKeyParts } from '../access/api-key-token.js';
import { DEFAULT_TENANT } from '../domain/task.js';
import type { ApiKeyRecord, Store } from '../store/store.js';
import { callStore } from '../tasks/store-failure.js';
import { ConfigError } from './retryd-config.js';

/** The environment variable holding the first admin key of a deployment. */
export const BOOTSTRAP_ADMIN_KEY_VARIABLE = 'RETRYD_BOOTSTRAP_ADMIN_KEY';

/** The name the bootstrap key is stored under (shown by `retryd keys list` and `GET /api-keys`). */
export const BOOTSTRAP_KEY_NAME = `bootstrap (${BOOTSTRAP_ADMIN_KEY_VARIABLE})`;

const RULE = `an API key: ${API_KEY_PREFIX}, 16 lower-case hex digits, _, then 43 base64url characters (A-Z a-z 0-9 - _), as retryd keys create prints one`;

/**
 * The key of `RETRYD_BOOTSTRAP_ADMIN_KEY`, split; checked before the store opens.
 *
 * @throws ConfigError naming the variable and the rule (never echoing the value: it is a secret)
 */
export function parseBootstrapAdminKey(value: string): ApiKeyParts {
  const parts = parseApiKey(value.trim());
  if (parts === undefined) throw new ConfigError(`${BOOTSTRAP_ADMIN_KEY_VARIABLE} must be ${RULE}; got ${value.length} characters that are not one`);
  return parts;
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
export async function bootstrapAdminKey(store: Pick<Store, 'kind' | 'access'>, key: ApiKeyParts, now: number): Promise<{ outcome: BootstrapOutcome; keyId: string }> {
  const record: ApiKeyRecord = {
    keyId: key.keyId,
    tenantId: DEFAULT_TENANT,
    scope: 'admin',
    name: BOOTSTRAP_KEY_NAME,
    secretHash: hashSecret(key.secret),
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
  if (!secretMatches(key.secret, existing.secretHash) || existing.tenantId !== DEFAULT_TENANT || existing.scope !== 'admin') {
    throw new ConfigError(
      `${BOOTSTRAP_ADMIN_KEY_VARIABLE}: the store already holds API key ${key.keyId}, but not as this key of the ${DEFAULT_TENANT} tenant with scope admin ` +
        '(another secret, tenant or scope); make a new key for the variable',
    );
  }
  return { outcome: existing.revokedAt === null ? 'present' : 'revoked', keyId: key.keyId };
}
