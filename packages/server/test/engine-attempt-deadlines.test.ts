import { describe, expect, it } from 'vitest';
import { ManualClock } from '@retryd/core/testing';
import { AttemptDeadlines, type Expirable } from '../src/engine/attempt-deadlines.js';

function item(deadline: number, expired: number[], clock: ManualClock): Expirable {
  return { deadline, expire: () => expired.push(clock.now()) };
}

describe('AttemptDeadlines', () => {
  it('expires each open item exactly at its deadline on one timer, and never a settled one', async () => {
    const clock = new ManualClock(1_000);
    const deadlines = new AttemptDeadlines(clock);
    const expired: number[] = [];
    const [a, b, c] = [1_100, 1_150, 1_300].map((d) => item(d, expired, clock)) as [Expirable, Expirable, Expirable];
    for (const x of [a, b, c]) deadlines.add(x);
    expect(clock.pendingCount).toBe(1);
    deadlines.remove(a);
    await clock.advance(99);
    expect(expired).toEqual([]);
    await clock.advance(1);
    expect(expired).toEqual([]);
    await clock.advance(50);
    expect(expired).toEqual([1_150]);
    await clock.advance(150);
    expect(expired).toEqual([1_150, 1_300]);
    expect(deadlines.size).toBe(0);
  });

  it('drops its timer when nothing is left to watch, so an idle dispatcher keeps nothing pending', async () => {
    const clock = new ManualClock(0);
    const deadlines = new AttemptDeadlines(clock);
    const expired: number[] = [];
    const x = item(500, expired, clock);
    deadlines.add(x);
    deadlines.remove(x);
    await clock.advance(0);
    expect(clock.pendingCount).toBe(0);
    await clock.advance(1_000);
    expect(expired).toEqual([]);
    deadlines.add(item(2_000, expired, clock));
    await clock.runAll();
    expect(expired).toEqual([2_000]);
  });
});
