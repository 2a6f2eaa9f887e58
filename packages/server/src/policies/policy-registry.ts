import { canonicalJson, validatePolicy, type Clock, type RetryPolicy } from '@retryd/core';
import { DEFAULT_POLICY_ID, DEFAULT_SERVICE_POLICY } from './default-policy.js';
import { RetrydError, type FieldError } from '../domain/errors.js';
import type { Page, StoredPolicy } from '../domain/task.js';
import type { PageRequest, Store } from '../store/store.js';
import { POLICY_ID_PATTERN, POLICY_ID_RULE } from './policy-id.js';
import { callStore } from '../tasks/store-failure.js';
import { ceilingViolations, clampedToCeilings, withinCeilings, type CeilingBook } from './policy-ceilings.js';
import type { TaskCallback } from '../domain/task-callback.js';
import type { TargetGuard } from '../security/target-guard.js';
import { parseCallback } from '../tasks/enqueue-input.js';
import { targetRefused } from '../tasks/task-preparer.js';

/** Options of {@link PolicyRegistry}. */
export interface PolicyRegistryOptions {
  store: Pick<Store, 'kind' | 'getPolicy' | 'putPolicy' | 'listPolicies'>;
  clock: Pick<Clock, 'now'>;
  /** Called after a `PUT` changed a policy, e.g. to drop an engine's cached copy. Errors it throws are ignored. */
  onPolicyChanged?: (tenantId: string, policyId: string) => void;
  /** The most a tenant's policies may ask for: a policy over them is refused; one with no budget gets the budget ceiling. */
  ceilings: CeilingBook;
  /** Checks a policy's callback URL when it is registered (as a task's `targetUrl` is at enqueue). Absent: not checked here. */
  guard?: Pick<TargetGuard, 'check'>;
}

/**
 * How long a policy's callback, once read, is given to the tasks enqueued under it before it is read again: a `PUT`
 * through another instance reaches this one's enqueues within this time (through this one, at once).
 */
export const POLICY_CALLBACK_TTL_MS = 5_000;

/** The answer to a create: a new policy (201), or the same definition already registered (200). */
export type CreatePolicyResult = { kind: 'created' | 'existing'; policy: StoredPolicy };

/** Most (tenant, policy id) pairs remembered as existing; the set is cleared when it fills up. */
const KNOWN_LIMIT = 10_000;

/**
 * Named retry policies: registration (idempotent by id), replacement for future scheduling, reads, and the
 * `default` policy at start-up. Policies are validated with core's `validatePolicy`, so the API reports the
 * same field and rule as the library would.
 */
export class PolicyRegistry {
  readonly #store: PolicyRegistryOptions['store'];
  readonly #clock: Pick<Clock, 'now'>;
  readonly #onChanged: ((tenantId: string, policyId: string) => void) | undefined;
  readonly #ceilings: CeilingBook;
  readonly #guard: Pick<TargetGuard, 'check'> | undefined;
  /**
   * Policies known to exist, each with its callback as read or written, and when. There is no way to delete a policy,
   * so being here never goes stale, even with several instances on one store (a miss always asks the store); the
   * callback does, after {@link POLICY_CALLBACK_TTL_MS}.
   */
  readonly #known = new Map<string, { callback: TaskCallback | null; policy: RetryPolicy; at: number }>();
  /** Reads of {@link exists} in progress, by tenant and policy. */
  readonly #asking = new Map<string, Promise<boolean>>();
  /** Reads of a stale policy's callback or definition in progress, by tenant and policy. */
  readonly #rereading = new Map<string, Promise<StoredPolicy | undefined>>();

  constructor(options: PolicyRegistryOptions) {
    this.#store = options.store;
    this.#clock = options.clock;
    this.#onChanged = options.onPolicyChanged;
    this.#ceilings = options.ceilings;
    this.#guard = options.guard;
  }

  /** `policy` within the tenant's ceilings (its budget filled in when it sets none), or the 400 naming what goes over. */
  async #ceiled(tenantId: string, policy: RetryPolicy): Promise<RetryPolicy> {
    const ceilings = await callStore(this.#store.kind, "read the tenant's ceilings", () => this.#ceilings.resolve(tenantId));
    const errors = ceilingViolations(policy, ceilings, '');
    if (errors.length > 0) throw RetrydError.validation(errors);
    return withinCeilings(policy, ceilings);
  }

