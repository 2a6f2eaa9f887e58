import { execFile } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { SpoolEntry } from '../src/index.js';
import { SpoolJournalError, SpoolLockedError, fileSpoolStorage } from '../src/file-spool/index.js';
import { tempDirPerTest } from './temp-dir.js';

// The Node spool storage on a real directory: what a restarted process finds in the journal, the lock, compaction.

const run = promisify(execFile);

const entry = (seq: number): SpoolEntry => ({
  seq,
  request: { targetUrl: `https://orders.example.com/orders/${seq}`, method: 'POST', body: { seq }, idempotencyKey: `key-${seq}` },
  spooledAt: 1_000 + seq,
  bytes: 100,
});
const addLine = (seq: number) => `${JSON.stringify({ op: 'add', entry: entry(seq) })}\n`;

const temp = tempDirPerTest('retryd-file-spool-');

describe('fileSpoolStorage', () => {
  it('gives a new storage on the directory what the last one stored, removed and set aside', async () => {
    const first = fileSpoolStorage({ directory: temp.dir });
    expect(await first.load()).toEqual({ entries: [], dead: [] });
    await Promise.all([first.append(entry(1)), first.append(entry(2)), first.append(entry(3))]);
    await first.remove(1);
    const dead = { ...entry(2), deadAt: 5_000, status: 422, code: 'IDEMPOTENCY_KEY_REUSED', detail: 'idempotency key "key-2" already belongs to task t' };
    await first.setAside(dead);
    await first.close();
    const second = fileSpoolStorage({ directory: temp.dir });
    expect(await second.load()).toEqual({ entries: [entry(3)], dead: [dead] });
    await second.discardDead(2);
    await second.close();
    const third = fileSpoolStorage({ directory: temp.dir });
    expect(await third.load()).toEqual({ entries: [entry(3)], dead: [] });
    await third.close();
  });

  it('drops a torn last line (a write cut short, never acknowledged) and appends after the whole ones', async () => {
    const journal = join(temp.dir, 'journal.ndjson');
    await writeFile(journal, addLine(1) + addLine(2) + addLine(3).slice(0, 40));
    const storage = fileSpoolStorage({ directory: temp.dir });
    expect((await storage.load()).entries.map((e) => e.seq)).toEqual([1, 2]);
    expect(await readFile(journal, 'utf8')).toBe(addLine(1) + addLine(2));
    await storage.append(entry(4));
    await storage.close();
    const again = fileSpoolStorage({ directory: temp.dir });
    expect((await again.load()).entries.map((e) => e.seq)).toEqual([1, 2, 4]);
    await again.close();
  });

  it('refuses a journal with a line in the middle that is not a record, naming the line', async () => {
    await writeFile(join(temp.dir, 'journal.ndjson'), `${addLine(1)}not json\n${addLine(2)}`);
    const storage = fileSpoolStorage({ directory: temp.dir });
    const refused = await storage.load().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SpoolJournalError);
    expect((refused as Error).message).toMatch(/journal\.ndjson line 2 is not a spool journal record: "not json"$/);
    // The lock went with the failed load: a mended journal opens.
    await writeFile(join(temp.dir, 'journal.ndjson'), addLine(1));
    const mended = fileSpoolStorage({ directory: temp.dir });
    expect((await mended.load()).entries).toHaveLength(1);
    await mended.close();
  });

  it('holds the directory against a second spool, in this process or another running one, and takes over a dead process lock', async () => {
    const holder = fileSpoolStorage({ directory: temp.dir });
    await holder.load();
    await expect(fileSpoolStorage({ directory: temp.dir }).load()).rejects.toThrow(SpoolLockedError);
    await holder.close();

    // A lock left by a process that is gone (a crash) is stale.
    const { stdout } = await run(process.execPath, ['-e', 'console.log(process.pid)']);
    await writeFile(join(temp.dir, 'LOCK'), stdout.trim());
    const after = fileSpoolStorage({ directory: temp.dir });
    await after.load();
    expect(await readFile(join(temp.dir, 'LOCK'), 'utf8')).toBe(String(process.pid));
    await after.close();

    // One of a running process is not: this test's parent, the vitest runner, is running.
    await writeFile(join(temp.dir, 'LOCK'), String(process.ppid));
    await expect(fileSpoolStorage({ directory: temp.dir }).load()).rejects.toThrow(`is held by process ${process.ppid}`);
  });

  it('compacts the journal as entries leave: rewritten when mostly spent, cut to nothing when empty', async () => {
    const journal = join(temp.dir, 'journal.ndjson');
    const storage = fileSpoolStorage({ directory: temp.dir, compactAtBytes: 0 });
    await storage.load();
    for (const seq of [1, 2, 3]) await storage.append(entry(seq));
    await storage.remove(1);
    await storage.remove(2);
    expect(await readFile(journal, 'utf8')).toBe(addLine(3));
    expect((await stat(journal)).mode & 0o777).toBe(0o600);
    await storage.remove(3);
    expect(await readFile(journal, 'utf8')).toBe('');
    // Writes go to the rewritten file, not the one it replaced.
    await storage.append(entry(4));
    await storage.close();
    const again = fileSpoolStorage({ directory: temp.dir });
    expect((await again.load()).entries.map((e) => e.seq)).toEqual([4]);
    await again.close();
  });
});
