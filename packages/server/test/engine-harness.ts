import type { HeadersLike, RetryPolicy } from '@retryd/core';
import { ManualClock, seededRandom } from '@retryd/core/testing';
import { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import type { BlobStore } from '../src/blobs/blob-store.js';
import { DEFAULT_TENANT, type AttemptLog, type RetryTask } from '../src/domain/task.js';
import type { AttemptTimeouts } from '../src/domain/attempt-timeouts.js';
import type { AttemptDispatcher, AttemptResult } from '../src/engine/attempt-result.js';
import { Engine } from '../src/engine/engine.js';
import type { EngineOptions } from '../src/engine/engine-options.js';
import { TargetGuard } from '../src/security/target-guard.js';
import type { Store, TaskRef } from '../src/store/store.js';
import type { EnqueueResult } from '../src/tasks/enqueuer.js';
import { TaskService } from '../src/tasks/task-service.js';
import { FaultyStore, type Reported } from './engine-helpers.js';
import { T0 } from './fixtures/tasks.js';

// A deterministic stage for the engine's decisions: the real Engine on a real SQLite store in memory, every timer on
// one ManualClock, seeded randoms, and an in-memory dispatcher whose calls the test answers one by one. Nothing waits
// on real time: `settle()` runs what can run at the current instant, `advanceTo()` moves time from one wake-up to the
// next, so every decision happens at the exact time the engine chose.

/**
 * A {@link ManualClock} that also tells when its next sleeper or timer wakes, so time can move from wake-up to wake-up.
 */
export class HarnessClock extends ManualClock {
  private readonly waking = new Set<{ wakeAt: number }>();
  private readonly timers = new Map<unknown, { wakeAt: number }>();

  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    const entry = { wakeAt: this.now() + Math.max(0, ms) };
    this.waking.add(entry);
    const slept = super.sleep(ms, signal);
    const done = () => void this.waking.delete(entry);
    slept.then(done, done);
    return slept;
  }

  override setTimer(ms: number, callback: () => void): unknown {
    const entry = { wakeAt: this.now() + Math.max(0, ms) };
    this.waking.add(entry);
    const handle = super.setTimer(ms, () => {
      this.waking.delete(entry);
      this.timers.delete(handle);
      callback();
    });
    this.timers.set(handle, entry);
    return handle;
  }

  override clearTimer(handle: unknown): void {
    const entry = this.timers.get(handle);
    if (entry !== undefined) this.waking.delete(entry);
    this.timers.delete(handle);
    super.clearTimer(handle);
  }

  /** When the earliest pending sleep or timer ends (epoch ms), or undefined when nothing waits. */
  nextWakeAt(): number | undefined {
    let next: number | undefined;
    for (const { wakeAt } of this.waking) if (next === undefined || wakeAt < next) next = wakeAt;
    return next;
  }
}

/** A policy whose delays depend on the random: exponential from 1 s, doubling, capped at 60 s, full jitter, 5 attempts. */
export const JITTERED_POLICY: RetryPolicy = {
  maxAttempts: 5,
  backoffType: 'EXPONENTIAL',
  initialDelayMs: 1_000,
  multiplier: 2,
  maxDelayMs: 60_000,
  jitterType: 'FULL',
};

/** One call of {@link InMemoryDispatcher.dispatch}: what was sent, when, and how to answer it. */
export interface Dispatch {
  readonly task: RetryTask;
  readonly taskId: string;
  readonly attemptNumber: number;
  /** Clock time of the call (epoch ms). */
  readonly at: number;
  /** The attempt's own timeouts as the engine resolved them; undefined: the dispatcher's (the service's). */
  readonly timeouts: AttemptTimeouts | undefined;
  /** Whether it has been answered (by the test, or by `destroy()`). */
  readonly answered: boolean;
  /** Answers with an HTTP response. */
  respond(status: number, options?: { headers?: HeadersLike; body?: string | null }): void;
  /** Answers with an error that kept the request from getting a response (its `code` decides retryable or not). */
  fail(error: Error): void;
}

/**
 * An {@link AttemptDispatcher} whose calls wait until the test answers them. It keeps every call in order, so a test
 * can say which tasks were attempted, with which attempt numbers, at what time. `destroy()` answers whatever is open
 * with an error, as the HTTP dispatcher's aborted requests do.
 */
