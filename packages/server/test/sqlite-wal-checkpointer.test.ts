import { existsSync, renameSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { WalCheckpointer } from '../src/backends/sqlite/wal-checkpointer.js';
import { makeTask } from './fixtures/tasks.js';
import { freshPath, opened, removeTempDir, walDatabase } from './sqlite-harness.js';
import { waitFor } from './wait-for.js';

// SQLite's WAL copied back into the database file by a worker thread (wal-checkpointer.ts), rather than inside the
// commit that takes the WAL past `wal_autocheckpoint`, on the event loop.

afterAll(removeTempDir);

const sizeOf = (path: string): number => (existsSync(path) ? statSync(path).size : 0);
const yieldToTimers = () => new Promise((resolve) => setImmediate(resolve));

describe('WalCheckpointer', () => {
  it('copies the WAL into the database file from its worker, and the store closes last', async () => {
    const path = freshPath();
    const store = await opened(path, { checkpointIntervalMs: 20 });
    expect(store.describeSettings().walAutocheckpointPages).toBe(16_000);
    // 40 commits of 50 tasks with 2,000-byte bodies: about a page a task, under the 4,000 pages (16 MiB) at which a
    // commit would checkpoint by itself, and far under the backstop of 16,000.
    const body = 'x'.repeat(2_000);
    const tasks = Array.from({ length: 40 * 50 }, () => makeTask({ body }));
    for (let batch = 0; batch < 40; batch += 1) {
      await store.insertTasks(tasks.slice(batch * 50, batch * 50 + 50));
      await yieldToTimers();
    }
    // Only a checkpoint puts the tasks' pages into the database file.
    await waitFor('the worker to copy the WAL into the database file', () => sizeOf(path) > 40 * 50 * body.length);
    for (const task of [tasks[0], tasks[999], tasks[1_999]]) expect((await store.getTask(task!.tenantId, task!.taskId))?.body).toBe(body);
    await store.close();
    // The worker's connection closed first: the store's, the last one, checkpointed and removed the WAL.
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('catches up with the WAL, which the next write then starts over from its beginning', async () => {
    const db = walDatabase(freshPath(), 16_000);
    const checkpointer = WalCheckpointer.open(db, { intervalMs: 10, startAtBytes: 0, onError: () => undefined, onStopped: () => undefined });
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    const batch = db.transaction(() => {
      for (let i = 0; i < 50; i += 1) insert.run('x'.repeat(4_096));
    });
    for (let i = 0; i < 20; i += 1) batch();
    const caughtUp = await waitFor('a round to copy every frame', () => {
      const last = checkpointer?.rounds.last;
      return last !== undefined && last.log > 1_000 && last.checkpointed === last.log && last;
    });
    const rounds = checkpointer?.rounds.count ?? 0;
    insert.run('one more');
    // The write went to the WAL's first frames, not after the frames already copied.
    const after = await waitFor('the next round', () => (checkpointer?.rounds.count ?? 0) > rounds && checkpointer?.rounds.last);
    expect(after.log).toBeLessThan(caughtUp.log);
    expect(after.checkpointed).toBe(after.log);
    await checkpointer?.close();
    db.close();
  });

  it("with checkpointIntervalMs 0, leaves checkpoints to the commits, at walAutocheckpointPages", async () => {
    const path = freshPath();
    await using store = await opened(path, { checkpointIntervalMs: 0, walAutocheckpointPages: 100 });
    expect(store.describeSettings().walAutocheckpointPages).toBe(100);
  });

  it('is only for a file in WAL mode', () => {
    const memory = new Database(':memory:');
    const options = { intervalMs: 10, onError: () => undefined, onStopped: () => undefined };
    expect(WalCheckpointer.open(memory, options)).toBeUndefined();
    memory.close();
    const rollback = new Database(freshPath());
    rollback.exec('CREATE TABLE t (v INTEGER)');
    expect(WalCheckpointer.open(rollback, options)).toBeUndefined();
    rollback.close();
  });

  it('reports a worker that fails and stops, so that the connection checkpoints on its commits again', async () => {
    const path = freshPath();
    const db = walDatabase(path, 16_000);
    const errors: unknown[] = [];
    let stopped = false;
    const checkpointer = WalCheckpointer.open(db, {
      intervalMs: 10,
      startAtBytes: 0,
      onError: (error) => errors.push(error),
      onStopped: () => {
        stopped = true;
      },
    });
    expect(checkpointer).toBeDefined();
    // The worker opens the file by its name (and must find it), which no longer leads to it.
    renameSync(path, `${path}.moved`);
    await waitFor('the checkpointer to stop', () => stopped);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ message: 'SQLite checkpoint failed: unable to open database file', code: 'SQLITE_CANTOPEN' });
    await checkpointer?.close();
    db.close();
  });
});
