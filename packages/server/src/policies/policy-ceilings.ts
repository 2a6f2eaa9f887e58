import type { RetryPolicy } from '@retryd/core';
import type { FieldError } from '../domain/errors.js';
import type { TargetStateStore } from '../store/store.js';
import { durationText } from '../retention/retention-periods.js';

/**
 * The most a tenant's policies (registered or inline) may ask for, set by an operator: null, no ceiling. A policy over
 * one is refused with the field and the ceiling named; a policy with no `totalBudgetMs` gets the budget ceiling as its
 * budget, so that no task of the tenant retries for longer than the operator allows.
 */
export interface PolicyCeilings {
  /** The most attempts (`maxAttempts`). */
  maxAttempts: number | null;
  /** The longest total budget (`totalBudgetMs`), in ms; also the budget of a policy that sets none. */
  totalBudgetMs: number | null;
  /** The longest delay any schedule of the policy may ask for (`initialDelayMs`, `maxDelayMs`, and `backoffByClass`'s), in ms. */
  maxDelayMs: number | null;
}

/** No ceiling at all: the service's default. */
export const NO_CEILINGS: Readonly<PolicyCeilings> = Object.freeze({ maxAttempts: null, totalBudgetMs: null, maxDelayMs: null });

/** The fields of {@link PolicyCeilings}. */
export const CEILING_FIELDS = ['maxAttempts', 'totalBudgetMs', 'maxDelayMs'] as const;

/** The `targetState` key of a tenant's own ceilings. */
export const TENANT_CEILINGS_KEY = 'ceilings';

/** Where a ceiling comes from, for its error message. */
export type CeilingSource = 'service' | 'tenant';

/** Ceilings with where each one comes from (the service's flags, or the tenant's own). */
export interface ResolvedCeilings extends PolicyCeilings {
  from: Record<keyof PolicyCeilings, CeilingSource>;
}

/** `service` with every ceiling the tenant sets replaced (a tenant's own may be higher or lower than the service's). */
export function resolveCeilings(service: Readonly<PolicyCeilings>, tenant: Partial<PolicyCeilings> | undefined): ResolvedCeilings {
  const resolved: ResolvedCeilings = { ...service, from: { maxAttempts: 'service', totalBudgetMs: 'service', maxDelayMs: 'service' } };
  for (const field of CEILING_FIELDS) {
    const own = tenant?.[field];
    if (own !== undefined) {
      resolved[field] = own;
      resolved.from[field] = 'tenant';
    }
  }
  return resolved;
}

const whose = (source: CeilingSource) => (source === 'tenant' ? "the tenant's ceiling on policies" : "the service's ceiling on policies");

/**
 * What in `policy` goes over `ceilings`: one error per field, named under `path` (`policy.`, `tasks[2].policy.`, or
 * `''` for a registered policy's body). An absent budget is not over the budget ceiling: {@link withinCeilings} fills it.
 */
export function ceilingViolations(policy: RetryPolicy, ceilings: ResolvedCeilings, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const over = (field: string, value: number, ceiling: number | null, source: CeilingSource, show: (n: number) => string) => {
    if (ceiling === null || value <= ceiling) return;
    const rule = `at most ${show(ceiling)} (${whose(source)})`;
    errors.push({ field: `${path}${field}`, rule, message: `${path}${field} must be ${rule}, got ${value}` });
  };
  const ms = (n: number) => `${n} (${durationText(n)})`;
  over('maxAttempts', policy.maxAttempts, ceilings.maxAttempts, ceilings.from.maxAttempts, String);
  if (policy.totalBudgetMs !== undefined) over('totalBudgetMs', policy.totalBudgetMs, ceilings.totalBudgetMs, ceilings.from.totalBudgetMs, ms);
  over('initialDelayMs', policy.initialDelayMs, ceilings.maxDelayMs, ceilings.from.maxDelayMs, ms);
  over('maxDelayMs', policy.maxDelayMs, ceilings.maxDelayMs, ceilings.from.maxDelayMs, ms);
  for (const [failureClass, schedule] of Object.entries(policy.backoffByClass ?? {})) {
    for (const field of ['initialDelayMs', 'maxDelayMs'] as const) {
      const value = schedule?.[field];
      if (value !== undefined) over(`backoffByClass.${failureClass}.${field}`, value, ceilings.maxDelayMs, ceilings.from.maxDelayMs, ms);
    }
  }
  return errors;
}

/** `policy` with the budget ceiling as its budget when it sets none (the same object when there is nothing to fill). */
export function withinCeilings(policy: RetryPolicy, ceilings: Readonly<PolicyCeilings>): RetryPolicy {
  if (policy.totalBudgetMs !== undefined || ceilings.totalBudgetMs === null) return policy;
  const budget = ceilings.totalBudgetMs;
  // Headroom for the next call must stay below the budget it is kept in.
  if (policy.estimatedCallMs !== undefined && policy.estimatedCallMs >= budget) return { ...policy, totalBudgetMs: budget, estimatedCallMs: 0 };
  return { ...policy, totalBudgetMs: budget };
}

