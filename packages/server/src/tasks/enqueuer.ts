import { RetrydError } from '../domain/errors.js';
import type { RetryTask } from '../domain/task.js';
import type { InsertResult } from '../store/store.js';
import type { EnqueueBatcher } from './enqueue-batcher.js';
import { leasedTo, type HandOff } from './hand-off.js';
import { storeFailure } from './store-failure.js';
import { TaskPreparer, type EnqueueContext, type PreparedEntry, type TaskPreparerDeps } from './task-preparer.js';

/** A new task (201), or the task an earlier identical request created (200, `Idempotent-Replayed: true`). */
export type EnqueueResult = { kind: 'created' | 'replayed'; task: RetryTask };

/** One entry of a batch: as a single enqueue would answer, or the error it would get. */
export type BatchEntryResult = EnqueueResult | { kind: 'error'; error: RetrydError };

export type { EnqueueContext } from './task-preparer.js';

/** What an {@link Enqueuer} prepares tasks with (`TaskPreparerDeps`), and where it writes them. */
export interface EnqueuerDeps extends TaskPreparerDeps {
  batcher: EnqueueBatcher;
  /**
   * Tasks were inserted waiting for a claim, the earliest due at `dueAt` (epoch ms; absent: now). A wake for a time to
   * come only sets the due timer: no claim is made before there is something to claim.
   */
  wake: (dueAt?: number) => void;
  /** The local engine, which takes tasks due at once straight from the enqueue. Absent: every task waits for a claim. */
  handOff?: HandOff | undefined;
}

/**
 * The enqueue pipeline shared by single and batch requests: prepare each entry (`TaskPreparer`: validate it, check its
 * policy and its target, put a large body in the blob store), then hand every valid task of the request to the batcher
 * in one submission (one transaction) and tell created, replayed and conflicting keys apart.
 */
export class Enqueuer {
  readonly #preparer: TaskPreparer;

  constructor(private readonly deps: EnqueuerDeps) {
    this.#preparer = new TaskPreparer(deps);
  }

  /**
   * Enqueues each input; `pathOf(i)` prefixes field names (`tasks[3].`). Entries are independent except
   * for the write: if the store fails, the whole call rejects with 503 and nothing was acknowledged.
   */
  async enqueue(
    tenantId: string,
    inputs: readonly unknown[],
    pathOf: (index: number) => string,
    context: EnqueueContext = {},
  ): Promise<BatchEntryResult[]> {
    const batch = this.#preparer.prepare(tenantId, inputs, pathOf, context);
    const { now, entries: prepared } = batch instanceof Promise ? await batch : batch;
    const valid = prepared.filter((p): p is Extract<PreparedEntry, { task: RetryTask }> => 'task' in p);
    // A store outage is no entry's fault: the whole request answers 503 rather than 200 with failed entries.
    const outage = prepared.find((p) => 'error' in p && p.error.code === 'STORE_UNAVAILABLE');
    if (outage !== undefined && 'error' in outage) {
      await this.#dropBlobs(valid.map((p) => p.blobRef));
      throw outage.error;
    }
    // A target met for the first time gets its gate set before its tasks can be claimed (its slow start).
    const preparing = this.deps.handOff?.prepare?.(valid.map((p) => p.task));
    if (preparing !== undefined) await preparing;
    // Tasks due at once go in already leased to the local engine, as many as it has room for.
    const granted = this.#lease(valid, now);
    let inserted: InsertResult[];
    // A hand-off's attempt starts once its task is visible; the answer waits for `durable` (below) all the same.
    let durable: Promise<void> | undefined;
    try {
      if (granted.length === 0) inserted = await this.deps.batcher.submit(valid.map((p) => p.task));
      else ({ results: inserted, durable } = await this.deps.batcher.submitVisible(valid.map((p) => p.task)));
    } catch (error) {
      if (granted.length > 0) this.deps.handOff?.giveBack(granted);
      await this.#dropBlobs(valid.map((p) => p.blobRef));
      throw storeFailure(error, this.deps.store.kind, 'enqueue');
    }
    if (granted.length > 0) {
      // A loop, not `flatMap`: it runs for every hand-off, and a one-element array per task showed in W4's profile.
      const adopted: RetryTask[] = [];
      valid.forEach((p, i) => {
        if (p.task.status === 'IN_FLIGHT' && inserted[i]?.kind === 'inserted') adopted.push(p.task);
      });
      this.deps.handOff?.adopt(adopted);
      if (adopted.length < granted.length) {
        const used = new Set(adopted);
        this.deps.handOff?.giveBack(granted.filter((task) => !used.has(task)));
      }
    }
    if (durable !== undefined) {
      try {
        await durable;
      } catch (error) {
        // Not known to be durable, so not acknowledged; its tasks (and their blobs) may be stored all the same.
        throw storeFailure(error, this.deps.store.kind, 'enqueue');
      }
    }
    const { results, waitingFrom, orphans } = settleEntries(prepared, inserted);
    // A handed-off task needs no claim; a task left waiting does, now or at its due time.
    if (waitingFrom !== null) this.deps.wake(waitingFrom);
    await this.#dropBlobs(orphans);
    return results;
  }

