import type { HeadersLike, RetryPolicy } from '@retryd/core';
import { seededRandom } from '@retryd/core/testing';
import { DEFAULT_TENANT, type RetryTask } from '../src/domain/task.js';
import type { Engine } from '../src/engine/engine.js';
import type { EngineOptions } from '../src/engine/engine-options.js';
import type { ProtectionEvent } from '../src/protection/protection-events.js';
import { TargetProtection } from '../src/protection/target-protection.js';
import { applySettingsPatch, PROTECTIONS_OFF, type TargetSettings, type TargetSettingsPatch } from '../src/protection/target-settings.js';
import type { TargetRef } from '../src/store/store.js';
import { EngineHarness, type Dispatch, type InMemoryDispatcher } from './engine-harness.js';
import { makeTask } from './fixtures/tasks.js';

// Per-target protection on the engine harness: every instance is an engine with its own TargetProtection (as each
// `retryd serve` process has), all on one SQLite store and one ManualClock. The harness's own first engine is never
// started; tasks are inserted straight into the store (work enqueued anywhere) and every instance is woken.

/** Retries 100 ms apart, no jitter, up to 10 attempts: delays a test can count on. */
export const FAST: RetryPolicy = {
  maxAttempts: 10,
  backoffType: 'FIXED',
  initialDelayMs: 100,
  multiplier: 1,
  maxDelayMs: 100,
  jitterType: 'NONE',
};

/** Only the protections a test names, over {@link PROTECTIONS_OFF}. */
export function only(patch: TargetSettingsPatch): TargetSettings {
  const check = applySettingsPatch(PROTECTIONS_OFF, patch);
  if (!check.ok) throw new Error(check.errors.map((e) => e.message).join('; '));
  return check.settings;
}

/** The n-th draw (1-based) of `seededRandom(seed)`: what a protection seeded so draws for its n-th open period. */
export function draw(seed: number, n: number): number {
  const random = seededRandom(seed);
  let value = 0;
  for (let i = 0; i < n; i++) value = random();
  return value;
}

/** One instance of the service: an engine, its dispatcher, its protection and what the protection reported. */
export interface Instance {
  engine: Engine;
  dispatcher: InMemoryDispatcher;
  protection: TargetProtection;
  /** The seed of the protection's random. */
  seed: number;
  events: ProtectionEvent[];
  errors: unknown[];
}

/** Options of {@link ProtectedHarness.open}. */
export interface ProtectedHarnessOptions {
  /** Instances to start. Default 1. */
  instances?: number;
  /** Every target's settings until a test sets its own. Default {@link PROTECTIONS_OFF}. */
  defaults?: TargetSettings;
  /** Engine options of every instance. */
  engine?: Partial<EngineOptions>;
}

export class ProtectedHarness {
  readonly instances: Instance[] = [];

  private constructor(
    readonly h: EngineHarness,
    private readonly defaults: TargetSettings,
    private readonly engineOptions: Partial<EngineOptions>,
  ) {}

  static async open(options: ProtectedHarnessOptions = {}): Promise<ProtectedHarness> {
    const h = await EngineHarness.open({ start: false, handOff: false });
    const harness = new ProtectedHarness(h, options.defaults ?? PROTECTIONS_OFF, options.engine ?? {});
    for (let i = 0; i < (options.instances ?? 1); i++) await harness.addInstance();
    return harness;
  }

  /** The first instance. */
  get first(): Instance {
    return this.instances[0] as Instance;
  }

  /** Starts another instance (worker `node-<n>`, protection seeded `100 + n`). */
  async addInstance(): Promise<Instance> {
    const n = this.instances.length + 1;
    const seed = 100 + n;
    const events: ProtectionEvent[] = [];
    const errors: unknown[] = [];
    const holder: { engine?: Engine } = {};
    const protection = new TargetProtection({
      store: this.h.faulty.store,
      defaults: this.defaults,
      clock: this.h.clock,
      random: seededRandom(seed),
      onEvent: (event) => events.push(event),
      onError: (error) => errors.push(error),
      wake: () => holder.engine?.wake(),
    });
    const { engine, dispatcher } = this.h.addEngine({ protection, workerId: `node-${n}`, ...this.engineOptions });
    holder.engine = engine;
    await engine.start();
    const instance = { engine, dispatcher, protection, seed, events, errors };
    this.instances.push(instance);
    await this.h.settle();
    return instance;
  }

  /** A PENDING task for `url` due now, on {@link FAST} unless overridden. */
  task(url: string, overrides: Partial<RetryTask> = {}): RetryTask {
    const now = this.h.clock.now();
    return makeTask({ targetUrl: url, policy: FAST, policyId: null, nextAttemptAt: now, createdAt: now, updatedAt: now, ...overrides });
  }

  /** Inserts tasks (another instance's enqueue), wakes every instance, and settles. */
  async insert(...tasks: RetryTask[]): Promise<RetryTask[]> {
    const inserted = await this.h.insert(...tasks);
    for (const { engine } of this.instances) engine.wake();
    await this.h.settle();
    return inserted;
  }

  /** Every call made by every instance, in the order made. */
  get dispatches(): Dispatch[] {
    return this.instances.flatMap((i) => i.dispatcher.dispatches).sort((a, b) => a.at - b.at);
  }

  /** Calls not yet answered, on any instance. */
  get open(): Dispatch[] {
    return this.instances.flatMap((i) => i.dispatcher.open);
  }

  /** Open calls to an origin. */
  openTo(origin: string): Dispatch[] {
    return this.open.filter((d) => d.task.targetKey === origin);
  }

  /** Every event of every instance, in order of instances. */
  get events(): ProtectionEvent[] {
    return this.instances.flatMap((i) => i.events);
  }

  /** Answers the given calls, one after the other, and settles after each. */
  async answer(calls: readonly Dispatch[], status: number, headers: HeadersLike = {}): Promise<void> {
    for (const call of calls) {
      call.respond(status, { headers });
      await this.h.settle();
    }
  }

  /** The default tenant's target of `origin`. */
  ref(origin: string): TargetRef {
    return { tenantId: DEFAULT_TENANT, targetKey: origin };
  }

  /** The shared breaker snapshot as stored, parsed, or undefined. */
  async storedBreaker(origin: string): Promise<{ state: string; openUntil: number | null; reopenCount: number } | undefined> {
    const stored = await this.h.store.targetState.getTargetState(DEFAULT_TENANT, `breaker:${origin}`);
    return stored === undefined ? undefined : (JSON.parse(stored.value) as { state: string; openUntil: number | null; reopenCount: number });
  }

  async close(): Promise<void> {
    await this.h.drive(Promise.all(this.instances.map(({ engine }) => engine.stop({ graceMs: 0 }))));
    for (const { protection } of this.instances) protection.close();
    await Promise.all(this.instances.map(({ protection }) => protection.whenIdle()));
    await this.h.close();
    const errors = this.instances.flatMap((i) => i.errors);
    if (errors.length > 0) throw new AggregateError(errors, 'a protection reported errors');
  }
}
