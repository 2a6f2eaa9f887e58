import { parseBlobRef } from '../blobs/blob-name.js';
import { BlobNotFoundError, type BlobStore } from '../blobs/blob-store.js';
import type { RetryTask } from '../domain/task.js';
import type { Store } from '../store/store.js';
import type { Keyring } from './encryption-keys.js';
import { resealTaskSecrets, resealValue, type ValueReseal } from './reseal-secrets.js';
import { BODY_PURPOSE } from './secret-cipher.js';

/** The page size of the walk when none is given. */
export const DEFAULT_ROTATION_BATCH = 100;

/** Options of {@link rotateStoredSecrets}. */
export interface RotateStoredSecretsOptions {
  /** The task store: only its `sealing` sub-port is used. */
  store: Pick<Store, 'sealing'>;
  /** Where bodies over the inline limit live (a sensitive one is sealed there). */
  blobs: BlobStore;
  /** `RETRYD_ENCRYPTION_KEY`: its primary key seals; every key it lists opens. */
  keyring: Keyring;
  /** Tasks read per page of the walk, and re-sealed at once. Default {@link DEFAULT_ROTATION_BATCH}. */
  batch?: number;
  /** Told of each value that could not be re-sealed, when it is met. */
  onFailure?: (failure: RotationFailure) => void;
  /** Stops the walk after the page in progress: what was written stays written, and a later run goes on from there. */
  signal?: AbortSignal;
}

/** A value that could not be re-sealed: where it is and why, never the value. */
export interface RotationFailure {
  tenantId: string;
  taskId: string;
  /** `headers.<name>` or `body`. */
  field: string;
  /** The rule it broke, naming the key id (`… sealed with key 2025-11, which RETRYD_ENCRYPTION_KEY does not list`). */
  reason: string;
}

/** How many were re-sealed, were sealed under the primary key already, and could not be re-sealed. */
export interface RotationCounts {
  resealed: number;
  skipped: number;
  failed: number;
}

/** What a rotation did. */
export interface RotationReport {
  /** The primary key every value is now sealed with (unless it failed). */
  keyId: string;
  /** Tasks holding a sealed value: failed when one of its values failed, else re-sealed when one was re-sealed. */
  tasks: RotationCounts;
  /** Sealed values: headers, inline bodies and bodies in the blob store. */
  values: RotationCounts;
  /** Whether `signal` stopped the walk before its end. */
  interrupted: boolean;
}

const zero = (): RotationCounts => ({ resealed: 0, skipped: 0, failed: 0 });
const COUNTER = { resealed: 'resealed', current: 'skipped', failed: 'failed' } as const;

/**
 * Re-seals every stored secret under the keyring's primary key, while the service runs: walks every task of every
 * tenant (`store.sealing`), re-seals each sealed header and sensitive body not sealed under the primary key (see
 * `resealTaskSecrets`), writes a body kept in the blob store again under its name, and the task's headers and inline
 * body by `resealTask`, which leaves its status, version and lease alone.
 *
 * Safe to run while instances serve: every instance must hold the new key first and the old ones after it, so a value
 * opens whether an attempt reads it before or after its re-seal. Safe to run twice and to interrupt: each write is
 * atomic and a value already under the primary key is skipped, so a second run finishes what the first left.
 *
 * @throws whatever the store or the blob store throws when it cannot answer (the values written so far stay written)
 * @example
 * ```ts
 * const report = await rotateStoredSecrets({ store, blobs, keyring: parseKeyring(process.env.RETRYD_ENCRYPTION_KEY!) });
 * if (report.values.failed > 0) process.exitCode = 1;
 * ```
 */
