import { DEFAULT_POLICY_ID } from '../policies/default-policy.js';
import type { RetryTask } from '../domain/task.js';
import { TenantMap } from '../domain/tenant-map.js';
import type { TargetStateStore } from '../store/store.js';
import { checkRetentionOverride, mergeRetention, type RetentionOverride, type RetentionPeriods } from './retention-periods.js';

/** The `targetState` key of a tenant's own retention. */
export const TENANT_RETENTION_KEY = 'retention';

/** The `targetState` key of a registered policy's own retention: `retention:policy:payments`. */
export function policyRetentionKey(policyId: string): string {
  return `retention:policy:${policyId}`;
}

/** The named policy whose retention applies to `task`: its `policyId` (`default` when none), or null for an inline policy. */
export function retentionPolicyOf(task: Pick<RetryTask, 'policy' | 'policyId'>): string | null {
  return task.policy !== null ? null : (task.policyId ?? DEFAULT_POLICY_ID);
}

/** Options of {@link RetentionBook}. */
export interface RetentionBookOptions {
  state: Pick<TargetStateStore, 'getTargetState'>;
  /** The service's periods (`retryd serve --retention-*`). */
  defaults: Readonly<RetentionPeriods>;
  now: () => number;
  /** How long an override read is trusted, in ms. Default 5,000 (as tenant limits). */
  ttlMs?: number;
  /** Told of a stored override that breaks the rules (written by another version); it is read as absent. */
  onInvalid?: (error: Error) => void;
}

interface Entry {
  override: RetentionOverride | undefined;
  readAt: number;
}

/**
 * How long each finished task is kept: the service's periods, then its tenant's own, then its registered policy's own
 * (each period the most specific one sets), read from the store's shared state (`targetState`, so every instance
 * sees a change within `ttlMs`) and cached. {@link RetentionBook.cached} answers on the hot path once
 * {@link RetentionBook.resolve} has read what a task needs; a stale entry is still used (and read again) rather than
 * nothing.
 */
export class RetentionBook {
  private readonly entries = new Map<string, Entry>();
  /** The merged periods per tenant and policy (null: an inline policy), as of the older of the reads they came from. */
  private readonly merged = new TenantMap<string | null, { periods: Readonly<RetentionPeriods>; readAt: number }>();
  private readonly loading = new Map<string, Promise<void>>();
  private readonly ttlMs: number;

  constructor(private readonly options: RetentionBookOptions) {
    this.ttlMs = options.ttlMs ?? 5_000;
  }

  /** The service's periods. */
  get defaults(): Readonly<RetentionPeriods> {
    return this.options.defaults;
  }

  /**
   * The periods of a task of `tenantId` on `policyId` (null: an inline policy), or undefined when what they depend on
   * was never read. A stale entry is returned and read again in the background.
   *
   * Asked at every claimed task and every decision: the merged periods are kept per (tenant, policy) until one of the
   * overrides they came from is read again, so a fresh answer is two map lookups and no allocation.
   */
  cached(tenantId: string, policyId: string | null): Readonly<RetentionPeriods> | undefined {
    const merged = this.merged.get(tenantId, policyId);
    if (merged !== undefined && this.options.now() - merged.readAt < this.ttlMs) return merged.periods;
    const tenant = this.entry(tenantId, TENANT_RETENTION_KEY);
    if (tenant === undefined) return undefined;
    const policy = policyId === null ? undefined : this.entry(tenantId, policyRetentionKey(policyId));
    if (policyId !== null && policy === undefined) return undefined;
    const periods = Object.freeze(mergeRetention(this.options.defaults, tenant.override, policy?.override));
    this.merged.set(tenantId, policyId, { periods, readAt: Math.min(tenant.readAt, policy?.readAt ?? Infinity) });
    return periods;
  }

  /** The periods of `task` if they can be told without a read (see {@link RetentionBook.cached}). */
  cachedFor(task: Pick<RetryTask, 'tenantId' | 'policy' | 'policyId'>): Readonly<RetentionPeriods> | undefined {
    return this.cached(task.tenantId, retentionPolicyOf(task));
  }

