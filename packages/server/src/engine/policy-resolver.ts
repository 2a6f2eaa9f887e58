import type { RetryPolicy } from '@retryd/core';
import { DEFAULT_POLICY_ID, DEFAULT_SERVICE_POLICY } from '../policies/default-policy.js';
import type { RetryTask } from '../domain/task.js';
import { TenantMap } from '../domain/tenant-map.js';
import type { Store } from '../store/store.js';

/** A named policy the store did not have: the task runs on the built-in default instead. */
export class PolicyNotFoundError extends Error {
  override readonly name = 'PolicyNotFoundError';
  readonly code = 'POLICY_NOT_FOUND';
  constructor(
    readonly tenantId: string,
    readonly policyId: string,
  ) {
    super(`policy "${policyId}" of tenant "${tenantId}" does not exist; using the built-in default policy`);
  }
}

interface Entry {
  policy: RetryPolicy;
  expiresAt: number;
}

/** Options of {@link PolicyResolver}. */
export interface PolicyResolverOptions {
  store: Pick<Store, 'getPolicy'>;
  now: () => number;
  /** How long a named policy is trusted before it is read again, in ms. Default 1 000. */
  ttlMs?: number;
  /** Told when a named policy is missing (once per read, so at most once per `ttlMs` and policy). */
  onMissing?: (error: PolicyNotFoundError) => void;
}

const keyOf = (tenantId: string, policyId: string) => `${tenantId}\u0000${policyId}`;

/**
 * The policy each task runs on: its inline policy, or its named one (`default` when it names none) as the store
 * holds it. Named policies are cached for `ttlMs` (a `PUT` changes future scheduling within that time, or at once
 * through {@link PolicyResolver.invalidate}), so a claimed batch costs at most one store read per distinct policy.
 */
export class PolicyResolver {
  private readonly cache = new TenantMap<string, Entry>();
  private readonly ttlMs: number;

  constructor(private readonly options: PolicyResolverOptions) {
    this.ttlMs = options.ttlMs ?? 1_000;
  }

  /** The policy of `task` if it is inline or cached and fresh; undefined when the store must be read. */
  cached(task: RetryTask): RetryPolicy | undefined {
    if (task.policy !== null) return task.policy;
    const entry = this.cache.get(task.tenantId, task.policyId ?? DEFAULT_POLICY_ID);
    return entry !== undefined && entry.expiresAt > this.options.now() ? entry.policy : undefined;
  }

  /**
   * The policies of `tasks`, in order. Reads each stale or unknown named policy once. When the store fails, a
   * stale cached copy is used rather than nothing; with none, the read's error is thrown.
   */
  async resolve(tasks: readonly RetryTask[]): Promise<RetryPolicy[]> {
    const missing = new Map<string, { tenantId: string; policyId: string }>();
    for (const task of tasks) {
      if (task.policy === null && this.cached(task) === undefined) {
        const policyId = task.policyId ?? DEFAULT_POLICY_ID;
        missing.set(keyOf(task.tenantId, policyId), { tenantId: task.tenantId, policyId });
      }
    }
    await Promise.all([...missing.values()].map(({ tenantId, policyId }) => this.load(tenantId, policyId)));
    return tasks.map((task) => {
      if (task.policy !== null) return task.policy;
      const entry = this.cache.get(task.tenantId, task.policyId ?? DEFAULT_POLICY_ID);
      return entry?.policy ?? DEFAULT_SERVICE_POLICY;
    });
  }

  /** Forgets a cached named policy: the next decision reads it afresh (call after `PUT /retry-policies/{id}`). */
  invalidate(tenantId: string, policyId: string): void {
    this.cache.delete(tenantId, policyId);
  }

  private async load(tenantId: string, policyId: string): Promise<void> {
    let stored;
    try {
      stored = await this.options.store.getPolicy(tenantId, policyId);
    } catch (error) {
      if (this.cache.has(tenantId, policyId)) return;
      throw error;
    }
    let policy: RetryPolicy;
    if (stored !== undefined) {
      policy = stored.policy;
    } else {
      // A tenant's `default` is the built-in one until it is stored (the rule in default-policy.ts): not an error.
      if (policyId !== DEFAULT_POLICY_ID) this.options.onMissing?.(new PolicyNotFoundError(tenantId, policyId));
      policy = DEFAULT_SERVICE_POLICY;
    }
    this.cache.set(tenantId, policyId, { policy, expiresAt: this.options.now() + this.ttlMs });
  }
}
