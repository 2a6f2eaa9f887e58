import { describe, expect, it } from 'vitest';
import { EventQueue } from '../src/simulate/event-queue.js';
import { deriveSeed, exponential, normalSampler, xoshiro128, xoshiro128FromState } from '../src/simulate/seeded-random.js';
import { simulationClock } from '../src/simulate/simulation-clock.js';

const TWO_32 = 4294967296;

describe('the simulations\' seeded random numbers', () => {
  it('xoshiro128** gives the reference outputs for the state (1, 2, 3, 4)', () => {
    const random = xoshiro128FromState(1, 2, 3, 4);
    expect([random(), random(), random()].map((u) => u * TWO_32)).toEqual([11520, 0, 5927040]);
  });

  it('the same seed gives the same sequence, another seed another one', () => {
    const draw = (seed: number) => {
      const random = xoshiro128(seed);
      return Array.from({ length: 5 }, () => random());
    };
    expect(draw(7)).toEqual(draw(7));
    expect(draw(7)).not.toEqual(draw(8));
    expect(deriveSeed(1, 2, 3)).toBe(deriveSeed(1, 2, 3));
    expect(new Set([deriveSeed(1, 2, 3), deriveSeed(1, 3, 2), deriveSeed(1, 2), deriveSeed(2, 2, 3)]).size).toBe(4);
  });

  it('draws are uniform in [0, 1), normal with the asked mean and deviation, exponential with the asked mean', () => {
    const random = xoshiro128(2015);
    const n = 200_000;
    const uniforms = Array.from({ length: n }, () => random());
    expect(uniforms.every((u) => u >= 0 && u < 1)).toBe(true);
    expect(mean(uniforms)).toBeCloseTo(0.5, 2);
    const normal = normalSampler(random);
    const normals = Array.from({ length: n }, () => normal(10, 2));
    expect(mean(normals)).toBeCloseTo(10, 1);
    expect(Math.sqrt(mean(normals.map((x) => (x - 10) ** 2)))).toBeCloseTo(2, 1);
    expect(Math.abs(mean(Array.from({ length: n }, () => exponential(random, 100))) - 100)).toBeLessThan(1);
  });
});

describe('EventQueue', () => {
  it('pops in time order, same times in the order pushed, and keeps its clock at the last popped time', () => {
    const queue = new EventQueue();
    const times = xoshiro128(3);
    const pushed: [number, number][] = [];
    for (let i = 0; i < 1000; i++) {
      const time = Math.floor(times() * 50);
      pushed.push([time, i]);
      queue.push(time, i);
    }
    const popped: [number, number][] = [];
    while (queue.size > 0) {
      const event = queue.pop();
      popped.push([queue.time, event]);
    }
    expect(popped).toEqual([...pushed].sort((a, b) => a[0] - b[0] || a[1] - b[1]));
    expect(() => queue.pop()).toThrow('pop() on an empty EventQueue');
    queue.clear();
    expect(queue.time).toBe(0);
  });

  it('tells which of two queues holds the earlier head, by time then by order', () => {
    const a = new EventQueue();
    const b = new EventQueue();
    a.push(5, 1, 7);
    b.push(5, 2, 3);
    expect(b.headBefore(a)).toBe(true);
    expect(a.headBefore(b)).toBe(false);
    a.push(4, 3, 9);
    expect(a.headBefore(b)).toBe(true);
    // Equal heads: neither comes before the other.
    expect(a.headBefore(a)).toBe(false);
  });
});

describe('simulationClock', () => {
  it('reads the virtual time and refuses to sleep', async () => {
    let now = 42;
    const clock = simulationClock(() => now);
    expect(clock.now()).toBe(42);
    now = 50;
    expect(clock.now()).toBe(50);
    await expect(clock.sleep(10)).rejects.toThrow('a simulation clock does not sleep');
  });
});

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}
