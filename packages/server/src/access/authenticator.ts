import { RetrydError } from '../domain/errors.js';
import { DEFAULT_TENANT } from '../domain/task.js';
import type { ApiKeyRecord, ApiKeyScope, Store } from '../store/store.js';
import { callStore } from '../tasks/store-failure.js';
import { parseApiKey, secretMatches } from './api-key-token.js';

/** Who a request acts as: its tenant, what it may do, and the key that said so (null when the service is open). */
export interface Principal {
  tenantId: string;
  scope: ApiKeyScope;
  keyId: string | null;
}

/** Options of {@link Authenticator}. */
export interface AuthenticatorOptions {
  /** How long a key read from the store is trusted before it is read again: how late a revocation by another instance takes effect here. Default 5,000 ms. */
  keyCacheMs?: number;
  /** How often a service with no key checks whether one was created. Default 1,000 ms. */
  keyCheckMs?: number;
  /** Clock (ms). Default `Date.now`. */
  now?: () => number;
}

interface CachedKey {
  record: ApiKeyRecord | undefined;
  readAt: number;
}

/** Most key ids cached (unknown ones included) before the cache starts again: guessed ids cannot grow it without bound. */
const MAX_CACHED_KEYS = 10_000;

/** The principal of every request while no API key exists: the default tenant, with every right. */
export const OPEN_PRINCIPAL: Readonly<Principal> = Object.freeze({ tenantId: DEFAULT_TENANT, scope: 'admin', keyId: null });

/**
 * Tells who sent a request from its `Authorization: Bearer rtd_…` header.
 *
 * While the store holds no active key, the service is **open**: a request without a key acts for the default tenant
 * with every right (start-up allows that only on loopback, or behind authentication an operator vouches for). Once
 * a key exists — created by `retryd keys create` or the admin API, on any instance — every request needs one, and
 * stays needing one for the life of the process even if every key is later revoked: revoking keys never opens a
 * service.
 *
 * Keys are read by their public id and the secret part's hash compared in constant time; reads are cached for
 * `keyCacheMs`, so a revocation made on another instance takes effect here within that time (at once on this one).
 */
export class Authenticator {
  readonly #store: Pick<Store, 'kind' | 'access'>;
  readonly #keyCacheMs: number;
  readonly #keyCheckMs: number;
  readonly #now: () => number;
  readonly #keys = new Map<string, CachedKey>();
  #enforcing = false;
  #checkedAt = Number.NEGATIVE_INFINITY;
  #checking: Promise<boolean> | undefined;

  constructor(store: Pick<Store, 'kind' | 'access'>, options: AuthenticatorOptions = {}) {
    this.#store = store;
    this.#keyCacheMs = options.keyCacheMs ?? 5_000;
    this.#keyCheckMs = options.keyCheckMs ?? 1_000;
    this.#now = options.now ?? Date.now;
  }

  /** Whether requests need a key: an active key exists, or existed since this process started. */
  async enforcing(): Promise<boolean> {
    if (this.#enforcing) return true;
    if (this.#now() - this.#checkedAt < this.#keyCheckMs) return false;
    this.#checking ??= callStore(this.#store.kind, 'check for API keys', () => this.#store.access.hasActiveApiKey()).finally(() => {
      this.#checking = undefined;
    });
    const found = await this.#checking;
    this.#checkedAt = this.#now();
    if (found) this.#enforcing = true;
    return this.#enforcing;
  }

  /**
   * The principal of a request with this `Authorization` header value (undefined: none).
   *
   * @throws RetrydError UNAUTHENTICATED when a key is needed and missing, malformed, unknown or revoked (one answer
   *   for all four, so a caller learns nothing about which key ids exist)
   */
  async authenticate(authorization: string | undefined): Promise<Principal> {
    if (authorization === undefined || authorization === '') {
      if (await this.enforcing()) throw unauthenticated('this service needs an API key: send Authorization: Bearer rtd_…');
      return OPEN_PRINCIPAL;
    }
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
    const parts = match === null ? undefined : parseApiKey(match[1] as string);
    if (parts === undefined) throw unauthenticated('the Authorization header must be Bearer followed by an API key (rtd_…)');
    const record = await this.#read(parts.keyId);
    if (record === undefined || record.revokedAt !== null || !secretMatches(parts.secret, record)) {
      throw unauthenticated('the API key is not valid (unknown, revoked or mistyped)');
    }
    return { tenantId: record.tenantId, scope: record.scope, keyId: record.keyId };
  }

  /** Forgets a key read, so a revocation made here takes effect at once. */
  forget(keyId: string): void {
    this.#keys.delete(keyId);
  }

  async #read(keyId: string): Promise<ApiKeyRecord | undefined> {
    const now = this.#now();
    const cached = this.#keys.get(keyId);
    if (cached !== undefined && now - cached.readAt < this.#keyCacheMs) return cached.record;
    const record = await callStore(this.#store.kind, 'read the API key', () => this.#store.access.getApiKey(keyId));
    if (this.#keys.size >= MAX_CACHED_KEYS) this.#keys.clear();
    this.#keys.set(keyId, { record, readAt: now });
    // A key that exists proves the service has keys, whatever the periodic check last saw.
    if (record !== undefined && record.revokedAt === null) this.#enforcing = true;
    return record;
  }
}

function unauthenticated(detail: string): RetrydError {
  return new RetrydError('UNAUTHENTICATED', detail);
}