export async function rotateStoredSecrets(options: RotateStoredSecretsOptions): Promise<RotationReport> {
  const { store, keyring } = options;
  const report: RotationReport = { keyId: keyring.primary.id, tasks: zero(), values: zero(), interrupted: false };
  const tally = (task: RetryTask, values: readonly ValueReseal[]) => {
    if (values.length === 0) return;
    for (const { field, outcome } of values) {
      report.values[COUNTER[outcome.kind]] += 1;
      if (outcome.kind === 'failed') options.onFailure?.({ tenantId: task.tenantId, taskId: task.taskId, field, reason: outcome.reason });
    }
    const kinds = new Set(values.map((v) => v.outcome.kind));
    report.tasks[kinds.has('failed') ? 'failed' : kinds.has('resealed') ? 'resealed' : 'skipped'] += 1;
  };
  let cursor: string | undefined;
  do {
    if (options.signal?.aborted === true) {
      report.interrupted = true;
      break;
    }
    const page = await store.sealing.walkSealedTasks({ limit: options.batch ?? DEFAULT_ROTATION_BATCH, ...(cursor === undefined ? {} : { cursor }) });
    // A page's tasks at once: each task's writes stand alone, and a networked store answers them over its pool.
    const settled = await Promise.allSettled(page.items.map(async (task) => tally(task, await resealTask(options, task))));
    const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
    cursor = page.nextCursor;
    // With SQLite every call resolves at once: without a turn of the event loop between pages, a signal's handler
    // (the CLI's interrupt) would wait for the end of the walk.
    await new Promise((resolve) => setImmediate(resolve));
  } while (cursor !== undefined);
  return report;
}

/** Re-seals one task's values: its body in the blob store first, then its row. */
async function resealTask(options: RotateStoredSecretsOptions, task: RetryTask): Promise<ValueReseal[]> {
  const values: ValueReseal[] = [];
  if (task.sensitiveBody && task.bodyRef !== null) values.push(await resealBlobBody(options, task, task.bodyRef));
  let current = task;
  // Headers and bodies never change after insert: a refusal means another rotation wrote first. One more look
  // settles it (its values are then current); a second refusal is reported rather than retried for ever.
  for (let look = 1; ; look++) {
    const reseal = resealTaskSecrets(options.keyring, current);
    if (!reseal.changed) return [...values, ...reseal.values];
    const ref = { tenantId: task.tenantId, taskId: task.taskId };
    const result = await options.store.sealing.resealTask(ref, { headers: current.headers, body: current.body }, reseal.next);
    if (result.kind === 'applied') return [...values, ...reseal.values];
    // Gone: nothing is stored any more to re-seal or to fail.
    if (result.kind === 'not_found') return [];
    if (look === 2) {
      const reason = 'the task changed while it was being re-sealed; run the rotation again';
      return [...values, ...reseal.values.map((v) => (v.outcome.kind === 'resealed' ? { field: v.field, outcome: { kind: 'failed' as const, reason } } : v))];
    }
    current = result.task;
  }
}

/**
 * Re-seals a sensitive body kept in the blob store by writing it again under its own name: every blob store replaces
 * a blob in one step (a rename, one row, one key, one object), so an attempt that loads it meanwhile reads the old
 * sealed bytes or the new ones, and both open while the old key is listed.
 */
async function resealBlobBody(options: RotateStoredSecretsOptions, task: RetryTask, ref: string): Promise<ValueReseal> {
  const fail = (reason: string): ValueReseal => ({ field: 'body', outcome: { kind: 'failed', reason } });
  let sealed: string;
  try {
    sealed = (await options.blobs.get(ref)).toString('utf8');
  } catch (error) {
    if (error instanceof BlobNotFoundError) return fail(`the body's blob ${ref} is missing from the blob store`);
    throw error;
  }
  const outcome = resealValue(options.keyring, sealed, { tenantId: task.tenantId, taskId: task.taskId, purpose: BODY_PURPOSE });
  if (outcome.kind !== 'resealed') return { field: 'body', outcome };
  let name: [tenantId: string, key: string];
  try {
    name = parseBlobRef(ref);
  } catch {
    // Never so for a task the API took (a sensitive body is never the caller's own object), but not to be overwritten.
    return fail(`the body's blob ref is not one retryd wrote (tenant/key), so it is not rewritten`);
  }
  const written = await options.blobs.put(...name, outcome.sealed);
  if (written !== ref) throw new Error(`The blob store wrote the body of task ${task.taskId} under ${written}, not ${ref}.`);
  return { field: 'body', outcome };
}
