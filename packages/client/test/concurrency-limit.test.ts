import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from '../src/shared/concurrency-limit.js';

/** A task that runs until `finish()` is called. */
function heldTask() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  let started = false;
  return {
    run: async () => {
      started = true;
      await done;
    },
    finish: () => finish(),
    get started() {
      return started;
    },
  };
}

describe('ConcurrencyLimit', () => {
  it('runs at most `max` tasks, the others in arrival order as turns free up', async () => {
    const limit = new ConcurrencyLimit(2);
    const tasks = [heldTask(), heldTask(), heldTask(), heldTask()];
    const runs = tasks.map((t) => limit.run(t.run));
    await Promise.resolve();
    expect(tasks.map((t) => t.started)).toEqual([true, true, false, false]);
    expect([limit.active, limit.waiting]).toEqual([2, 2]);
    tasks[1]!.finish();
    await expect.poll(() => tasks[2]!.started).toBe(true);
    expect(tasks[3]!.started).toBe(false);
    tasks.forEach((t) => t.finish());
    await Promise.all(runs);
    expect([limit.active, limit.waiting]).toEqual([0, 0]);
  });

  it('lets a waiting task leave the line when its signal aborts; it never runs', async () => {
    const limit = new ConcurrencyLimit(1);
    const first = heldTask();
    const second = heldTask();
    const running = limit.run(first.run);
    const controller = new AbortController();
    const waiting = limit.run(second.run, controller.signal);
    controller.abort(new Error('caller gave up'));
    await expect(waiting).rejects.toThrow('caller gave up');
    expect(limit.waiting).toBe(0);
    first.finish();
    await running;
    expect(second.started).toBe(false);
    expect(limit.active).toBe(0);
  });

  it('names the option and the rule for a bad bound', () => {
    expect(() => new ConcurrencyLimit(0, 'maxConcurrentRetries')).toThrow('maxConcurrentRetries must be an integer >= 1, got 0');
  });
});