export class InMemoryDispatcher implements AttemptDispatcher {
  /** Every call, in the order made. */
  readonly dispatches: Dispatch[] = [];

  constructor(private readonly clock: { now(): number }) {}

  /** Calls not answered yet, oldest first. */
  get open(): Dispatch[] {
    return this.dispatches.filter((d) => !d.answered);
  }

  /** The calls as `[taskId, attemptNumber, at]`, in order: what most assertions compare. */
  get log(): [string, number, number][] {
    return this.dispatches.map((d) => [d.taskId, d.attemptNumber, d.at]);
  }

  /** The open call for `task`; throws when there is none (or more than one, which would be a bug). */
  take(task: TaskRef): Dispatch {
    const open = this.open.filter((d) => d.taskId === task.taskId);
    if (open.length !== 1) throw new Error(`expected one open dispatch of task ${task.taskId}, found ${open.length}`);
    return open[0] as Dispatch;
  }

  dispatch(task: RetryTask, attemptNumber: number, _signingSecrets?: readonly string[], timeouts?: AttemptTimeouts): Promise<AttemptResult> {
    return new Promise<AttemptResult>((resolve) => {
      let answered = false;
      const answer = (result: AttemptResult) => {
        if (answered) throw new Error(`dispatch of task ${task.taskId} (attempt ${attemptNumber}) was already answered`);
        answered = true;
        resolve(result);
      };
      this.dispatches.push({
        task,
        taskId: task.taskId,
        attemptNumber,
        at: this.clock.now(),
        timeouts,
        get answered() {
          return answered;
        },
        respond: (status, options = {}) =>
          answer({ kind: 'response', status, headers: options.headers ?? {}, bodySnippet: options.body ?? null }),
        fail: (error) => answer({ kind: 'error', error, message: error.message }),
      });
    });
  }

  async close(): Promise<void> {}

  async destroy(): Promise<void> {
    for (const d of this.open) d.fail(Object.assign(new Error('request aborted'), { code: 'UND_ERR_ABORTED' }));
  }
}

/** One engine of the harness, with its dispatcher and the errors it reported. */
export interface HarnessEngine {
  engine: Engine;
  dispatcher: InMemoryDispatcher;
  errors: Reported;
  /** The engine's random (seeded), for a test that works out the delays it will draw. */
  seed: number;
}

/** Options of {@link EngineHarness.open}. */
export interface EngineHarnessOptions {
  /** Seed of the first engine's random; the n-th added engine gets `seed + n`. Default 1. */
  seed?: number;
  /** Options of the first engine (defaults below). */
  engine?: Partial<EngineOptions>;
  /** Whether the enqueue hands tasks due now to the first engine (the hand-off). Default true. */
  handOff?: boolean;
  /** Whether the first engine is started. Default true. */
  start?: boolean;
  /**
   * Whether the store answers inserts in two steps (`Store.insertTasksVisible`, as PostgreSQL does): visible at once,
   * durable when the test lets each write's flush go (`flushes`). Default false.
   */
  twoStepInserts?: boolean;
}

/** Bodies kept in memory (tasks in these tests keep theirs inline; the service needs a blob store all the same). */
class MemoryBlobs implements BlobStore {
  private readonly blobs = new Map<string, Buffer>();
  async put(tenantId: string, key: string, data: Buffer | string): Promise<string> {
    const ref = `memory:${tenantId}/${key}`;
    this.blobs.set(ref, Buffer.from(data));
    return ref;
  }
  async get(ref: string): Promise<Buffer> {
    const blob = this.blobs.get(ref);
    if (blob === undefined) throw new Error(`no blob ${ref}`);
    return blob;
  }
  async delete(ref: string): Promise<void> {
    this.blobs.delete(ref);
  }
}

/** Engine defaults in the harness: small numbers that keep tests readable. */
const ENGINE_DEFAULTS = {
  concurrency: 8,
  claimBatchSize: 8,
  attemptTimeoutMs: 10_000,
  leaseMs: 30_000,
  maxIdleMs: 5_000,
  policyCacheMs: 1_000,
} as const;