  /** Leases the due-now tasks among `valid` to the local engine, as many as it grants; returns the tasks it leased. */
  #lease(valid: { task: RetryTask }[], now: number): RetryTask[] {
    const handOff = this.deps.handOff;
    if (handOff === undefined) return [];
    const due = valid.filter((p) => p.task.nextAttemptAt !== null && p.task.nextAttemptAt <= now);
    if (due.length === 0) return [];
    const grant = handOff.reserve(due.map((p) => p.task));
    return grant.indices.map((i) => {
      const p = due[i] as { task: RetryTask };
      p.task = leasedTo(p.task, grant, now);
      return p.task;
    });
  }

  /** Removes blobs no task refers to (their task was a duplicate, or the write failed). Best effort. */
  async #dropBlobs(refs: readonly (string | null)[]): Promise<void> {
    await Promise.all(refs.map((ref) => (ref === null ? undefined : this.deps.blobs.delete(ref).catch(() => undefined))));
  }
}

/**
 * What each prepared entry became once the valid ones were inserted (`inserted`: one result per valid entry, in
 * order): created, replayed (its key holds a task made by the same request), or an error (the key holds another
 * request's task: 422). `waitingFrom`: the earliest due time of the tasks inserted PENDING, which need a claim (null:
 * none); `orphans`: the blobs written for entries that were not inserted, which no task refers to.
 */
export function settleEntries(
  prepared: readonly PreparedEntry[],
  inserted: readonly InsertResult[],
): { results: BatchEntryResult[]; waitingFrom: number | null; orphans: (string | null)[] } {
  const results: BatchEntryResult[] = [];
  let v = 0;
  let waitingFrom: number | null = null;
  const orphans: (string | null)[] = [];
  for (const p of prepared) {
    if ('error' in p) {
      results.push({ kind: 'error', error: p.error });
      continue;
    }
    const outcome = inserted[v++];
    if (outcome === undefined) throw new Error('the insert returned fewer results than tasks');
    if (outcome.kind === 'inserted') {
      if (outcome.task.status === 'PENDING') {
        // A PENDING task without a due time is due now (0: before any engine's now), as every wake was before.
        const due = outcome.task.nextAttemptAt ?? 0;
        if (waitingFrom === null || due < waitingFrom) waitingFrom = due;
      }
      results.push({ kind: 'created', task: outcome.task });
      continue;
    }
    orphans.push(p.blobRef);
    results.push(
      outcome.task.requestHash === p.task.requestHash
        ? { kind: 'replayed', task: outcome.task }
        : { kind: 'error', error: keyReused(p.task.idempotencyKey, outcome.task.taskId) },
    );
  }
  return { results, waitingFrom, orphans };
}

function keyReused(key: string, taskId: string): RetrydError {
  return new RetrydError(
    'IDEMPOTENCY_KEY_REUSED',
    `idempotency key ${JSON.stringify(key)} already belongs to task ${taskId}, created by a different request; ` +
      'send the same request to get that task back, or use a new key for a new task',
  );
}

