import type { Database } from 'better-sqlite3';
import type { Page } from '../../domain/task.js';
import { decodeCursor, encodeCursor, pageOf } from '../../store/cursor.js';
import type { AccessStore, ApiKeyQuery, ApiKeyRecord, TenantLimits } from '../../store/store.js';
import { prepare, type Prepared } from './prepared.js';
import { keyFromRow, keyToRow, limitsFromRow, type ApiKeyRow, type LimitsRow } from '../sql/access-rows.js';

// The access sub-port on SQLite: the `api_keys` and `tenant_limits` tables of 005-access.sql. Each call is one
// statement (hence atomic on its own, across processes too); none runs on the engine's path.

const KEY_COLUMNS = 'key_id, tenant_id, scope, name, secret_hash, created_at, revoked_at';

/**
 * Inserts a key unless its id is taken. Params: the columns by name. 1 change when created, 0 when the id was taken
 * (the primary key settles a race between processes: the second insert finds the first's row).
 */
export const INSERT_API_KEY = `
INSERT INTO api_keys (${KEY_COLUMNS})
VALUES (@key_id, @tenant_id, @scope, @name, @secret_hash, @created_at, @revoked_at)
ON CONFLICT (key_id) DO NOTHING`;

/** One key by id. Params: `keyId`. Returns an {@link ApiKeyRow} or nothing. */
export const GET_API_KEY = `SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_id = ?`;

/**
 * A page of a tenant's keys after the cursor's id, through `api_keys_by_tenant`. Params: `tenantId`, the id the page
 * starts after, rows to return (page size + 1). The first page has a statement of its own ({@link
 * FIRST_API_KEYS_OF_TENANT}) rather than start after `''`, so that no id, however odd, is skipped.
 */
export const LIST_API_KEYS_OF_TENANT = `
SELECT ${KEY_COLUMNS} FROM api_keys WHERE tenant_id = ? AND key_id > ? ORDER BY key_id LIMIT ?`;

/** As {@link LIST_API_KEYS_OF_TENANT} from the start: the first page, `''` included. Params: `tenantId`, rows. */
export const FIRST_API_KEYS_OF_TENANT = `SELECT ${KEY_COLUMNS} FROM api_keys WHERE tenant_id = ? ORDER BY key_id LIMIT ?`;

/** One page of every tenant's keys, along the primary key. Params: the id the page starts after, rows to return. */
export const LIST_API_KEYS = `SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_id > ? ORDER BY key_id LIMIT ?`;

/** As {@link LIST_API_KEYS} from the start. Params: rows to return. */
export const FIRST_API_KEYS = `SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY key_id LIMIT ?`;

/**
 * Revokes a key, keeping the first `revoked_at` of one revoked already. Params: `keyId`, `now`, `tenantId` (NULL:
 * any tenant's). Returns the row after, or nothing for no such key (or another tenant's). A repeat revoke rewrites
 * the row with its own values: rare, and it keeps the statement single (no read between check and write).
 */
export const REVOKE_API_KEY = `
UPDATE api_keys SET revoked_at = coalesce(revoked_at, @now)
WHERE key_id = @keyId AND (@tenantId IS NULL OR tenant_id = @tenantId)
RETURNING ${KEY_COLUMNS}`;

/** Whether any key is active: one seek into `api_keys_active`. No params. Returns `[0 | 1]`. */
export const HAS_ACTIVE_API_KEY = 'SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL)';

/** A tenant's limits. Params: `tenantId`. Returns a {@link LimitsRow} or nothing. */
export const GET_TENANT_LIMITS = 'SELECT requests_per_second, max_pending_tasks FROM tenant_limits WHERE tenant_id = ?';

/** Sets (replaces) a tenant's limits. Params: `tenantId`, `requestsPerSecond`, `maxPendingTasks`, `now`. */
export const PUT_TENANT_LIMITS = `
INSERT INTO tenant_limits (tenant_id, requests_per_second, max_pending_tasks, updated_at) VALUES (?, ?, ?, ?)
ON CONFLICT (tenant_id) DO UPDATE SET
  requests_per_second = excluded.requests_per_second,
  max_pending_tasks = excluded.max_pending_tasks,
  updated_at = excluded.updated_at`;

/** Deletes a tenant's limits (none: no change). Params: `tenantId`. */
export const DELETE_TENANT_LIMITS = 'DELETE FROM tenant_limits WHERE tenant_id = ?';