/** Turns of the event loop with nothing new happening after which the harness counts as settled. */
const QUIET_TURNS = 3;

/**
 * The engine harness. Time starts at `T0` (from the fixtures).
 *
 * @example
 * ```ts
 * const h = await EngineHarness.open();
 * const { task } = await h.enqueue({ targetUrl: 'https://a.example/x', policy });
 * await h.settle();
 * h.dispatcher.take(task).respond(503);
 * await h.settle();
 * expect(await h.task(task)).toMatchObject({ status: 'PENDING', nextAttemptAt: T0 + 1_234 });
 * await h.advanceTo(T0 + 1_234);
 * expect(h.dispatcher.log).toEqual([[task.taskId, 1, T0], [task.taskId, 2, T0 + 1_234]]);
 * await h.close();
 * ```
 */
export class EngineHarness {
  readonly clock = new HarnessClock(T0);
  /** The store as the test sees it (no faults). */
  readonly store: SqliteStore;
  /** The store as the engines and the service see it: a fault can be injected, and every call is logged with its time. */
  readonly faulty: FaultyStore;
  readonly service: TaskService;
  readonly engines: HarnessEngine[] = [];
  /** How often the service asked the engine to wake (tasks left to a claim). */
  wakes = 0;
  /** The flushes of two-step inserts not yet let go, oldest first (`twoStepInserts`). */
  readonly flushes: { resolve: () => void; reject: (error: Error) => void }[] = [];
  private readonly seed: number;

  private constructor(store: SqliteStore, options: EngineHarnessOptions) {
    this.store = store;
    this.seed = options.seed ?? 1;
    if (options.twoStepInserts === true) {
      const insertTasksVisible: Store['insertTasksVisible'] = async (tasks) => {
        const results = await store.insertTasks(tasks);
        const durable = new Promise<void>((resolve, reject) => this.flushes.push({ resolve, reject }));
        durable.catch(() => undefined);
        return { results, durable };
      };
      Object.assign(store, { insertTasksVisible });
    }
    this.faulty = new FaultyStore(store, () => this.clock.now());
    const first = this.addEngine(options.engine);
    this.service = new TaskService({
      store: this.faulty.store,
      blobs: new MemoryBlobs(),
      // Hosts resolve to a public address without DNS: nothing is ever connected to.
      targetGuard: new TargetGuard({ lookup: async () => ['93.184.215.14'] }),
      clock: this.clock,
      wake: (dueAt) => {
        this.wakes++;
        first.engine.wake(dueAt);
      },
      ...(options.handOff === false ? {} : { handOff: first.engine }),
    });
  }

  /** A harness on a fresh in-memory SQLite store, its first engine started (unless `start: false`) and settled. */
  static async open(options: EngineHarnessOptions = {}): Promise<EngineHarness> {
    const store = new SqliteStore(':memory:');
    await store.init();
    const harness = new EngineHarness(store, options);
    if (options.start !== false) {
      await harness.engine.start();
      await harness.settle();
    }
    return harness;
  }

  /** The first engine. */
  get engine(): Engine {
    return this.first.engine;
  }

  /** The first engine's dispatcher. */
  get dispatcher(): InMemoryDispatcher {
    return this.first.dispatcher;
  }

  /** What the first engine reported through `onError`. */
  get errors(): Reported {
    return this.first.errors;
  }

  private get first(): HarnessEngine {
    return this.engines[0] as HarnessEngine;
  }

  /**
   * Another engine on the same store and clock (another instance of the service), not started. Its worker id is
   * `worker-<n>` (the first is `worker-1`) unless given; its random is seeded with `seed + n - 1`.
   */
  addEngine(options: Partial<EngineOptions> = {}): HarnessEngine {
    const n = this.engines.length + 1;
    const seed = this.seed + n - 1;
    const dispatcher = new InMemoryDispatcher(this.clock);
    const errors: Reported = [];
    const engine = new Engine({
      store: this.faulty.store,
      dispatcher,
      clock: this.clock,
      random: seededRandom(seed),
      workerId: `worker-${n}`,
      ...ENGINE_DEFAULTS,
      onError: (error, context) => errors.push({ error, operation: context.operation, taskId: context.taskId }),
      ...options,
    });
    const added = { engine, dispatcher, errors, seed };
    this.engines.push(added);
    return added;
  }

