import { describe, expect, it } from 'vitest';
import { systemClock } from '../src/time/clock.js';
import { ManualClock } from '../src/testing/manual-clock.js';

describe('clock timers (setTimer / clearTimer)', () => {
  it('fire on the manual clock at their time, in order with sleeps, and not at all once cleared', async () => {
    const clock = new ManualClock(1_000);
    const fired: string[] = [];
    clock.setTimer(50, () => fired.push(`a@${clock.now()}`));
    const cleared = clock.setTimer(20, () => fired.push('never'));
    void clock.sleep(30).then(() => fired.push(`sleep@${clock.now()}`));
    clock.clearTimer(cleared);
    expect(clock.pendingCount).toBe(2);
    await clock.advance(29);
    expect(fired).toEqual([]);
    await clock.advance(21);
    expect(fired).toEqual(['sleep@1030', 'a@1050']);
    expect(clock.sleeps).toEqual([30]);
    clock.clearTimer(cleared);
    expect(clock.pendingCount).toBe(0);
  });

  it('fire on the system clock after their delay, and never once cleared', async () => {
    const setTimer = systemClock.setTimer;
    const clearTimer = systemClock.clearTimer;
    if (setTimer === undefined || clearTimer === undefined) throw new Error('systemClock has timers');
    const fired: string[] = [];
    const cleared = setTimer(1, () => fired.push('cleared'));
    clearTimer(cleared);
    await new Promise<void>((resolve) => setTimer(5, () => resolve()));
    // The cleared timer was due before the one awaited: had it not been cleared, it would have fired first.
    expect(fired).toEqual([]);
  });
});
