import type { ApiKeyRecord, ApiKeyScope, TenantLimits } from '../../store/store.js';

/** An `api_keys` row, the same in both SQL stores (SQLite 005-access, PostgreSQL 006-access). */
export interface ApiKeyRow {
  key_id: string;
  tenant_id: string;
  scope: ApiKeyScope;
  name: string;
  secret_hash: string;
  created_at: number;
  revoked_at: number | null;
}

/** A `tenant_limits` row, as read (PostgreSQL's bigint arrives as a number: see postgres/connection.ts). */
export interface LimitsRow {
  requests_per_second: number | null;
  max_pending_tasks: number | null;
}

export function keyFromRow(row: ApiKeyRow): ApiKeyRecord {
  return {
    keyId: row.key_id,
    tenantId: row.tenant_id,
    scope: row.scope,
    name: row.name,
    secretHash: row.secret_hash,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

export function keyToRow(key: ApiKeyRecord): ApiKeyRow {
  return {
    key_id: key.keyId,
    tenant_id: key.tenantId,
    scope: key.scope,
    name: key.name,
    secret_hash: key.secretHash,
    created_at: key.createdAt,
    revoked_at: key.revokedAt,
  };
}

export function limitsFromRow(row: LimitsRow | undefined): TenantLimits | undefined {
  return row === undefined ? undefined : { requestsPerSecond: row.requests_per_second, maxPendingTasks: row.max_pending_tasks };
}