  /** Enqueues through the service (`POST /retry-tasks`) in the default tenant, and settles. */
  async enqueue(input: Record<string, unknown>): Promise<EnqueueResult> {
    const result = await this.service.enqueue(DEFAULT_TENANT, { method: 'POST', ...input });
    await this.settle();
    return result;
  }

  /** Inserts tasks straight into the store (no hand-off, no wake-up): work another instance enqueued. */
  async insert(...tasks: RetryTask[]): Promise<RetryTask[]> {
    const results = await this.store.insertTasks(tasks);
    return results.map((r) => r.task);
  }

  /** The task as stored now. */
  async task(ref: TaskRef): Promise<RetryTask> {
    const task = await this.store.getTask(ref.tenantId, ref.taskId);
    if (task === undefined) throw new Error(`no task ${ref.taskId}`);
    return task;
  }

  /** The task's attempt log, oldest first. */
  async attempts(ref: TaskRef): Promise<AttemptLog[]> {
    return (await this.store.listAttempts(ref.tenantId, ref.taskId, { limit: 100 })).items;
  }

  /**
   * Runs everything that can run without time moving on: sleeps due now, promises, and the `setImmediate` turns the
   * batchers use; returns once several turns in a row changed nothing (no store call, dispatch, answer, sleep or error).
   */
  async settle(): Promise<void> {
    let quiet = 0;
    let before = this.progress();
    for (let turn = 0; turn < 10_000; turn++) {
      await this.clock.advance(0);
      await new Promise<void>((resolve) => setImmediate(resolve));
      const now = this.progress();
      quiet = now === before ? quiet + 1 : 0;
      before = now;
      if (quiet >= QUIET_TURNS) return;
    }
    throw new Error('the engine harness did not settle within 10,000 turns');
  }

  /** Moves time to `at` (epoch ms), stopping at every wake-up on the way and settling there. */
  async advanceTo(at: number): Promise<void> {
    await this.settle();
    for (;;) {
      const next = this.clock.nextWakeAt();
      if (next === undefined || next > at) break;
      await this.clock.advance(Math.max(0, next - this.clock.now()));
      await this.settle();
    }
    if (at > this.clock.now()) {
      await this.clock.advance(at - this.clock.now());
      await this.settle();
    }
  }

  /** Moves time on by `ms`; see {@link EngineHarness.advanceTo}. */
  advance(ms: number): Promise<void> {
    return this.advanceTo(this.clock.now() + ms);
  }

  /**
   * Moves time on, wake-up by wake-up, until `promise` settles (at most `limitMs` of clock time), and returns it:
   * for calls that wait on the clock, such as `engine.stop({ graceMs })`.
   */
  async drive<T>(promise: Promise<T>, limitMs = 120_000): Promise<T> {
    let done = false;
    promise.then(
      () => (done = true),
      () => (done = true),
    );
    const deadline = this.clock.now() + limitMs;
    await this.settle();
    while (!done) {
      const next = this.clock.nextWakeAt();
      if (next === undefined || next > deadline) throw new Error(`still waiting after ${limitMs} ms of clock time`);
      await this.clock.advance(Math.max(0, next - this.clock.now()));
      await this.settle();
    }
    return promise;
  }

  /** Stops every engine (open dispatches are aborted and their leases handed back) and closes the store. */
  async close(): Promise<void> {
    await this.drive(Promise.all(this.engines.map(({ engine }) => engine.stop({ graceMs: 0 }))));
    await this.service.close();
    await this.store.close();
  }

  private progress(): string {
    let calls = 0;
    for (const count of this.faulty.calls.values()) calls += count;
    let dispatched = 0;
    let answered = 0;
    let errors = 0;
    for (const e of this.engines) {
      dispatched += e.dispatcher.dispatches.length;
      answered += e.dispatcher.dispatches.length - e.dispatcher.open.length;
      errors += e.errors.length;
    }
    return `${calls}/${dispatched}/${answered}/${errors}/${this.clock.sleeps.length}/${this.clock.pendingCount}`;
  }
}
