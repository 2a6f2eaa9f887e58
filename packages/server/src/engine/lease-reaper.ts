import type { Clock, Random } from '@retryd/core';
import type { RetryTask } from '../domain/task.js';
import type { Store } from '../store/store.js';
import { StoreBackoff } from './store-backoff.js';

/** How soon to look again when the earliest lapsed lease is one this engine itself holds (its result is on the way). */
const RECHECK_HELD_MS = 1_000;

/** Options of {@link LeaseReaper}. */
export interface LeaseReaperOptions {
  store: Pick<Store, 'findExpiredLeases' | 'nextLeaseExpiryAt'>;
  clock: Clock;
  /** Jitters the back-off after a failed look. Default `Math.random`. */
  random?: Random;
  /** "Now" in whole epoch ms. */
  now: () => number;
  /** Most lapsed leases handled per store read. */
  batchSize: number;
  /** Longest sleep between looks, in ms, so leases taken by other instances are noticed without a signal. */
  maxIdleMs: number;
  /** Whether this engine holds the task itself (its attempt or completion is in progress): then it is not lost. */
  holds: (taskId: string) => boolean;
  /** Records the lost attempts of these tasks and frees them (the engine's decision, group-committed); resolves when written. */
  reap: (tasks: RetryTask[]) => Promise<void>;
  onError: (error: unknown) => void;
}

/**
 * Hands back tasks whose worker went silent: sleeps until the earliest lease lapses (`nextLeaseExpiryAt`, capped
 * at `maxIdleMs`), then reaps what has lapsed (`findExpiredLeases`) in bounded batches — never a scan.
 *
 * A lease is reaped only after it lapsed, so a slow but live worker keeps its task; and the store applies the
 * reap only if the lease is still lapsed with the same fencing token, so a worker that reports just in time wins,
 * and two instances' reapers racing for one task record its lost attempt once.
 */
export class LeaseReaper {
  private running = false;
  private loop: Promise<void> | undefined;
  private sleeper: AbortController | null = null;
  /** When the current sleep ends (epoch ms); {@link LeaseReaper.nudge} can bring it forward. */
  private wakeAt = Infinity;
  private readonly backoff: StoreBackoff;

  constructor(private readonly options: LeaseReaperOptions) {
    this.backoff = new StoreBackoff(options.clock, options.random);
  }

  /** Starts looking (at once, then as leases come due). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /**
   * Looks again at `at` (epoch ms) if that is sooner than planned: the engine gave up a result whose lease lapses
   * then, so the task will need reaping even though no other worker is involved.
   */
  nudge(at: number): void {
    if (at >= this.wakeAt) return;
    this.wakeAt = at;
    this.sleeper?.abort();
  }

  /** Stops looking; resolves when the pass in progress (if any) has finished. */
  async stop(): Promise<void> {
    this.running = false;
    this.sleeper?.abort();
    this.backoff.interrupt();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let waitMs: number;
      try {
        waitMs = await this.pass();
        this.backoff.reset();
      } catch (error) {
        this.options.onError(error);
        await this.backoff.wait();
        continue;
      }
      if (waitMs > 0) await this.sleepUntil(this.options.now() + waitMs);
    }
  }

  /** One look; returns how long to sleep before the next (0: more to do now). */
  private async pass(): Promise<number> {
    const { store, batchSize } = this.options;
    const expired = await store.findExpiredLeases(this.options.now(), batchSize);
    const lost = expired.filter((task) => !this.options.holds(task.taskId));
    if (lost.length > 0) await this.options.reap(lost);
    if (!this.running) return 0;
    if (expired.length >= batchSize && lost.length > 0) return 0;
    const next = await store.nextLeaseExpiryAt();
    const now = this.options.now();
    if (next === null) return this.options.maxIdleMs;
    // A lease at or before now that was not reaped is one this engine holds; its completion will settle it.
    if (next <= now) return Math.min(RECHECK_HELD_MS, this.options.maxIdleMs);
    return Math.min(next - now, this.options.maxIdleMs);
  }

  private async sleepUntil(at: number): Promise<void> {
    this.wakeAt = Math.min(this.wakeAt, at);
    // Re-sleeps when nudged to an earlier time; ends at once when stopped.
    while (this.running) {
      const ms = this.wakeAt - this.options.now();
      if (ms <= 0) break;
      const controller = new AbortController();
      this.sleeper = controller;
      try {
        await this.options.clock.sleep(ms, controller.signal);
      } catch {
        // Nudged or stopped: the loop decides.
      } finally {
        this.sleeper = null;
      }
    }
    this.wakeAt = Infinity;
  }
}