/**
 * {@link AccessStore} on one SQLite connection, its statements prepared once (after the migrations: the tables must
 * exist). better-sqlite3 is synchronous, so each method has finished its one statement when its promise is made.
 */
export class SqliteAccessStore implements AccessStore {
  readonly #insert: Prepared<[ApiKeyRow], never>;
  readonly #get: Prepared<[keyId: string], ApiKeyRow>;
  readonly #listOfTenant: Prepared<[tenantId: string, afterKeyId: string, rows: number], ApiKeyRow>;
  readonly #firstOfTenant: Prepared<[tenantId: string, rows: number], ApiKeyRow>;
  readonly #list: Prepared<[afterKeyId: string, rows: number], ApiKeyRow>;
  readonly #first: Prepared<[rows: number], ApiKeyRow>;
  readonly #revoke: Prepared<[{ keyId: string; now: number; tenantId: string | null }], ApiKeyRow>;
  readonly #hasActive: Prepared<[], [0 | 1]>;
  readonly #getLimits: Prepared<[tenantId: string], LimitsRow>;
  readonly #putLimits: Prepared<[tenantId: string, requestsPerSecond: number | null, maxPendingTasks: number | null, now: number], never>;
  readonly #deleteLimits: Prepared<[tenantId: string], never>;

  constructor(db: Database) {
    this.#insert = prepare<ApiKeyRow>(db, INSERT_API_KEY);
    this.#get = prepare<[string], ApiKeyRow>(db, GET_API_KEY);
    this.#listOfTenant = prepare<[string, string, number], ApiKeyRow>(db, LIST_API_KEYS_OF_TENANT);
    this.#firstOfTenant = prepare<[string, number], ApiKeyRow>(db, FIRST_API_KEYS_OF_TENANT);
    this.#list = prepare<[string, number], ApiKeyRow>(db, LIST_API_KEYS);
    this.#first = prepare<[number], ApiKeyRow>(db, FIRST_API_KEYS);
    this.#revoke = prepare<{ keyId: string; now: number; tenantId: string | null }, ApiKeyRow>(db, REVOKE_API_KEY);
    this.#hasActive = prepare<[], [0 | 1]>(db, HAS_ACTIVE_API_KEY, true);
    this.#getLimits = prepare<[string], LimitsRow>(db, GET_TENANT_LIMITS);
    this.#putLimits = prepare<[string, number | null, number | null, number]>(db, PUT_TENANT_LIMITS);
    this.#deleteLimits = prepare<[string]>(db, DELETE_TENANT_LIMITS);
  }

  async createApiKey(key: ApiKeyRecord): Promise<boolean> {
    return this.#insert.run(keyToRow(key)).changes === 1;
  }

  async getApiKey(keyId: string): Promise<ApiKeyRecord | undefined> {
    const row = this.#get.get(keyId);
    return row === undefined ? undefined : keyFromRow(row);
  }

  async listApiKeys(query: ApiKeyQuery): Promise<Page<ApiKeyRecord>> {
    const { tenantId, limit } = query;
    const after = query.cursor === undefined ? undefined : (decodeCursor('api-keys', query.cursor, 's')[0] as string);
    const rows = limit + 1;
    let found: ApiKeyRow[];
    if (tenantId === undefined) found = after === undefined ? this.#first.all(rows) : this.#list.all(after, rows);
    else found = after === undefined ? this.#firstOfTenant.all(tenantId, rows) : this.#listOfTenant.all(tenantId, after, rows);
    return pageOf(found.map(keyFromRow), limit, (key) => encodeCursor('api-keys', [key.keyId]));
  }

  async revokeApiKey(keyId: string, now: number, tenantId?: string): Promise<ApiKeyRecord | undefined> {
    const row = this.#revoke.get({ keyId, now, tenantId: tenantId ?? null });
    return row === undefined ? undefined : keyFromRow(row);
  }

  async hasActiveApiKey(): Promise<boolean> {
    return this.#hasActive.get()?.[0] === 1;
  }

  async getTenantLimits(tenantId: string): Promise<TenantLimits | undefined> {
    const row = this.#getLimits.get(tenantId);
    return limitsFromRow(row);
  }

  async putTenantLimits(tenantId: string, limits: TenantLimits | null, now: number): Promise<void> {
    if (limits === null) this.#deleteLimits.run(tenantId);
    else this.#putLimits.run(tenantId, limits.requestsPerSecond, limits.maxPendingTasks, now);
  }
}
