import { RetrydError, type FieldError } from '../domain/errors.js';
import type { Page } from '../domain/task.js';
import type { ApiKeyRecord, ApiKeyScope, PageRequest, Store } from '../store/store.js';
import { callStore } from '../tasks/store-failure.js';
import { DEFAULT_TENANT } from '../domain/task.js';
import { generateApiKey, storedHashOf } from './api-key-token.js';

/** The scopes of the API, widest first: each allows what the ones after it allow. */
const SCOPE_LADDER: readonly ApiKeyScope[] = ['admin', 'write', 'read'];

/** Every scope a key may have: the API's, widest first, then `metrics` (`GET /metrics` alone). */
export const API_KEY_SCOPES: readonly ApiKeyScope[] = [...SCOPE_LADDER, 'metrics'];

/** What each scope may do, in the words of `--help`, the OpenAPI document and the docs. */
export const API_KEY_SCOPES_MEANING = 'read: reads; write: also tasks and policies; admin: also targets and keys; metrics: GET /metrics alone (default tenant only)';

/** What a tenant id may be: it names the tenant in keys, logs and the CLI. */
export const TENANT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const TENANT_ID_RULE = '1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit';
/** Longest key name, in characters. */
export const MAX_KEY_NAME_LENGTH = 100;

/** What a caller asks for when creating a key. */
export interface NewApiKey {
  tenantId: string;
  scope: string;
  name: string;
}

/** A created key: its record and the key itself, shown this once and never again. */
export interface CreatedApiKey {
  record: ApiKeyRecord;
  token: string;
}

/**
 * Whether `scope` allows what `needed` asks. A `metrics` key allows only `metrics`; an API scope allows the API
 * scopes it is at least as wide as, and not `metrics` (which `installAccessControl` grants to the default tenant's
 * admin keys itself).
 */
export function scopeAllows(scope: ApiKeyScope, needed: ApiKeyScope): boolean {
  if (scope === 'metrics' || needed === 'metrics') return scope === needed;
  return SCOPE_LADDER.indexOf(scope) <= SCOPE_LADDER.indexOf(needed);
}

/** The body of `POST /api-keys` (the tenant is the caller's). */
const REQUEST_FIELDS = ['name', 'scope'];

/**
 * The field errors of a new key's request, every one of them; empty when it is valid. The body of `POST /api-keys`
 * and the flags of `retryd keys create` are checked by this one function.
 */
export function newApiKeyErrors(input: { tenantId: unknown; scope: unknown; name: unknown }, extra: readonly string[] = []): FieldError[] {
  const errors: FieldError[] = [];
  const fail = (field: string, rule: string) => errors.push({ field, rule, message: `${field} must be ${rule}` });
  for (const field of extra) errors.push({ field, rule: 'not a field of the request', message: `${field} is not a field of the request (${REQUEST_FIELDS.join(', ')})` });
  if (typeof input.tenantId !== 'string' || !TENANT_ID_PATTERN.test(input.tenantId)) fail('tenantId', TENANT_ID_RULE);
  if (typeof input.scope !== 'string' || !(API_KEY_SCOPES as readonly string[]).includes(input.scope)) fail('scope', `one of ${API_KEY_SCOPES.join(', ')}`);
  // Metrics span every tenant: a scraper's key is the operator's to make, never a tenant's.
  else if (input.scope === 'metrics' && input.tenantId !== DEFAULT_TENANT) fail('scope', `read, write or admin for tenant ${String(input.tenantId)}: metrics keys belong to the ${DEFAULT_TENANT} tenant`);
  // eslint-disable-next-line no-control-regex -- control characters are what the rule keeps out of names
  if (typeof input.name !== 'string' || input.name.length < 1 || input.name.length > MAX_KEY_NAME_LENGTH || /[\u0000-\u001f\u007f]/.test(input.name)) {
    fail('name', `a string of 1 to ${MAX_KEY_NAME_LENGTH} characters, without control characters`);
  }
  return errors;
}

/**
 * The new key a `POST /api-keys` body asks for, for `tenantId`.
 * @throws RetrydError VALIDATION_FAILED listing every field that breaks its rule
 */
export function parseNewApiKey(body: unknown, tenantId: string): NewApiKey {
  const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  if (fields === undefined) {
    const rule = `a JSON object with the fields ${REQUEST_FIELDS.join(' and ')}`;
    throw RetrydError.validation([{ field: 'body', rule, message: `body must be ${rule}` }]);
  }
  const input = { tenantId, scope: fields.scope, name: fields.name };
  const errors = newApiKeyErrors(input, Object.keys(fields).filter((k) => !REQUEST_FIELDS.includes(k)));
  if (errors.length > 0) throw RetrydError.validation(errors);
  return input as NewApiKey;
}

/**
 * Creating, listing and revoking API keys, the same for the admin API and `retryd keys`: validates the request,
 * makes the key, keeps only its hash.
 */
export class ApiKeys {
  constructor(
    private readonly store: Pick<Store, 'kind' | 'access'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Creates a key. @throws RetrydError VALIDATION_FAILED naming the field and the rule. */
  async create(input: NewApiKey): Promise<CreatedApiKey> {
    const errors = newApiKeyErrors(input);
    if (errors.length > 0) throw RetrydError.validation(errors);
    // 64 random bits of id: a collision is astronomically rare, but the store refuses one rather than overwrite.
    for (let tries = 0; tries < 3; tries++) {
      const { keyId, secret, token } = generateApiKey();
      const scope = input.scope as ApiKeyScope;
      const record: ApiKeyRecord = {
        keyId,
        tenantId: input.tenantId,
        scope,
        name: input.name,
        secretHash: storedHashOf(secret, scope),
        createdAt: this.now(),
        revokedAt: null,
      };
      if (await callStore(this.store.kind, 'create the API key', () => this.store.access.createApiKey(record))) return { record, token };
    }
    throw new Error('three new API key ids in a row were taken');
  }

  /** A tenant's keys, or every tenant's (operators), in key id order. */
  list(tenantId: string | undefined, page: PageRequest): Promise<Page<ApiKeyRecord>> {
    return callStore(this.store.kind, 'list API keys', () => this.store.access.listApiKeys({ ...page, tenantId }));
  }

  /** Revokes a key (of `tenantId`, when given). @throws RetrydError NOT_FOUND for no such key (of that tenant). */
  async revoke(keyId: string, tenantId?: string): Promise<ApiKeyRecord> {
    const revoked = await callStore(this.store.kind, 'revoke the API key', () => this.store.access.revokeApiKey(keyId, this.now(), tenantId));
    if (revoked === undefined) throw new RetrydError('NOT_FOUND', `no API key ${keyId}`);
    return revoked;
  }
}
