import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { WalFlush } from '../src/backends/sqlite/wal-flush.js';
import { makeTask } from './fixtures/tasks.js';
import { freshPath, opened, removeTempDir, walDatabase } from './sqlite-harness.js';

// The hand-off's insert on SQLite (`insertTasksVisible`): committed without its fsync, then the WAL fdatasync'd off the
// event loop. The connection must come out of it as it went in, whatever the write did.

afterAll(removeTempDir);

const settingsOf = (db: Database.Database) => ({
  synchronous: db.pragma('synchronous', { simple: true }),
  walAutocheckpoint: db.pragma('wal_autocheckpoint', { simple: true }),
});

describe('WalFlush', () => {
  it('commits with synchronous OFF and no automatic checkpoint, then gives the connection back as it was', async () => {
    const db = walDatabase();
    const flush = WalFlush.open(db);
    expect(flush).toBeDefined();
    const inside = flush?.commitUnsynced(() => {
      db.prepare('INSERT INTO t VALUES (1)').run();
      return settingsOf(db);
    });
    expect(inside).toEqual({ synchronous: 0, walAutocheckpoint: 0 });
    expect(settingsOf(db)).toEqual({ synchronous: 2, walAutocheckpoint: 4000 });
    await flush?.flush();
    // A write that throws leaves it as it was too, and the error is the write's.
    expect(() =>
      flush?.commitUnsynced(() => {
        throw new Error('the write failed');
      }),
    ).toThrow('the write failed');
    expect(settingsOf(db)).toEqual({ synchronous: 2, walAutocheckpoint: 4000 });
    await flush?.close();
    db.close();
  });

  it('is only for a file in WAL mode whose every commit is fsynced', () => {
    const memory = new Database(':memory:');
    expect(WalFlush.open(memory)).toBeUndefined();
    memory.close();
    const normal = walDatabase();
    normal.pragma('synchronous = NORMAL');
    expect(WalFlush.open(normal)).toBeUndefined();
    normal.close();
    const rollback = new Database(freshPath());
    rollback.exec('CREATE TABLE t (v INTEGER)');
    expect(WalFlush.open(rollback)).toBeUndefined();
    rollback.close();
  });

  it('runs one fdatasync at a time: calls made while one runs share the next, which starts after it', async () => {
    const db = walDatabase();
    const flush = WalFlush.open(db) as WalFlush;
    const first = flush.flush();
    const second = flush.flush();
    const third = flush.flush();
    expect(second).not.toBe(first);
    expect(third).toBe(second);
    const order: string[] = [];
    await Promise.all([first.then(() => order.push('first')), second.then(() => order.push('second'))]);
    expect(order).toEqual(['first', 'second']);
    // Idle again: a new call starts its own.
    const fourth = flush.flush();
    expect(fourth).not.toBe(second);
    await fourth;
    await flush.close();
    db.close();
  });

  it('closes once the flushes asked for have run, and refuses any after', async () => {
    const db = walDatabase();
    const flush = WalFlush.open(db) as WalFlush;
    let flushed = false;
    const pending = flush.flush().then(() => (flushed = true));
    await Promise.all([flush.close(), flush.close()]);
    expect(flushed).toBe(true);
    await pending;
    await expect(flush.flush()).rejects.toThrow('The SQLite store is closed.');
    db.close();
  });
});

describe('SqliteStore.insertTasksVisible', () => {
  it('answers once the tasks are readable and keeps them across a reopen once durable', async () => {
    const path = freshPath();
    const store = await opened(path);
    const task = makeTask({ status: 'IN_FLIGHT', leaseOwner: 'local-engine', leaseExpiresAt: Date.now() + 60_000, fencingToken: 1 });
    const insertVisible = store.insertTasksVisible;
    if (insertVisible === undefined) throw new Error('a durable file store inserts in two steps');
    const { results, durable } = await insertVisible([task]);
    expect(results).toEqual([{ kind: 'inserted', task }]);
    expect(await store.getTask('default', task.taskId)).toEqual(task);
    expect(store.describeSettings().synchronous).toBe('FULL');
    await durable;
    await store.close();
    await using again = await opened(path);
    expect(await again.getTask('default', task.taskId)).toEqual(task);
  });

  it('is absent with synchronous=NORMAL or in memory, whose inserts are as durable as they get when they answer', async () => {
    for (const store of [await opened(freshPath(), { synchronous: 'NORMAL' }), await opened(':memory:')]) {
      expect(store.insertTasksVisible).toBeUndefined();
      await store.close();
    }
  });
});
