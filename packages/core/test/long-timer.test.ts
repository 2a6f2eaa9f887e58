import { describe, expect, it, vi } from 'vitest';
import { retry } from '../src/retry/retry.js';
import { RetryExhaustedError } from '../src/retry/retry-errors.js';
import { systemClock } from '../src/time/clock.js';
import { clearLongTimer, MAX_TIMER_MS, setLongTimer } from '../src/time/long-timer.js';
import { LONG_DELAY_MS as LONG, useFakeTimersInEachTest } from './fake-long-timers.js';

useFakeTimersInEachTest();

describe('setLongTimer', () => {
  it('waits the whole of a delay that setTimeout alone would fire after 1 ms', async () => {
    let plain = 0;
    setTimeout(() => plain++, LONG);
    let fired = 0;
    setLongTimer(LONG, () => fired++);
    await vi.advanceTimersByTimeAsync(1);
    expect(plain).toBe(1); // what the platform does: the reason for the helper
    expect(fired).toBe(0);
    await vi.advanceTimersByTimeAsync(LONG - 2);
    expect(fired).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toBe(1);
    await vi.advanceTimersByTimeAsync(10 * LONG);
    expect(fired).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('is one plain setTimeout up to MAX_TIMER_MS, and never fires for Infinity', async () => {
    const fired: string[] = [];
    const handle = setLongTimer(MAX_TIMER_MS, () => fired.push('max'));
    expect(typeof (handle as { refresh?: unknown }).refresh).toBe('function'); // the platform's own handle
    setLongTimer(Infinity, () => fired.push('never'));
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS);
    expect(fired).toEqual(['max']);
    await vi.advanceTimersByTimeAsync(100 * MAX_TIMER_MS);
    expect(fired).toEqual(['max']);
  });

  it('is cleared on any link of its chain, and keeps unref() on its later links', async () => {
    const made: { hasRef(): boolean }[] = [];
    const fakeSetTimeout = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((callback: () => void, ms?: number) => {
      const timer = fakeSetTimeout(callback, ms);
      made.push(timer as unknown as { hasRef(): boolean });
      return timer;
    }) as typeof setTimeout);
    let fired = 0;
    const timer = setLongTimer(LONG, () => fired++) as { unref(): unknown };
    timer.unref();
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + 1); // into the second link
    expect(made.map((t) => t.hasRef())).toEqual([false, false]);
    clearLongTimer(timer);
    await vi.advanceTimersByTimeAsync(LONG);
    expect(fired).toBe(0);
    spy.mockRestore();
  });
});

describe('systemClock with delays past 2^31 − 1 ms', () => {
  it('sleep resolves at its time, not before; an abort mid-chain rejects at once and leaves no timer', async () => {
    let woke = false;
    void systemClock.sleep(LONG).then(() => (woke = true));
    await vi.advanceTimersByTimeAsync(LONG - 1);
    expect(woke).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(woke).toBe(true);

    const controller = new AbortController();
    const sleeping = systemClock.sleep(LONG, controller.signal);
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + 5);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(sleeping).rejects.toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('setTimer fires at its time, not before', async () => {
    let fired = 0;
    systemClock.setTimer?.(LONG, () => fired++);
    await vi.advanceTimersByTimeAsync(LONG - 1);
    expect(fired).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toBe(1);
  });

  it('retry() waits a 3e9 ms delay on its default clock instead of retrying at once', async () => {
    let attempts = 0;
    const done = retry(
      () => {
        attempts++;
        throw new Error('boom');
      },
      { backoffType: 'FIXED', initialDelayMs: LONG, maxDelayMs: LONG, jitterType: 'NONE', maxAttempts: 3 },
    ).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(30); // the bug: 3 attempts in 30 ms
    expect(attempts).toBe(1);
    await vi.advanceTimersByTimeAsync(LONG - 31);
    expect(attempts).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toBe(2);
    await vi.advanceTimersByTimeAsync(LONG);
    expect(await done).toMatchObject({ reason: 'max_attempts', attempts: 3 });
  });

  it("retry() aborts an attempt at a budget past 2^31 − 1 ms, not 1 ms into it", async () => {
    let signal: AbortSignal | undefined;
    const done = retry(
      (context) => {
        signal = context.signal;
        return new Promise<never>(() => undefined);
      },
      { totalBudgetMs: LONG },
    ).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(LONG - 1);
    expect(signal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(signal?.aborted).toBe(true);
    const error = await done;
    expect(error).toBeInstanceOf(RetryExhaustedError);
    expect(error).toMatchObject({ reason: 'budget', attempts: 1 });
  });
});
