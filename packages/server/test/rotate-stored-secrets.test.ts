import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import { FileBlobStore } from '../src/blobs/file-blob-store.js';
import type { RetryTask } from '../src/domain/task.js';
import { parseKeyring, type Keyring } from '../src/secrets/encryption-keys.js';
import { rotateStoredSecrets, type RotationFailure } from '../src/secrets/rotate-stored-secrets.js';
import { openSecret, sealedKeyId, sealSecret } from '../src/secrets/secret-cipher.js';
import type { SealedTaskStore, Store } from '../src/store/store.js';
import { makeTask } from './fixtures/tasks.js';

// rotateStoredSecrets over a real SQLite store and a real blob directory: what it counts, what it reports, what it
// writes, and that a second run, an interrupted run and a run that meets another rotation all end right. The same
// walk and transition on PostgreSQL and Redis are the conformance suite's; the command on every store is
// keys-rotate-encryption.test.ts.

const key = (n: number) => Buffer.alloc(32, n).toString('base64');
const onlyA = parseKeyring(`a:${key(1)}`);
const onlyB = parseKeyring(`b:${key(2)}`);
const bThenA = parseKeyring(`b:${key(2)},a:${key(1)}`);
const onlyC = parseKeyring(`c:${key(3)}`);

let dir: string;
let store: SqliteStore;
let blobs: FileBlobStore;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'retryd-rotate-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  const name = `${Math.random().toString(36).slice(2)}`;
  store = new SqliteStore(join(dir, `${name}.db`));
  await store.init();
  blobs = new FileBlobStore(join(dir, `${name}.blobs`));
});
afterEach(async () => {
  await store.close();
});

/** A task whose credential header and sensitive body are sealed under `ring`, as the enqueuer seals them. */
function sealedTask(ring: Keyring, overrides: Partial<RetryTask> = {}): RetryTask {
  const task = makeTask(overrides);
  const at = (purpose: string) => ({ tenantId: task.tenantId, taskId: task.taskId, purpose });
  return {
    ...task,
    headers: { 'content-type': 'application/json', Authorization: { enc: sealSecret(ring, 'Bearer s3cret', at('header:authorization')) } },
    body: sealSecret(ring, '{"card":"4111"}', at('body')),
    sensitiveBody: true,
  };
}

/** A task whose sensitive body is sealed under `ring` and kept in the blob store. */
async function blobTask(ring: Keyring): Promise<RetryTask> {
  const task = makeTask({ headers: {}, body: null, sensitiveBody: true });
  const bodyRef = await blobs.put(task.tenantId, task.taskId, sealSecret(ring, 'large-s3cret', { tenantId: task.tenantId, taskId: task.taskId, purpose: 'body' }));
  return { ...task, bodyRef };
}

const keyIdsOf = (task: RetryTask | undefined) => [
  sealedKeyId((task?.headers['Authorization'] as { enc: string } | undefined)?.enc ?? ''),
  sealedKeyId(task?.body ?? ''),
];

