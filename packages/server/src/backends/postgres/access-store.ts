import type { Page } from '../../domain/task.js';
import { decodeCursor, encodeCursor } from '../../store/cursor.js';
import type { AccessStore, ApiKeyQuery, ApiKeyRecord, TenantLimits } from '../../store/store.js';
import type { RunQuery } from './postgres-store.js';
import { keyFromRow, limitsFromRow, type ApiKeyRow, type LimitsRow } from '../sql/access-rows.js';
import { postgresFailure } from './errors.js';
import { translateFailures } from '../../store/failure-boundary.js';

/**
 * {@link AccessStore} on the `api_keys` and `tenant_limits` tables of 006-access.sql, in the store's schema and pool.
 * Every call is one statement, hence atomic on its own: a create settles races on the primary key, a revoke keeps
 * the first time in its own `UPDATE` (revoke-api-key.sql). Get one from `PostgresStore.access`.
 */
export class PostgresAccessStore implements AccessStore {
  readonly #run: RunQuery;

  /** @param run - runs the store's statements (the `*-api-key*` and `*-tenant-limits` ones) */
  constructor(run: RunQuery) {
    this.#run = run;
  }

  async createApiKey(key: ApiKeyRecord): Promise<boolean> {
    const values = [key.keyId, key.tenantId, key.scope, key.name, key.secretHash, key.createdAt, key.revokedAt];
    return (await this.#run('insert-api-key', values)).rowCount === 1;
  }

  async getApiKey(keyId: string): Promise<ApiKeyRecord | undefined> {
    const row = (await this.#run<ApiKeyRow>('get-api-key', [keyId])).rows[0];
    return row === undefined ? undefined : keyFromRow(row);
  }

  /**
   * A page starts at the key its cursor names, the first of that page, read as the extra row of the page before (as
   * `listTargets` does): the first page then starts at `''`, and no id is ever skipped.
   */
  async listApiKeys(query: ApiKeyQuery): Promise<Page<ApiKeyRecord>> {
    const from = query.cursor === undefined ? '' : (decodeCursor('api-keys', query.cursor, 's')[0] as string);
    const rows = query.limit + 1;
    const result =
      query.tenantId === undefined
        ? await this.#run<ApiKeyRow>('list-api-keys', [from, rows])
        : await this.#run<ApiKeyRow>('list-api-keys-of-tenant', [query.tenantId, from, rows]);
    const keys = result.rows.map(keyFromRow);
    const next = keys[query.limit];
    if (next === undefined) return { items: keys };
    return { items: keys.slice(0, query.limit), nextCursor: encodeCursor('api-keys', [next.keyId]) };
  }

  async revokeApiKey(keyId: string, now: number, tenantId?: string): Promise<ApiKeyRecord | undefined> {
    const row = (await this.#run<ApiKeyRow>('revoke-api-key', [keyId, now, tenantId ?? null])).rows[0];
    return row === undefined ? undefined : keyFromRow(row);
  }

  async hasActiveApiKey(): Promise<boolean> {
    return (await this.#run<{ active: boolean }>('has-active-api-key', [])).rows[0]?.active === true;
  }

  async getTenantLimits(tenantId: string): Promise<TenantLimits | undefined> {
    const row = (await this.#run<LimitsRow>('get-tenant-limits', [tenantId])).rows[0];
    return limitsFromRow(row);
  }

  async putTenantLimits(tenantId: string, limits: TenantLimits | null, now: number): Promise<void> {
    if (limits === null) await this.#run('delete-tenant-limits', [tenantId]);
    else await this.#run('put-tenant-limits', [tenantId, limits.requestsPerSecond, limits.maxPendingTasks, now]);
  }
}

translateFailures(PostgresAccessStore, postgresFailure);
