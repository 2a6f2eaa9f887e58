import { systemClock } from '@retryd/core';
import type pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { LONG_DELAY_MS as LONG, useFakeTimersInEachTest } from '../../core/test/fake-long-timers.js';
import { TaskVacuum } from '../src/backends/postgres/task-vacuum.js';
import { clearClockTimer, setClockTimer } from '../src/engine/clock-timer.js';
import { DueTimer } from '../src/engine/due-timer.js';

// The service's timers on the system clock with waits past 2^31 − 1 ms (24.8 days).
useFakeTimersInEachTest();

describe('long waits on the system clock', () => {
  it('DueTimer fires at a time 3e9 ms away, not 1 ms after it was aimed', async () => {
    let fired = 0;
    new DueTimer(systemClock, () => fired++).aimAt(systemClock.now() + LONG);
    await vi.advanceTimersByTimeAsync(LONG - 1);
    expect(fired).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toBe(1);
  });

  it('an attempt timeout of 3e9 ms fires then, and not once cleared', async () => {
    const fired: string[] = [];
    setClockTimer(systemClock, LONG, () => fired.push('timed out'));
    clearClockTimer(systemClock, setClockTimer(systemClock, LONG, () => fired.push('cleared')));
    await vi.advanceTimersByTimeAsync(LONG - 1);
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual(['timed out']);
  });

  it('TaskVacuum looks once every vacuum interval of 3e9 ms, not every 1 ms', async () => {
    // No database is reached: each look is counted where it would vacuum.
    const vacuum = new TaskVacuum({} as pg.Pool, 'retryd', { intervalMs: LONG, minChanges: 1, onError: (error) => expect.fail(error.message) });
    const looks = vi.spyOn(vacuum, 'vacuum').mockResolvedValue(true);
    vacuum.start();
    vacuum.noteChanges(1);
    await vi.advanceTimersByTimeAsync(LONG - 1);
    expect(looks).toHaveBeenCalledTimes(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(looks).toHaveBeenCalledTimes(1);
    vacuum.noteChanges(1);
    await vi.advanceTimersByTimeAsync(LONG);
    expect(looks).toHaveBeenCalledTimes(2);
    await vacuum.close();
    vacuum.noteChanges(1);
    await vi.advanceTimersByTimeAsync(LONG);
    expect(looks).toHaveBeenCalledTimes(2);
  });
});
