import { describe, expect, it } from 'vitest';
import type { RetryTask } from '../src/domain/task.js';
import type { InsertResult, VisibleInsert } from '../src/store/store.js';
import { EnqueueBatcher } from '../src/tasks/enqueue-batcher.js';
import { makeTask } from './fixtures/tasks.js';

// The hand-off's write (EnqueueBatcher.submitVisible): answered once its tasks are visible, so the local engine can
// start their attempts, and once durable apart; every other submission is answered once durable, as always.

/** A store's two inserts, each write's flush held until the test lets it go (or fails it). */
function heldStore() {
  const writes: { kind: 'insert' | 'visible'; tasks: readonly RetryTask[] }[] = [];
  const flushes: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const inserted = (tasks: readonly RetryTask[]): InsertResult[] => tasks.map((task) => ({ kind: 'inserted', task }));
  return {
    writes,
    flushes,
    insert: async (tasks: readonly RetryTask[]): Promise<InsertResult[]> => {
      writes.push({ kind: 'insert', tasks });
      return inserted(tasks);
    },
    insertVisible: async (tasks: readonly RetryTask[]): Promise<VisibleInsert> => {
      writes.push({ kind: 'visible', tasks });
      const durable = new Promise<void>((resolve, reject) => flushes.push({ resolve, reject }));
      durable.catch(() => undefined);
      return { results: inserted(tasks), durable };
    },
  };
}

/** Whether `promise` has settled once every callback queued so far has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise<void>((resolve) => setImmediate(resolve));
  return done;
}

describe('EnqueueBatcher.submitVisible', () => {
  it('answers a hand-off once visible; a submission sharing its write waits until the write is durable', async () => {
    const store = heldStore();
    const batcher = new EnqueueBatcher({ insert: store.insert, insertVisible: store.insertVisible });
    const handOff = makeTask();
    const plain = makeTask();
    const visible = batcher.submitVisible([handOff]);
    const durableOnly = batcher.submit([plain]);
    const { results, durable } = await visible;
    // One write for both (group commit), the two-step one since a hand-off is in it.
    expect(store.writes).toEqual([{ kind: 'visible', tasks: [handOff, plain] }]);
    expect(results).toEqual([{ kind: 'inserted', task: handOff }]);
    expect(await settled(durable)).toBe(false);
    expect(await settled(durableOnly)).toBe(false);
    store.flushes[0]?.resolve();
    await expect(durable).resolves.toBeUndefined();
    expect(await durableOnly).toEqual([{ kind: 'inserted', task: plain }]);
  });

  it('rejects the submissions of a write whose flush failed, the hand-off through its `durable`', async () => {
    const store = heldStore();
    const batcher = new EnqueueBatcher({ insert: store.insert, insertVisible: store.insertVisible });
    const visible = batcher.submitVisible([makeTask()]);
    const durableOnly = batcher.submit([makeTask()]);
    const { durable } = await visible;
    store.flushes[0]?.reject(new Error('flush failed'));
    await expect(durable).rejects.toThrow('flush failed');
    await expect(durableOnly).rejects.toThrow('flush failed');
  });

  it('writes without a hand-off, or on a store without the two-step insert, through insert: durable when answered', async () => {
    const store = heldStore();
    const batcher = new EnqueueBatcher({ insert: store.insert, insertVisible: store.insertVisible });
    const task = makeTask();
    expect(await batcher.submit([task])).toEqual([{ kind: 'inserted', task }]);
    const plainStore = heldStore();
    const plainBatcher = new EnqueueBatcher({ insert: plainStore.insert });
    const handOff = makeTask();
    const { results, durable } = await plainBatcher.submitVisible([handOff]);
    expect(results).toEqual([{ kind: 'inserted', task: handOff }]);
    expect(await settled(durable)).toBe(true);
    expect([...store.writes, ...plainStore.writes].map((w) => w.kind)).toEqual(['insert', 'insert']);
    expect(await batcher.submitVisible([])).toMatchObject({ results: [] });
  });
});