describe('rotateStoredSecrets', () => {
  it('re-seals what an old key sealed, skips what the primary sealed, and reports what no key opens', async () => {
    const old = [sealedTask(onlyA), sealedTask(onlyA, { tenantId: 'tenant-b' }), await blobTask(onlyA)];
    const current = sealedTask(bThenA);
    const lost = sealedTask(onlyC);
    const plain = makeTask();
    await store.insertTasks([...old, current, lost, plain]);

    const failures: RotationFailure[] = [];
    // Pages of one task: the walk's cursor is used at every step.
    const report = await rotateStoredSecrets({ store, blobs, keyring: bThenA, batch: 1, onFailure: (f) => failures.push(f) });
    expect(report).toEqual({
      keyId: 'b',
      tasks: { resealed: 3, skipped: 1, failed: 1 },
      values: { resealed: 5, skipped: 2, failed: 2 },
      interrupted: false,
    });
    const reason = (purpose: string) => `the ${purpose} secret is sealed with key c, which RETRYD_ENCRYPTION_KEY does not list`;
    expect(failures.sort((x, y) => x.field.localeCompare(y.field))).toEqual([
      { tenantId: 'default', taskId: lost.taskId, field: 'body', reason: reason('body') },
      { tenantId: 'default', taskId: lost.taskId, field: 'headers.Authorization', reason: reason('header:authorization') },
    ]);

    for (const task of old.slice(0, 2)) {
      const stored = await store.getTask(task.tenantId, task.taskId);
      expect(keyIdsOf(stored)).toEqual(['b', 'b']);
      // Only the sealing changed: the new key alone opens them, to the same values, and the rest of the task is as it was.
      const at = (purpose: string) => ({ tenantId: task.tenantId, taskId: task.taskId, purpose });
      expect(openSecret(onlyB, (stored?.headers['Authorization'] as { enc: string }).enc, at('header:authorization'))).toBe('Bearer s3cret');
      expect(openSecret(onlyB, stored?.body as string, at('body'))).toBe('{"card":"4111"}');
      expect({ ...stored, headers: task.headers, body: task.body }).toEqual(task);
    }
    const blob = (await blobs.get(old[2]?.bodyRef as string)).toString('utf8');
    expect(openSecret(onlyB, blob, { tenantId: 'default', taskId: old[2]?.taskId as string, purpose: 'body' })).toBe('large-s3cret');
    expect(await store.getTask('default', current.taskId)).toEqual(current);
    expect(await store.getTask('default', lost.taskId)).toEqual(lost);
    expect(await store.getTask('default', plain.taskId)).toEqual(plain);

    // A second run finds everything under the primary key but what no key opens.
    const again = await rotateStoredSecrets({ store, blobs, keyring: bThenA });
    expect(again.tasks).toEqual({ resealed: 0, skipped: 4, failed: 1 });
    expect(again.values).toEqual({ resealed: 0, skipped: 7, failed: 2 });
  });

  it('reports a sensitive body whose blob is missing, and still re-seals the rest of the task', async () => {
    const task = { ...sealedTask(onlyA), body: null, bodyRef: 'default/gone' };
    await store.insertTasks([task]);
    const failures: RotationFailure[] = [];
    const report = await rotateStoredSecrets({ store, blobs, keyring: bThenA, onFailure: (f) => failures.push(f) });
    expect(report.values).toEqual({ resealed: 1, skipped: 0, failed: 1 });
    expect(failures).toEqual([
      { tenantId: 'default', taskId: task.taskId, field: 'body', reason: "the body's blob default/gone is missing from the blob store" },
    ]);
    expect(keyIdsOf(await store.getTask('default', task.taskId))[0]).toBe('b');
  });

  it('stops between pages when its signal is aborted, and a later run finishes', async () => {
    await store.insertTasks([sealedTask(onlyA), sealedTask(onlyA), sealedTask(onlyA)]);
    const abort = new AbortController();
    const counting: Pick<Store, 'sealing'> = {
      sealing: {
        walkSealedTasks: async (page) => {
          const result = await store.sealing.walkSealedTasks(page);
          // Aborted while the first page is in progress: that page is finished, no other is read.
          abort.abort();
          return result;
        },
        resealTask: (ref, expected, next) => store.sealing.resealTask(ref, expected, next),
      },
    };
    const first = await rotateStoredSecrets({ store: counting, blobs, keyring: bThenA, batch: 2, signal: abort.signal });
    expect(first).toMatchObject({ interrupted: true, tasks: { resealed: 2, skipped: 0, failed: 0 } });
    const second = await rotateStoredSecrets({ store, blobs, keyring: bThenA, batch: 2 });
    expect(second).toMatchObject({ interrupted: false, tasks: { resealed: 1, skipped: 2, failed: 0 } });
  });

  it('lets the event loop turn between pages, so a signal handler can stop a walk over SQLite, whose calls resolve at once', async () => {
    await store.insertTasks(Array.from({ length: 5 }, () => sealedTask(onlyA)));
    const abort = new AbortController();
    // What a SIGINT handler does: it runs on a turn of the event loop, which a chain of resolved promises never gives.
    setImmediate(() => abort.abort());
    const report = await rotateStoredSecrets({ store, blobs, keyring: bThenA, batch: 2, signal: abort.signal });
    expect(report).toMatchObject({ interrupted: true, tasks: { resealed: 2 } });
  });

  it('reads a task again when another rotation re-sealed it first, and finds it current', async () => {
    const task = sealedTask(onlyA);
    await store.insertTasks([task]);
    // Another rotation, under the same keys, writes between this one's read and its write.
    const racing: SealedTaskStore = {
      walkSealedTasks: (page) => store.sealing.walkSealedTasks(page),
      resealTask: async (ref, expected, next) => {
        const other = await rotateStoredSecrets({ store, blobs, keyring: bThenA });
        expect(other.tasks.resealed).toBe(1);
        return store.sealing.resealTask(ref, expected, next);
      },
    };
    const report = await rotateStoredSecrets({ store: { sealing: racing }, blobs, keyring: bThenA });
    expect(report.tasks).toEqual({ resealed: 0, skipped: 1, failed: 0 });
    expect(keyIdsOf(await store.getTask('default', task.taskId))).toEqual(['b', 'b']);
  });
});
