import { abortReason, type Clock } from '../time/clock.js';

interface Sleeper {
  wakeAt: number;
  seq: number;
  resolve: () => void;
}

/**
 * A {@link Clock} that moves only when told to, for tests that assert exact delays with no real waiting.
 * `sleep()` records the requested delay in {@link ManualClock.sleeps} and resolves when {@link ManualClock.advance}
 * (or {@link ManualClock.runAll}) moves time past its wake-up point.
 *
 * @example
 * ```ts
 * const clock = new ManualClock();
 * const p = retry(fn, policy, { clock, random: seededRandom(1) });
 * await clock.runAll();           // fires every sleep as soon as it is requested
 * expect(clock.sleeps).toEqual([100, 200]);
 * ```
 */
export class ManualClock implements Clock {
  /** Every delay passed to `sleep()`, in order. */
  readonly sleeps: number[] = [];
  private current: number;
  private pending: Sleeper[] = [];
  private seq = 0;

  /** @param startMs - the initial value of `now()` (default 0) */
  constructor(startMs = 0) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<void>((resolve, reject) => {
      const sleeper: Sleeper = { wakeAt: this.current + Math.max(0, ms), seq: this.seq++, resolve };
      if (signal) {
        const onAbort = () => {
          this.pending = this.pending.filter((s) => s !== sleeper);
          reject(abortReason(signal));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        sleeper.resolve = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
      }
      this.pending.push(sleeper);
    });
  }

  /**
   * Calls `callback` when time reaches `now() + ms` (through {@link ManualClock.advance} or
   * {@link ManualClock.runAll}), in order with the sleeps, unless {@link ManualClock.clearTimer} gets the handle first.
   * Not recorded in {@link ManualClock.sleeps}.
   */
  setTimer(ms: number, callback: () => void): unknown {
    const timer: Sleeper = { wakeAt: this.current + Math.max(0, ms), seq: this.seq++, resolve: callback };
    this.pending.push(timer);
    return timer;
  }

  /** Cancels a timer of {@link ManualClock.setTimer}; one that fired or was cleared is left alone. */
  clearTimer(handle: unknown): void {
    this.pending = this.pending.filter((s) => s !== handle);
  }

  /** Sleeps and timers not yet woken. */
  get pendingCount(): number {
    return this.pending.length;
  }

  /** Moves time forward by `ms`, waking every sleeper due by then in time order. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      await flushMicrotasks();
      const next = this.nextDue(target);
      if (!next) break;
      this.current = Math.max(this.current, next.wakeAt);
      this.pending = this.pending.filter((s) => s !== next);
      next.resolve();
    }
    this.current = target;
    await flushMicrotasks();
  }

  /** Moves time forward just far enough to wake each sleeper as it appears, until none is left or `maxSteps` ran. */
  async runAll(maxSteps = 10_000): Promise<void> {
    for (let i = 0; i < maxSteps; i++) {
      await flushMicrotasks();
      const next = this.nextDue(Infinity);
      if (!next) return;
      await this.advance(Math.max(0, next.wakeAt - this.current));
    }
  }

  /** Sets `now()` without waking anyone: for simulating time spent inside a call. */
  tick(ms: number): void {
    this.current += ms;
  }

  private nextDue(limit: number): Sleeper | undefined {
    let best: Sleeper | undefined;
    for (const s of this.pending) {
      if (s.wakeAt <= limit && (!best || s.wakeAt < best.wakeAt || (s.wakeAt === best.wakeAt && s.seq < best.seq))) best = s;
    }
    return best;
  }
}

async function flushMicrotasks(): Promise<void> {
  // Several turns: a resolved sleep lets async code run through a few awaits before it sleeps again.
  for (let i = 0; i < 20; i++) await Promise.resolve();
}
