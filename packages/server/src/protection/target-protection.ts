import { CircuitState, systemClock, type Clock, type Random } from '@retryd/core';
import type { TimeoutOverrides } from '../domain/attempt-timeouts.js';
import { RetrydError } from '../domain/errors.js';
import type { RetryTask } from '../domain/task.js';
import type { AttemptProtection, AttemptVerdict } from '../engine/attempt-protection.js';
import type { AttemptResult } from '../engine/attempt-result.js';
import { DeadLetterReason } from '../domain/dead-letter-reason.js';
import { DEFAULT_MAX_RETRY_AFTER_MS } from '../engine/engine-options.js';
import { checkSigningSecrets } from '../secrets/signing-secrets.js';
import { envSecretProvider, type SecretProvider } from '../secrets/secret-provider.js';
import type { AttemptCompletion, Store, TargetRef, TargetView } from '../store/store.js';
import type { ProtectionEvent } from './protection-events.js';
import { ProtectedTarget, type ProtectedTargetDeps } from './protected-target.js';
import type { BreakerAction, TargetControl, TargetStatus } from './target-control.js';
import { DEFAULT_TARGET_SETTINGS, type TargetSettings } from './target-settings.js';

/** What {@link TargetProtection.knownTargets} tells of one target. */
export interface KnownTargetState {
  tenantId: string;
  targetKey: string;
  breaker: CircuitState;
  /** Its adaptive limit, else its configured rate limit, in requests per second; null: no limit. */
  allowedRatePerSecond: number | null;
  /** Held now by a `Retry-After` or by its breaker's open period, as far as this instance knows. */
  held: boolean;
}

/** Options of {@link TargetProtection}. Only `store` is required. */
export interface TargetProtectionOptions {
  /** Where settings, breakers and the gate of every target live, shared with every other instance. */
  store: Pick<Store, 'targetState' | 'holdTarget' | 'releaseTarget' | 'limitTarget' | 'admin' | 'rescheduleTask'>;
  /**
   * The settings of every target that has none of its own. Default {@link DEFAULT_TARGET_SETTINGS} (protections on);
   * `PROTECTIONS_OFF` for a service whose targets fail by design (`retryd serve --protection off`).
   */
  defaults?: TargetSettings;
  /** The engine's clock. Default `systemClock`. */
  clock?: Clock;
  /** Draws the jitter of breaker open periods. Default `Math.random`. */
  random?: Random;
  /** How long a target's settings and shared breaker are trusted before this instance reads them again, in ms. Default 1 000. */
  cacheMs?: number;
  /**
   * The longest `Retry-After` the service honours, in ms (the engine's `maxRetryAfterMs`): a target's `Retry-After` hold
   * is no longer either (and never longer than `MAX_RETRY_AFTER_HOLD_MS`). Default 3 600 000.
   */
  maxRetryAfterMs?: number;
  /**
   * Resolves the `{{secret:NAME}}` references of `signing.secrets`: a `PUT` naming one it does not know is refused.
   * Default `envSecretProvider()`; the service passes the one its tasks' secrets use.
   */
  secrets?: SecretProvider;
  /** Called with each breaker opening and closing, target hold and retry storm (see {@link ProtectionEvent}). */
  onEvent?: (event: ProtectionEvent) => void;
  /** Called with every failure it survives (a store error while reading or writing a target's state). */
  onError?: (error: unknown) => void;
  /** Called when a target's gate opened or loosened, so that its tasks are claimed now (the engine's `wake`). */
  wake?: () => void;
}

/**
 * Per-target protection of the downstream: one {@link ProtectedTarget} per `(tenant, target)` this instance has seen,
 * each with its settings (stored under `settings:<targetKey>`, cached ~1 s, the service defaults until set), a circuit
 * breaker shared through the store, Retry-After holds, adaptive throttling (AIMD), a retry budget with a pacer, and
 * retry-storm detection; what they decide reaches every instance through the store's gate (`holdTarget`,
 * `limitTarget`), so held tasks stay PENDING and burn no attempt.
 *
 * It is the engine's {@link AttemptProtection} (told of every attempt, O(1) when nothing trips) and the operators'
 * {@link TargetControl} (the `/targets` API).
 *
 * @example
 * ```ts
 * let engine: Engine | undefined;
 * const protection = new TargetProtection({ store, onEvent: (e) => log.warn(e), wake: () => engine?.wake() });
 * engine = new Engine({ store, protection });
 * await protection.putSettings({ tenantId: 'default', targetKey: 'https://api.example.com' }, { rateLimit: { ratePerSecond: 50 } });
 * ```
 */