/**
 * The service's own `default` policy brought within a tenant's ceilings when it is registered for the tenant: each
 * value over its ceiling lowered to it (the default is retryd's choice, not the tenant's, so it is fitted, not refused).
 */
export function clampedToCeilings(policy: RetryPolicy, ceilings: Readonly<PolicyCeilings>): RetryPolicy {
  const clamped = { ...policy };
  if (ceilings.maxAttempts !== null) clamped.maxAttempts = Math.min(clamped.maxAttempts, ceilings.maxAttempts);
  if (ceilings.maxDelayMs !== null) {
    clamped.maxDelayMs = Math.min(clamped.maxDelayMs, ceilings.maxDelayMs);
    clamped.initialDelayMs = Math.min(clamped.initialDelayMs, clamped.maxDelayMs);
  }
  if (ceilings.totalBudgetMs !== null && clamped.totalBudgetMs !== undefined) clamped.totalBudgetMs = Math.min(clamped.totalBudgetMs, ceilings.totalBudgetMs);
  const budget = clamped.totalBudgetMs;
  if (budget !== undefined && clamped.estimatedCallMs !== undefined && clamped.estimatedCallMs >= budget) clamped.estimatedCallMs = Math.floor(budget / 2);
  return withinCeilings(clamped, ceilings);
}

/** Options of {@link CeilingBook}. */
export interface CeilingBookOptions {
  state: Pick<TargetStateStore, 'getTargetState'>;
  /** The service's ceilings (`retryd serve --max-policy-*`). */
  service: Readonly<PolicyCeilings>;
  now: () => number;
  /** How long a tenant's ceilings are trusted before they are read again, in ms. Default 5,000 (as tenant limits). */
  ttlMs?: number;
}

/**
 * Each tenant's ceilings: the service's, with the tenant's own (`retryd tenants ceilings`, kept in the store's shared
 * state) over them, cached for `ttlMs`. {@link CeilingBook.cached} answers on the enqueue's hot path; a tenant never
 * read, or read too long ago, takes {@link CeilingBook.resolve}.
 */
export class CeilingBook {
  private readonly entries = new Map<string, { ceilings: ResolvedCeilings; readAt: number }>();
  private readonly reading = new Map<string, Promise<ResolvedCeilings>>();
  private readonly ttlMs: number;

  constructor(private readonly options: CeilingBookOptions) {
    this.ttlMs = options.ttlMs ?? 5_000;
  }

  /** The tenant's ceilings if they are cached and fresh, else undefined (call {@link CeilingBook.resolve}). */
  cached(tenantId: string): ResolvedCeilings | undefined {
    const entry = this.entries.get(tenantId);
    return entry !== undefined && this.options.now() - entry.readAt < this.ttlMs ? entry.ceilings : undefined;
  }

  /** The tenant's ceilings, read from the store when not cached. Rejects when the store cannot answer. */
  resolve(tenantId: string): Promise<ResolvedCeilings> {
    const cached = this.cached(tenantId);
    if (cached !== undefined) return Promise.resolve(cached);
    // One read for every entry of a batch that finds the tenant's ceilings stale, not one each.
    let reading = this.reading.get(tenantId);
    if (reading === undefined) {
      reading = this.read(tenantId).finally(() => this.reading.delete(tenantId));
      this.reading.set(tenantId, reading);
    }
    return reading;
  }

  private async read(tenantId: string): Promise<ResolvedCeilings> {
    const stored = await this.options.state.getTargetState(tenantId, TENANT_CEILINGS_KEY);
    const own = stored === undefined ? undefined : parseCeilings(stored.value);
    const ceilings = resolveCeilings(this.options.service, own);
    // One entry a tenant that enqueues: bounded by the tenants, as the API's own per-tenant limits are.
    this.entries.set(tenantId, { ceilings, readAt: this.options.now() });
    return ceilings;
  }

  /** Forgets a tenant's cached ceilings (after writing them). */
  invalidate(tenantId: string): void {
    this.entries.delete(tenantId);
  }
}

/** A stored `{ maxAttempts?, totalBudgetMs?, maxDelayMs? }` (each a positive integer), or undefined when it is not one. */
export function parseCeilings(value: string): Partial<PolicyCeilings> | undefined {
  try {
    const parsed = JSON.parse(value) as Record<string, unknown>;
    const own: Partial<PolicyCeilings> = {};
    for (const field of CEILING_FIELDS) {
      const v = parsed[field];
      if (Number.isSafeInteger(v) && (v as number) > 0) own[field] = v as number;
    }
    return own;
  } catch {
    return undefined;
  }
}