  /**
   * Registers `input` (`{ policyId, ...policy fields }`). Same definition already there → `existing`;
   * a different one → 409 POLICY_CONFLICT.
   */
  async create(tenantId: string, input: unknown): Promise<CreatePolicyResult> {
    const { policyId, policy: asked, callback } = parsePolicyBody(input, undefined);
    const policy = await this.#ceiled(tenantId, asked);
    await this.#checkCallback(callback);
    const now = this.#clock.now();
    const stored: StoredPolicy = { tenantId, policyId, policy, callback, createdAt: now, updatedAt: now, version: 1 };
    const result = await callStore(this.#store.kind, 'register the policy', () => this.#store.putPolicy(stored, 'create'));
    if (result.kind === 'created') {
      this.#remember(result.policy);
      return { kind: 'created', policy: result.policy };
    }
    if (result.kind === 'exists') {
      this.#remember(result.policy);
      const same = canonicalJson(result.policy.policy) === canonicalJson(policy) && canonicalJson(result.policy.callback) === canonicalJson(callback);
      if (same) return { kind: 'existing', policy: result.policy };
      throw new RetrydError(
        'POLICY_CONFLICT',
        `policy ${policyId} is already registered with a different definition; change it with PUT /retry-policies/${policyId}`,
      );
    }
    throw new Error(`putPolicy(create) answered ${result.kind}`);
  }

  /** Replaces a registered policy for future scheduling decisions (tasks in flight finish their attempt). */
  async replace(tenantId: string, policyId: string, input: unknown): Promise<StoredPolicy> {
    const parsed = parsePolicyBody(input, policyId);
    const policy = await this.#ceiled(tenantId, parsed.policy);
    await this.#checkCallback(parsed.callback);
    const now = this.#clock.now();
    const stored: StoredPolicy = { tenantId, policyId, policy, callback: parsed.callback, createdAt: now, updatedAt: now, version: 1 };
    const result = await callStore(this.#store.kind, 'replace the policy', () => this.#store.putPolicy(stored, 'replace'));
    if (result.kind === 'not_found') throw notFound(policyId);
    if (result.kind !== 'replaced') throw new Error(`putPolicy(replace) answered ${result.kind}`);
    this.#remember(result.policy);
    try {
      this.#onChanged?.(tenantId, policyId);
    } catch {
      // A listener's failure must not turn a stored change into an error answer.
    }
    return result.policy;
  }

  /** A registered policy; a tenant's `default` is registered on this first read if it is not yet (see `DEFAULT_SERVICE_POLICY`). */
  async get(tenantId: string, policyId: string): Promise<StoredPolicy> {
    const policy = await callStore(this.#store.kind, 'read the policy', () => this.#store.getPolicy(tenantId, policyId));
    if (policy !== undefined) return policy;
    if (policyId === DEFAULT_POLICY_ID) return this.ensureDefault(tenantId);
    throw notFound(policyId);
  }

  list(tenantId: string, page: PageRequest): Promise<Page<StoredPolicy>> {
    return callStore(this.#store.kind, 'list policies', () => this.#store.listPolicies(tenantId, page));
  }

  /** Whether the policy is known to exist without asking the store (seen registered or read before); false: ask {@link exists}. */
  isKnown(tenantId: string, policyId: string): boolean {
    return this.#known.has(`${tenantId}\u0000${policyId}`);
  }

  /**
   * Whether a policy of this id is registered (cached once seen). A tenant's `default` always exists: it is
   * registered here on the tenant's first use (see `DEFAULT_SERVICE_POLICY`).
   */
  exists(tenantId: string, policyId: string): Promise<boolean> {
    if (this.isKnown(tenantId, policyId)) return Promise.resolve(true);
    // One read for every entry of a batch that names the same unknown policy, not one each.
    const key = `${tenantId}\u0000${policyId}`;
    let asking = this.#asking.get(key);
    if (asking === undefined) {
      asking = this.#read(tenantId, policyId).finally(() => this.#asking.delete(key));
      this.#asking.set(key, asking);
    }
    return asking;
  }

  async #read(tenantId: string, policyId: string): Promise<boolean> {
    const policy = await callStore(this.#store.kind, 'read the policy', () => this.#store.getPolicy(tenantId, policyId));
    if (policy !== undefined) {
      this.#remember(policy);
      return true;
    }
    if (policyId !== DEFAULT_POLICY_ID) return false;
    await this.ensureDefault(tenantId);
    return true;
  }

  /**
   * Registers `DEFAULT_SERVICE_POLICY` as `default` for the tenant unless a `default` exists (an operator's
   * changes are kept). Safe to run from several instances at once. Returns the policy in force.
   */
  async ensureDefault(tenantId: string): Promise<StoredPolicy> {
    const ceilings = await callStore(this.#store.kind, "read the tenant's ceilings", () => this.#ceilings.resolve(tenantId));
    const now = this.#clock.now();
    const stored: StoredPolicy = {
      tenantId,
      policyId: DEFAULT_POLICY_ID,
      // Fitted within the tenant's ceilings when it is registered for it (an operator's default is kept as it is).
      policy: clampedToCeilings(DEFAULT_SERVICE_POLICY, ceilings),
      callback: null,
      createdAt: now,
      updatedAt: now,
      version: 1,
    };
    const result = await callStore(this.#store.kind, 'register the default policy', () =>
      this.#store.putPolicy(stored, 'create'),
    );
    if (result.kind !== 'created' && result.kind !== 'exists') throw new Error(`putPolicy(create) answered ${result.kind}`);
    this.#remember(result.policy);
    return result.policy;
  }

  /**
   * The callback a policy gives the tasks enqueued under it, as read within {@link POLICY_CALLBACK_TTL_MS}, or
   * undefined when it was not (ask {@link callbackFor}).
   */
  callbackOf(tenantId: string, policyId: string): TaskCallback | null | undefined {
    const cached = this.#known.get(`${tenantId}\u0000${policyId}`);
    return cached !== undefined && this.#clock.now() - cached.at < POLICY_CALLBACK_TTL_MS ? cached.callback : undefined;
  }

  /** The callback a registered policy gives its tasks (null for none, and for no such policy), read again when stale. */
  async callbackFor(tenantId: string, policyId: string): Promise<TaskCallback | null> {
    const known = this.callbackOf(tenantId, policyId);
    if (known !== undefined) return known;
    return (await this.#readAgain(tenantId, policyId))?.callback ?? null;
  }

  /**
   * A registered policy's definition as read within {@link POLICY_CALLBACK_TTL_MS}, or undefined when it was not (ask
   * {@link definitionFor}). Enqueue checks that its `retryableStatusCodes` fit the task's target (HTTP or gRPC).
   */
  definitionOf(tenantId: string, policyId: string): RetryPolicy | undefined {
    const cached = this.#known.get(`${tenantId}\u0000${policyId}`);
    return cached !== undefined && this.#clock.now() - cached.at < POLICY_CALLBACK_TTL_MS ? cached.policy : undefined;
  }

  /** A registered policy's definition, read again when stale; undefined for no such policy. */
  async definitionFor(tenantId: string, policyId: string): Promise<RetryPolicy | undefined> {
    const known = this.definitionOf(tenantId, policyId);
    if (known !== undefined) return known;
    return (await this.#readAgain(tenantId, policyId))?.policy;
  }

  /**
   * A policy read from the store (and remembered), one read for every entry of a batch that asks for the same stale
   * policy at once (its callback and its definition together).
   */
  #readAgain(tenantId: string, policyId: string): Promise<StoredPolicy | undefined> {
    const key = `${tenantId}\u0000${policyId}`;
    let reading = this.#rereading.get(key);
    if (reading === undefined) {
      reading = callStore(this.#store.kind, 'read the policy', () => this.#store.getPolicy(tenantId, policyId))
        .then((policy) => {
          if (policy !== undefined) this.#remember(policy);
          return policy;
        })
        .finally(() => this.#rereading.delete(key));
      this.#rereading.set(key, reading);
    }
    return reading;
  }

  /** A policy's callback URL allowed by the guard, or the 400 naming `callback.url`. */
  async #checkCallback(callback: TaskCallback | null): Promise<void> {
    if (callback === null || this.#guard === undefined) return;
    const verdict = await this.#guard.check(new URL(callback.url));
    if (!verdict.ok) throw targetRefused(verdict, 'callback.url');
  }

  #remember(policy: StoredPolicy): void {
    if (this.#known.size >= KNOWN_LIMIT) this.#known.clear();
    this.#known.set(`${policy.tenantId}\u0000${policy.policyId}`, { callback: policy.callback, policy: policy.policy, at: this.#clock.now() });
  }
}

function notFound(policyId: string): RetrydError {
  return new RetrydError('NOT_FOUND', `no policy ${policyId} is registered`);
}

/**
 * Splits a policy body into its id and the core policy, checking both. For a `PUT`, `pathId` is the id in
 * the path: the body may repeat it but not name another.
 */
export function parsePolicyBody(input: unknown, pathId: string | undefined): { policyId: string; policy: RetryPolicy; callback: TaskCallback | null } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw RetrydError.validation([{ field: 'body', rule: 'a JSON object', message: 'body must be a JSON object' }]);
  }
  const { policyId, callback: rawCallback, ...fields } = input as Record<string, unknown>;
  const errors: FieldError[] = [];
  const parsed = parseCallback(rawCallback, (field, rule, got) =>
    errors.push({ field, rule, message: `${field} must be ${rule}${got === undefined ? '' : `, got ${got}`}` }),
  );
  if (pathId === undefined && (typeof policyId !== 'string' || !POLICY_ID_PATTERN.test(policyId))) {
    errors.push({ field: 'policyId', rule: POLICY_ID_RULE, message: `policyId must be ${POLICY_ID_RULE}` });
  }
  if (pathId !== undefined && policyId !== undefined && policyId !== pathId) {
    const rule = 'absent or equal to the policyId in the path';
    errors.push({ field: 'policyId', rule, message: `policyId must be ${rule} (${pathId})` });
  }
  const checked = validatePolicy(fields);
  if (!checked.ok) errors.push(...checked.violations);
  if (errors.length > 0 || !checked.ok) throw RetrydError.validation(errors);
  const callback = parsed === null ? null : { url: parsed.url.href, on: parsed.on, policyId: parsed.policyId };
  return { policyId: pathId ?? (policyId as string), policy: checked.policy, callback };
}
