import type { Clock, Random } from '@retryd/core';
import type { RetryTask } from '../domain/task.js';
import type { AttemptCompletion, ClaimOptions, CompletionResult, Store } from '../store/store.js';
import { StoreBackoff } from './store-backoff.js';

/** A completion waiting to be written, with what the batcher needs to know about its lease. */
export interface QueuedCompletion {
  /**
   * The task as this engine claimed it (or, for the reaper, found it lapsed): with the store's summary, what hooks
   * are given once the completion is applied (see `taskAfterCompletion`).
   */
  task: RetryTask;
  completion: AttemptCompletion;
  /**
   * When the lease behind it lapses (epoch ms). While the write keeps failing the completion is kept and retried;
   * once the lease has lapsed it is given up: the task is due to be reaped, and the reaper logs its attempt as
   * `lease_expired` (the result is lost, never the attempt).
   */
  leaseExpiresAt: number;
  /** True for the lease reaper's completions: racing another instance's reaper is expected, not an error. */
  fromReaper?: boolean;
  /** Called once: with the store's result, or `undefined` when the completion was given up. */
  onSettled?: (result: CompletionResult | undefined) => void;
}

/** Options of {@link CompletionBatcher}. */
export interface CompletionBatcherOptions {
  store: Pick<Store, 'completeAttempts' | 'completeAndClaim'>;
  clock: Clock;
  /** Jitters the back-off between failed writes. Default `Math.random`. */
  random?: Random;
  /** "Now" as the store wants it: whole epoch ms. */
  now: () => number;
  /** Most completions in one `completeAttempts` call. Default 1 000. */
  maxBatch?: number;
  /** Each written batch with its results, in the same order, and the `now` it was written with. */
  onResults: (items: readonly QueuedCompletion[], results: readonly CompletionResult[], now: number) => void;
  /** A write failed; it will be retried after a back-off. */
  onWriteError: (error: unknown) => void;
  /** A completion was given up (lease lapsed while the store was failing, or the drain deadline passed). */
  onGiveUp: (item: QueuedCompletion, reason: string) => void;
}

/** A claim waiting to travel with the next write (see {@link CompletionBatcher.claimAlong}). */
interface RidingClaim {
  options: ClaimOptions;
  resolve: (tasks: RetryTask[]) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for attempt results: completions queue up while one `completeAttempts` write is in progress and go
 * out together in the next, which starts as soon as the previous one finishes (no fixed delay). With `fsync` on,
 * this is where throughput comes from: one durable write for hundreds of attempts. A claim can ride along
 * ({@link CompletionBatcher.claimAlong}), so a busy worker hands back results and takes new work in one write.
 *
 * A failing store does not lose results: the batch is put back and retried with a back-off for as long as its
 * leases hold.
 */
export class CompletionBatcher {
  private queue: QueuedCompletion[] = [];
  private writing = false;
  private scheduled = false;
  private readonly backoff: StoreBackoff;
  private readonly maxBatch: number;
  private idleWaiters: (() => void)[] = [];
  private riding: RidingClaim | undefined;

  constructor(private readonly options: CompletionBatcherOptions) {
    this.maxBatch = options.maxBatch ?? 1_000;
    this.backoff = new StoreBackoff(options.clock, options.random);
  }

  /** Completions queued or being written. */
  get size(): number {
    return this.queue.length + (this.writing ? 1 : 0);
  }

  /** Queues a completion; the write starts at the end of this event-loop turn so the turn's other results join it. */
  add(item: QueuedCompletion): void {
    this.queue.push(item);
    if (this.writing || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /**
   * Makes the claim `options` part of the next write (`completeAndClaim`) and resolves with the tasks claimed; or,
   * when no write is coming (nothing queued) or a claim already rides, returns undefined and the caller claims on
   * its own. The claim's `now` is the write's. If the write fails, the claim rejects with its error (the completions
   * are kept and retried as usual).
   */
  claimAlong(options: ClaimOptions): Promise<RetryTask[]> | undefined {
    if (this.queue.length === 0 || this.riding !== undefined) return undefined;
    return new Promise<RetryTask[]>((resolve, reject) => {
      this.riding = { options, resolve, reject };
    });
  }

  /**
   * Resolves once everything queued is written. At `deadline` (epoch ms) whatever is left is given up and the
   * promise resolves; a write already in progress is not awaited past it.
   */
  async drain(deadline = Infinity): Promise<void> {
    if (this.queue.length === 0 && !this.writing) return;
    const idle = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    if (deadline === Infinity) return idle;
    const timer = new AbortController();
    const expired = this.options.clock.sleep(Math.max(0, deadline - this.options.clock.now()), timer.signal).then(
      () => true,
      () => false,
    );
    const timedOut = await Promise.race([idle.then(() => false), expired]);
    timer.abort();
    if (timedOut) {
      this.backoff.interrupt();
      this.giveUpAll('the engine stopped before the store accepted it');
    }
  }

  private giveUpAll(reason: string): void {
    this.takeRiding()?.reject(new Error(`Claim not made: ${reason}.`));
    const left = this.queue;
    this.queue = [];
    for (const item of left) {
      this.options.onGiveUp(item, reason);
      item.onSettled?.(undefined);
    }
  }

  private async flush(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    try {
      while (this.queue.length > 0) await this.writeOne();
    } finally {
      this.writing = false;
      if (this.queue.length === 0) this.notifyIdle();
      else void this.flush();
    }
  }

  private async writeOne(): Promise<void> {
    let batch: QueuedCompletion[];
    if (this.queue.length <= this.maxBatch) {
      batch = this.queue;
      this.queue = [];
    } else {
      batch = this.queue.splice(0, this.maxBatch);
    }
    let results: CompletionResult[];
    let claimed: RetryTask[] = [];
    const riding = this.takeRiding();
    const writtenAt = this.options.now();
    try {
      const completions = batch.map((item) => item.completion);
      if (riding === undefined) {
        results = await this.options.store.completeAttempts(completions, writtenAt);
      } else {
        ({ results, claimed } = await this.options.store.completeAndClaim(completions, writtenAt, riding.options));
      }
    } catch (error) {
      riding?.reject(error);
      this.options.onWriteError(error);
      const now = this.options.now();
      const kept: QueuedCompletion[] = [];
      for (const item of batch) {
        if (item.leaseExpiresAt > now) {
          kept.push(item);
        } else {
          this.options.onGiveUp(item, 'its lease lapsed while the store was failing');
          item.onSettled?.(undefined);
        }
      }
      this.queue = kept.concat(this.queue);
      await this.backoff.wait();
      return;
    }
    this.backoff.reset();
    this.options.onResults(batch, results, writtenAt);
    for (let i = 0; i < batch.length; i++) batch[i]?.onSettled?.(results[i]);
    riding?.resolve(claimed);
  }

  private takeRiding(): RidingClaim | undefined {
    const riding = this.riding;
    this.riding = undefined;
    return riding;
  }

  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