export class TargetProtection implements AttemptProtection, TargetControl, AsyncDisposable {
  private readonly targets = new Map<string, Map<string, ProtectedTarget>>();
  private readonly deps: ProtectedTargetDeps;
  private readonly clock: Clock;
  private readonly provider: SecretProvider;

  constructor(private readonly options: TargetProtectionOptions) {
    this.provider = options.secrets ?? envSecretProvider();
    const clock = options.clock ?? systemClock;
    // Whole ms: breaker snapshots and holds are epoch-ms integers in every store.
    this.clock = { now: () => Math.floor(clock.now()), sleep: (ms, signal) => clock.sleep(ms, signal) };
    this.deps = {
      store: options.store,
      defaults: options.defaults ?? DEFAULT_TARGET_SETTINGS,
      clock: this.clock,
      random: options.random ?? Math.random,
      ttlMs: options.cacheMs ?? 1_000,
      maxRetryAfterMs: options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS,
      emit: (event) => this.call(options.onEvent, event),
      report: (error) => this.call(options.onError, error),
      wake: () => this.call(options.wake, undefined),
    };
  }

  // ---- AttemptProtection (the engine's hot path) --------------------------------------------------------------------

  attemptStarting(task: RetryTask, now: number, maxWaitMs: number): Promise<void> | undefined {
    const target = this.targetOf(task);
    void target.ensureLoaded(now);
    return target.started(task, now, maxWaitMs);
  }

  attemptEnded(task: RetryTask, result: AttemptResult, completion: AttemptCompletion, now: number): AttemptVerdict | Promise<AttemptVerdict | undefined> | undefined {
    const target = this.targetOf(task);
    const loading = target.ensureLoaded(now);
    // A target's first outcome waits for its settings: judged on the defaults, a target set to fail by design would trip.
    if (loading !== undefined) return loading.then(() => target.ended(task, result, completion, now));
    return target.ended(task, result, completion, now);
  }

  endedWithoutAttempt(task: RetryTask, completion: AttemptCompletion, now: number): Promise<void> | undefined {
    if (completion.next.deadLetterReason !== DeadLetterReason.BUDGET) return undefined;
    return this.targetOf(task).explainBudget(task, completion, now);
  }

  limitsInFlight(ref: TargetRef): boolean {
    return this.targetOf(ref).limitsInFlight();
  }

  prepare(ref: TargetRef, now: number): Promise<void> | undefined {
    // A failed read is reported by the target and its defaults apply: an enqueue is never refused for it.
    return this.targetOf(ref).ensureLoaded(now)?.catch(() => undefined);
  }

  admitsHandOff(ref: TargetRef, now: number): boolean {
    const target = this.targetOf(ref);
    void target.ensureLoaded(now);
    return target.admitsHandOff(now);
  }

  signingSecrets(task: RetryTask, now: number): readonly string[] | undefined | Promise<readonly string[] | undefined> {
    const target = this.targetOf(task);
    const loading = target.ensureLoaded(now);
    if (loading !== undefined) return loading.then(() => signingOf(target.settings));
    return signingOf(target.settings);
  }

  timeoutsOf(task: RetryTask): TimeoutOverrides | undefined {
    const { settings } = this.targetOf(task);
    // The settings object itself: no allocation per attempt.
    return settings.attemptTimeoutMs === null && settings.connectTimeoutMs === null ? undefined : settings;
  }

  // ---- TargetControl (operators) ------------------------------------------------------------------------------------

  async listTargets(tenantId: string, page: { cursor?: string; limit: number }): Promise<{ items: TargetStatus[]; nextCursor?: string }> {
    const now = this.clock.now();
    const views = await this.options.store.admin.listTargets(tenantId, page, now);
    const items = await Promise.all(
      views.items.map(async (view) => {
        const target = this.targetOf(view);
        await target.readNow(now);
        return this.statusOf(target, view, now);
      }),
    );
    return views.nextCursor === undefined ? { items } : { items, nextCursor: views.nextCursor };
  }

  async getTarget(ref: TargetRef): Promise<TargetStatus | undefined> {
    const now = this.clock.now();
    const target = this.targetOf(ref);
    await target.readNow(now);
    const view = await this.options.store.admin.getTarget(ref, now);
    if (view === undefined && target.settingsVersion === 0 && target.breaker.snapshot === null) return undefined;
    return this.statusOf(target, view, now);
  }

  async putSettings(ref: TargetRef, patch: unknown): Promise<TargetStatus> {
    const now = this.clock.now();
    const target = this.targetOf(ref);
    // Before the write: a reference the provider does not know would end every attempt of the target.
    const unknown = await checkSigningSecrets(patch, this.provider, ref.tenantId);
    if (unknown.length > 0) throw RetrydError.validation(unknown);
    const result = await target.putSettings(patch, now);
    if (!result.ok) throw RetrydError.validation(result.errors);
    return this.statusOf(target, await this.options.store.admin.getTarget(ref, now), now);
  }

