import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import { completeAlongsideClaim } from '../src/store/complete-and-claim.js';
import { T0, makeAttempt, makeTask, retryOutcome } from './fixtures/tasks.js';

// `completeAlongsideClaim`, the completeAndClaim of the PostgreSQL and Redis stores, on a real store (SQLite in
// memory): a claim made beside completions that fail is given back, not left to lapse.

const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

async function opened(): Promise<SqliteStore> {
  const store = new SqliteStore(':memory:');
  stores.push(store);
  await store.init();
  return store;
}

describe('completeAlongsideClaim', () => {
  it('returns the results and the claim when both succeed', async () => {
    const store = await opened();
    const [first, second] = [makeTask(), makeTask()];
    await store.insertTasks([first, second]);
    const [held] = await store.claimDue(T0, { limit: 1, leaseMs: 1_000, workerId: 'w' });
    if (held === undefined) throw new Error('expected a claim');
    const completion = { ...held, attempt: makeAttempt(held), next: retryOutcome(held, T0 + 5_000) };
    const { results, claimed } = await completeAlongsideClaim(store, [completion], T0 + 1, { limit: 5, leaseMs: 1_000, workerId: 'w' });
    expect(results.map((r) => r.kind)).toEqual(['applied']);
    expect(claimed.map((t) => t.taskId)).toEqual([held.taskId === first.taskId ? second.taskId : first.taskId]);
  });

  it('releases what it claimed when the completions fail, and rejects with their error', async () => {
    const store = await opened();
    const task = makeTask();
    await store.insertTasks([task]);
    const failing = {
      completeAttempts: () => Promise.reject(new Error('the completions failed')),
      claimDue: store.claimDue.bind(store),
      releaseLeases: store.releaseLeases.bind(store),
    };
    await expect(completeAlongsideClaim(failing, [], T0, { limit: 5, leaseMs: 60_000, workerId: 'w' })).rejects.toThrow(
      'the completions failed',
    );
    // Back in the queue at once, not IN_FLIGHT until its lease lapses.
    expect((await store.getTask(task.tenantId, task.taskId))?.status).toBe('PENDING');
    expect((await store.claimDue(T0 + 1, { limit: 5, leaseMs: 1_000, workerId: 'other' })).map((t) => t.taskId)).toEqual([task.taskId]);
  });
});