  /** The periods of `task`: as {@link RetentionBook.cachedFor}, or the service's when nothing was read (never throws). */
  periodsFor(task: Pick<RetryTask, 'tenantId' | 'policy' | 'policyId'>): Readonly<RetentionPeriods> {
    return this.cachedFor(task) ?? this.options.defaults;
  }

  /** Reads what the periods of `tasks` depend on and is not cached, each once. Rejects when the store cannot answer. */
  async resolve(tasks: readonly Pick<RetryTask, 'tenantId' | 'policy' | 'policyId'>[]): Promise<void> {
    const reads: Promise<void>[] = [];
    const asked = new Set<string>();
    const need = (tenantId: string, key: string) => {
      const id = `${tenantId}\u0000${key}`;
      if (asked.has(id) || this.entries.has(id)) return;
      asked.add(id);
      reads.push(this.load(tenantId, key));
    };
    for (const task of tasks) {
      need(task.tenantId, TENANT_RETENTION_KEY);
      const policyId = retentionPolicyOf(task);
      if (policyId !== null) need(task.tenantId, policyRetentionKey(policyId));
    }
    await Promise.all(reads);
  }

  /** Forgets a cached override (after writing one), so the next question reads it. */
  invalidate(tenantId: string, key: string): void {
    this.entries.delete(`${tenantId}\u0000${key}`);
    // Rare (an operator's write): every merged answer of the tenant goes, whichever override changed.
    this.merged.deleteTenant(tenantId);
  }

  private entry(tenantId: string, key: string): Entry | undefined {
    const entry = this.entries.get(`${tenantId}\u0000${key}`);
    if (entry !== undefined && this.options.now() - entry.readAt >= this.ttlMs) void this.load(tenantId, key).catch(() => undefined);
    return entry;
  }

  private load(tenantId: string, key: string): Promise<void> {
    const id = `${tenantId}\u0000${key}`;
    const running = this.loading.get(id);
    if (running !== undefined) return running;
    const read = (async () => {
      try {
        const stored = await this.options.state.getTargetState(tenantId, key);
        this.entries.set(id, { override: stored === undefined ? undefined : this.parse(tenantId, key, stored.value), readAt: this.options.now() });
      } finally {
        this.loading.delete(id);
      }
    })();
    this.loading.set(id, read);
    return read;
  }

  private parse(tenantId: string, key: string, value: string): RetentionOverride | undefined {
    const parsed = parseStoredOverride(value);
    if (parsed.problem !== undefined) {
      this.options.onInvalid?.(new Error(`the stored ${key} of tenant ${tenantId} ${parsed.problem}; the periods it would set are inherited`));
    }
    return parsed.override;
  }
}

/** A stored override's text read back: the override, or what is wrong with it (as written by another version of retryd). */
function parseStoredOverride(value: string): { override?: RetentionOverride; problem?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return { problem: 'is not JSON' };
  }
  const check = checkRetentionOverride(parsed);
  return check.ok ? { override: check.override } : { problem: `breaks the rules (${check.errors.map((e) => e.message).join('; ')})` };
}

/** Reads a stored override (`key`: {@link TENANT_RETENTION_KEY} or a {@link policyRetentionKey}); undefined when none or invalid. */
export async function readRetentionOverride(state: Pick<TargetStateStore, 'getTargetState'>, tenantId: string, key: string): Promise<{ override: RetentionOverride | undefined; version: number }> {
  const stored = await state.getTargetState(tenantId, key);
  if (stored === undefined) return { override: undefined, version: 0 };
  return { override: parseStoredOverride(stored.value).override, version: stored.version };
}

/**
 * Stores an override (an empty one, or null, removes every period of its own: written as `{}`), compare-and-set on the
 * version read; true when written, false when another write came between (read again and retry).
 */
export async function writeRetentionOverride(
  state: Pick<TargetStateStore, 'putTargetState'>,
  tenantId: string,
  key: string,
  expectedVersion: number,
  override: RetentionOverride | null,
  now: number,
): Promise<boolean> {
  return state.putTargetState(tenantId, key, expectedVersion, JSON.stringify(override ?? {}), now);
}