  async breaker(ref: TargetRef, action: BreakerAction, durationMs?: number): Promise<TargetStatus> {
    if (durationMs !== undefined && action !== 'open') {
      throw RetrydError.validation([{ field: 'durationMs', rule: 'only with action open', message: `durationMs goes only with action open, not ${action}` }]);
    }
    const now = this.clock.now();
    const target = this.targetOf(ref);
    await target.operate(action, now, durationMs);
    return this.statusOf(target, await this.options.store.admin.getTarget(ref, now), now);
  }

  async release(ref: TargetRef): Promise<TargetStatus> {
    const now = this.clock.now();
    const target = this.targetOf(ref);
    await target.release(now);
    return this.statusOf(target, await this.options.store.admin.getTarget(ref, now), now);
  }

  /**
   * What this instance knows of every target it has met, read from memory (no store read): for metrics, at scrape
   * time. The breaker is as last read (at most `cacheMs` old for a target in use).
   */
  *knownTargets(now: number): Iterable<KnownTargetState> {
    for (const target of this.all()) {
      yield {
        tenantId: target.ref.tenantId,
        targetKey: target.ref.targetKey,
        breaker: target.breaker.stateAt(now),
        allowedRatePerSecond: target.rateNow(),
        held: target.heldAt(now),
      };
    }
  }

  /**
   * The latest moment up to `now` at which this instance knew the target held (breaker not closed, or a hold), or
   * -Infinity (never, or a target it has not met): see `ProtectedTarget.heldThrough`.
   */
  heldThrough(ref: TargetRef, now: number): number {
    return this.targets.get(ref.tenantId)?.get(ref.targetKey)?.heldThrough(now) ?? -Infinity;
  }

  /**
   * The tasks due and waiting on a target as of `now`, counted by the store up to `DUE_COUNT_CAP`: for the
   * held-tasks metric, read only for targets held or half-open, so a scrape costs one bounded store read per such
   * target.
   */
  async dueTasks(ref: TargetRef, now: number): Promise<number> {
    return (await this.options.store.admin.getTarget(ref, now))?.dueTasks ?? 0;
  }

  /** Drops deferred limit writes: no timer of its own is left. The store stays open (its owner closes it). */
  close(): void {
    for (const target of this.all()) target.close();
  }

  /** Resolves once the state changes under way are written: await it after the engine stopped, before the store closes. */
  async whenIdle(): Promise<void> {
    await Promise.all([...this.all()].map((target) => target.whenIdle()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.close();
    await this.whenIdle();
  }

  private *all(): Iterable<ProtectedTarget> {
    for (const byKey of this.targets.values()) yield* byKey.values();
  }

  private targetOf(ref: TargetRef): ProtectedTarget {
    let byKey = this.targets.get(ref.tenantId);
    if (byKey === undefined) {
      byKey = new Map();
      this.targets.set(ref.tenantId, byKey);
    }
    let target = byKey.get(ref.targetKey);
    if (target === undefined) {
      target = new ProtectedTarget({ tenantId: ref.tenantId, targetKey: ref.targetKey }, this.deps);
      byKey.set(ref.targetKey, target);
    }
    return target;
  }

  private statusOf(target: ProtectedTarget, view: TargetView | undefined, now: number): TargetStatus {
    const snapshot = target.breaker.snapshot;
    const state = target.breaker.stateAt(now);
    return {
      target: view ?? emptyView(target.ref),
      settings: target.settings,
      breaker: {
        state,
        openUntil: state === CircuitState.CLOSED ? null : (snapshot?.openUntil ?? null),
        reopenCount: snapshot?.reopenCount ?? 0,
      },
      allowedRatePerSecond: target.allowedRate(view),
    };
  }

  private call<T>(fn: ((value: T) => void) | undefined, value: T): void {
    try {
      fn?.(value);
    } catch {
      // A failing hook must not break the engine's hot path.
    }
  }
}

/** The secrets a target's attempts are signed with, or undefined when it does not sign. */
function signingOf(settings: TargetSettings): readonly string[] | undefined {
  return settings.signing.enabled ? settings.signing.secrets : undefined;
}

/** A target the store has no row for yet (configured, never named by a task): no gate, nothing waiting. */
function emptyView(ref: TargetRef): TargetView {
  return {
    tenantId: ref.tenantId,
    targetKey: ref.targetKey,
    ratePerSecond: null,
    burst: null,
    maxInFlight: null,
    heldUntil: null,
    nextDueAt: null,
    inFlight: 0,
    throttledUntil: null,
    dueTasks: 0,
  };
}
