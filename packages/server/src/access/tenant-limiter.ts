import { TaskStatus } from '@retryd/core';
import { RetrydError } from '../domain/errors.js';
import type { Store, TenantLimits } from '../store/store.js';
import { callStore } from '../tasks/store-failure.js';

/** Options of {@link TenantLimiter}. */
export interface TenantLimiterOptions {
  /** The limits of a tenant with none of its own (`null`: no limit). */
  defaults: TenantLimits;
  /** How long a tenant's own limits are trusted before they are read again. Default 5,000 ms. */
  limitsCacheMs?: number;
  /** How long a tenant's count of pending tasks is trusted before it is counted again. Default 1,000 ms. */
  pendingCacheMs?: number;
  /** Clock (ms). Default `Date.now`. */
  now?: () => number;
}

interface TenantState {
  limits: TenantLimits;
  limitsReadAt: number;
  tokens: number;
  refilledAt: number;
  /** PENDING and IN_FLIGHT tasks as last counted, plus the tasks admitted since. */
  pending: number;
  pendingReadAt: number;
}

/** Most tenants tracked before the table starts again (each is a few numbers; a restart of the buckets is harmless). */
const MAX_TENANTS = 100_000;

/**
 * Per-tenant limits on the API, so that one tenant cannot crowd out the others: requests per second (a token bucket
 * per tenant and instance, with a burst of one second's worth) and most tasks pending at once (PENDING and IN_FLIGHT,
 * counted through the store at most once per `pendingCacheMs`, plus what this instance admitted since; instances
 * sharing a store may together overshoot by what they admit within that time). Each answers 429 with `Retry-After`.
 *
 * A tenant's own limits (`retryd tenants limits`) replace the service-wide defaults field by field.
 */
export class TenantLimiter {
  readonly #store: Pick<Store, 'kind' | 'access' | 'admin'>;
  readonly #defaults: TenantLimits;
  readonly #limitsCacheMs: number;
  readonly #pendingCacheMs: number;
  readonly #now: () => number;
  readonly #tenants = new Map<string, TenantState>();

  constructor(store: Pick<Store, 'kind' | 'access' | 'admin'>, options: TenantLimiterOptions) {
    this.#store = store;
    this.#defaults = options.defaults;
    this.#limitsCacheMs = options.limitsCacheMs ?? 5_000;
    this.#pendingCacheMs = options.pendingCacheMs ?? 1_000;
    this.#now = options.now ?? Date.now;
  }

  /** Takes one request from the tenant's rate. @throws RetrydError RATE_LIMITED with the seconds until the next token. */
  async admitRequest(tenantId: string): Promise<void> {
    const state = await this.#state(tenantId);
    const rate = state.limits.requestsPerSecond;
    if (rate === null) return;
    const now = this.#now();
    const burst = Math.max(1, rate);
    state.tokens = Math.min(burst, state.tokens + ((now - state.refilledAt) / 1000) * rate);
    state.refilledAt = now;
    if (state.tokens >= 1) {
      state.tokens -= 1;
      return;
    }
    const seconds = Math.max(1, Math.ceil((1 - state.tokens) / rate));
    throw new RetrydError('RATE_LIMITED', `tenant ${tenantId} is limited to ${rate} API requests per second; send again in ${seconds} s`, undefined, {
      retryAfterSeconds: seconds,
    });
  }

  /**
   * Admits `count` new pending tasks (an enqueue, a batch, a replay) if the tenant stays within its most pending tasks.
   * @throws RetrydError TOO_MANY_PENDING_TASKS when it would not
   */
  async admitTasks(tenantId: string, count: number): Promise<void> {
    const state = await this.#state(tenantId);
    const max = state.limits.maxPendingTasks;
    if (max === null) return;
    const now = this.#now();
    if (now - state.pendingReadAt >= this.#pendingCacheMs) {
      const counts = await callStore(this.#store.kind, 'count pending tasks', () => this.#store.admin.countByStatus(tenantId));
      state.pending = counts[TaskStatus.PENDING] + counts[TaskStatus.IN_FLIGHT];
      state.pendingReadAt = now;
    }
    if (state.pending + count > max) {
      const what = count === 1 ? 'one more task' : `${count} more tasks`;
      throw new RetrydError(
        'TOO_MANY_PENDING_TASKS',
        `tenant ${tenantId} may have at most ${max} tasks pending or in flight and has ${state.pending}: ${what} would pass the limit; send again once some have ended`,
        undefined,
        { retryAfterSeconds: 1 },
      );
    }
    state.pending += count;
  }

  /** Forgets a tenant's cached limits, so a change made here takes effect at once. */
  forget(tenantId: string): void {
    this.#tenants.delete(tenantId);
  }

  async #state(tenantId: string): Promise<TenantState> {
    const now = this.#now();
    let state = this.#tenants.get(tenantId);
    if (state !== undefined && now - state.limitsReadAt < this.#limitsCacheMs) return state;
    const own = await callStore(this.#store.kind, 'read the tenant limits', () => this.#store.access.getTenantLimits(tenantId));
    const limits: TenantLimits = {
      requestsPerSecond: own?.requestsPerSecond ?? this.#defaults.requestsPerSecond,
      maxPendingTasks: own?.maxPendingTasks ?? this.#defaults.maxPendingTasks,
    };
    if (state === undefined) {
      if (this.#tenants.size >= MAX_TENANTS) this.#tenants.clear();
      state = { limits, limitsReadAt: now, tokens: Math.max(1, limits.requestsPerSecond ?? 1), refilledAt: now, pending: 0, pendingReadAt: Number.NEGATIVE_INFINITY };
      this.#tenants.set(tenantId, state);
    } else {
      state.limits = limits;
      state.limitsReadAt = now;
    }
    return state;
  }
}
