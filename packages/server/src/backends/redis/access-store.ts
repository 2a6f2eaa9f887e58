import type { RedisClient } from './connection.js';
import type { Page } from '../../domain/task.js';
import { decodeCursor, encodeCursor } from '../../store/cursor.js';
import type { AccessStore, ApiKeyQuery, ApiKeyRecord, ApiKeyScope, TenantLimits } from '../../store/store.js';
import { translateError, redisFailure } from './errors.js';
import { execAll } from './fan-out.js';
import type { AccessKeys } from './keys.js';
import { runScript } from './scripts.js';
import { encodeValue } from './task-codec.js';
import { translateFailures } from '../../store/failure-boundary.js';

/** A field of an API key's hash: every field of its record but `keyId`, which the hash's name holds. */
type ApiKeyField = Exclude<keyof ApiKeyRecord, 'keyId'>;

// A record type, so that a field added to ApiKeyRecord and not stored here fails to compile.
const STORED_FIELDS: Readonly<Record<ApiKeyField, true>> = {
  tenantId: true,
  scope: true,
  name: true,
  secretHash: true,
  createdAt: true,
  revokedAt: true,
};

/**
 * The fields of an API key's hash, named as in {@link ApiKeyRecord}; `revokedAt` is absent while the key is active.
 * The scripts name only `tenantId` and `revokedAt` (checked by `redis-lua-fields.test.ts`).
 */
export const API_KEY_FIELDS = Object.keys(STORED_FIELDS) as readonly ApiKeyField[];

/** What a tenant's limits are stored as, one JSON value per tenant in the `tenantLimits` hash. */
interface StoredLimits extends TenantLimits {
  updatedAt: number;
}

/**
 * {@link AccessStore} in Redis, on the keys of {@link AccessKeys} (outside every partition: a key is read by its id
 * alone). A create and a revoke are each one script, so neither can be seen half done nor race with itself: a create
 * writes the key's hash, its two listing entries and its active mark at once, only if the id is free; a revoke sets
 * `revokedAt` only if it is absent and then drops the active mark. Listings read ids from a sorted set by
 * lexicographic range (byte order), then the hashes in one pipeline (not atomic together; keys are never deleted,
 * so each id read has its hash). Tenant limits are one hash of JSON values: a put is one `HSET`, a delete one `HDEL`.
 */
export class RedisAccessStore implements AccessStore {
  readonly #client: RedisClient;
  readonly #keys: AccessKeys;

  constructor(client: RedisClient, keys: AccessKeys) {
    this.#client = client;
    this.#keys = keys;
  }

  async createApiKey(key: ApiKeyRecord): Promise<boolean> {
    const k = this.#keys;
    const fields = API_KEY_FIELDS.flatMap((field) => (key[field] === null ? [] : [field, String(key[field])]));
    const args = [key.keyId, key.revokedAt === null ? '1' : '0', ...fields];
    const keys = [k.apiKey(key.keyId), k.apiKeys, k.apiKeysOf(key.tenantId), k.activeApiKeys];
    return (await this.#run(() => runScript(this.#client, 'createApiKey', keys, args))) === 1;
  }

  async getApiKey(keyId: string): Promise<ApiKeyRecord | undefined> {
    const flat = (await this.#run(() => this.#client.call('HGETALL', this.#keys.apiKey(keyId)))) as string[];
    return flat.length === 0 ? undefined : decodeApiKey(keyId, flat);
  }

  async listApiKeys(query: ApiKeyQuery): Promise<Page<ApiKeyRecord>> {
    const k = this.#keys;
    const index = query.tenantId === undefined ? k.apiKeys : k.apiKeysOf(query.tenantId);
    // `(` makes the range start just after the cursor's id, whatever its bytes.
    const start = query.cursor === undefined ? '-' : `(${decodeCursor('api-keys', query.cursor, 's')[0] as string}`;
    return this.#run(async () => {
      const ids = await this.#client.zrange(index, start, '+', 'BYLEX', 'LIMIT', 0, query.limit + 1);
      const shown = ids.slice(0, query.limit);
      const pipeline = this.#client.pipeline();
      for (const id of shown) pipeline.call('HGETALL', k.apiKey(id));
      const hashes = (await execAll(pipeline)) as string[][];
      const items = shown.map((id, i) => decodeApiKey(id, hashes[i] ?? []));
      const last = shown[shown.length - 1];
      return ids.length > query.limit && last !== undefined ? { items, nextCursor: encodeCursor('api-keys', [last]) } : { items };
    });
  }

  async revokeApiKey(keyId: string, now: number, tenantId?: string): Promise<ApiKeyRecord | undefined> {
    const k = this.#keys;
    const args = [keyId, String(now), encodeValue(tenantId ?? null)];
    const flat = (await this.#run(() => runScript(this.#client, 'revokeApiKey', [k.apiKey(keyId), k.activeApiKeys], args))) as string[] | null;
    return flat === null ? undefined : decodeApiKey(keyId, flat);
  }

  async hasActiveApiKey(): Promise<boolean> {
    return (await this.#run(() => this.#client.exists(this.#keys.activeApiKeys))) === 1;
  }

  async getTenantLimits(tenantId: string): Promise<TenantLimits | undefined> {
    const json = await this.#run(() => this.#client.hget(this.#keys.tenantLimits, tenantId));
    if (json === null) return undefined;
    const stored = JSON.parse(json) as StoredLimits;
    return { requestsPerSecond: stored.requestsPerSecond, maxPendingTasks: stored.maxPendingTasks };
  }

  async putTenantLimits(tenantId: string, limits: TenantLimits | null, now: number): Promise<void> {
    const key = this.#keys.tenantLimits;
    if (limits === null) {
      await this.#run(() => this.#client.hdel(key, tenantId));
      return;
    }
    const stored: StoredLimits = { requestsPerSecond: limits.requestsPerSecond, maxPendingTasks: limits.maxPendingTasks, updatedAt: now };
    await this.#run(() => this.#client.hset(key, tenantId, JSON.stringify(stored)));
  }

  async #run<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw translateError(error);
    }
  }
}

/** An API key from its hash as `HGETALL` gives it (field, value, ...). */
function decodeApiKey(keyId: string, flat: readonly string[]): ApiKeyRecord {
  const hash = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) hash.set(flat[i] as string, flat[i + 1] as string);
  const text = (field: ApiKeyField) => hash.get(field) ?? '';
  const revokedAt = hash.get('revokedAt');
  return {
    keyId,
    tenantId: text('tenantId'),
    scope: text('scope') as ApiKeyScope,
    name: text('name'),
    secretHash: text('secretHash'),
    createdAt: Number(text('createdAt')),
    revokedAt: revokedAt === undefined ? null : Number(revokedAt),
  };
}

translateFailures(RedisAccessStore, redisFailure);
