import type { RetryTask } from '../domain/task.js';
import { TenantMap } from '../domain/tenant-map.js';
import type { InsertResult, VisibleInsert } from '../store/store.js';

/** Options of {@link EnqueueBatcher}. */
export interface EnqueueBatcherOptions {
  /** The durable write, normally `store.insertTasks`: one transaction for all the tasks it is given. */
  insert: (tasks: readonly RetryTask[]) => Promise<InsertResult[]>;
  /**
   * The same write answered in two steps, normally `store.insertTasksVisible` (absent: `insert` for every flush): used
   * for a flush that holds a {@link EnqueueBatcher.submitVisible} submission.
   */
  insertVisible?: ((tasks: readonly RetryTask[]) => Promise<VisibleInsert>) | undefined;
  /**
   * Most tasks merged into one write. A single submission (a batch request of up to 1,000 tasks) is never
   * split, so it always commits in one transaction. Default 5,000.
   */
  maxTasksPerFlush?: number;
  /**
   * Most writes in flight at once (default 1). More lets a server store (PostgreSQL, Redis) work on one write while
   * the service prepares the next; SQLite has one writer, and its writes block the event loop anyway.
   */
  maxConcurrentWrites?: number;
}

interface Submission {
  tasks: readonly RetryTask[];
  /** Answered once visible (`submitVisible`), not once durable. */
  visible: boolean;
  resolve: (write: VisibleInsert) => void;
  reject: (error: unknown) => void;
}

/** The `durable` of a write that was durable when it answered. */
const DURABLE: Promise<void> = Promise.resolve();

/**
 * Group commit for enqueues: concurrent submissions (single tasks and batches) are merged into one
 * `insertTasks` call, so N concurrent clients cost one durable write (one fsync) instead of N.
 *
 * There is no timer. A submission that finds the batcher idle is written in the event loop's next check
 * phase (`setImmediate`): every request whose bytes arrived in the same I/O poll shares the write, which
 * matters for a synchronous driver (better-sqlite3) that blocks the loop while it commits, since requests
 * then arrive in bursts. Submissions made while `maxConcurrentWrites` writes are in progress wait for one of
 * them and are written together the moment it finishes. Under light load each enqueue is written alone with
 * no added latency beyond one loop turn; under heavy load batches grow by themselves.
 *
 * Writes in flight together are separate transactions: a key sent by two of them is settled by the store, as
 * between instances (exactly one inserts; the other answers `duplicate` with that task).
 *
 * A flush that holds a hand-off ({@link EnqueueBatcher.submitVisible}) goes through `insertVisible` when the store has
 * one: its tasks' attempts start once the write is visible, and every submission of it is acknowledged once durable.
 *
 * Tasks of one flush that share `(tenantId, idempotencyKey)` are sent once: the later ones get the result
 * `duplicate` with the first one's task, exactly as if they had arrived just after it.
 *
 * @example
 * ```ts
 * const batcher = new EnqueueBatcher({ insert: (tasks) => store.insertTasks(tasks) });
 * const [result] = await batcher.submit([task]); // { kind: 'inserted', task } once durable
 * ```
 */
export class EnqueueBatcher {
  readonly #insert: EnqueueBatcherOptions['insert'];
  readonly #insertVisible: EnqueueBatcherOptions['insertVisible'];
  readonly #max: number;
  readonly #maxWrites: number;
  #queue: Submission[] = [];
  readonly #writing = new Set<Promise<void>>();
  #scheduled = false;

  constructor(options: EnqueueBatcherOptions) {
    this.#insert = options.insert;
    this.#insertVisible = options.insertVisible;
    this.#max = options.maxTasksPerFlush ?? 5_000;
    this.#maxWrites = options.maxConcurrentWrites ?? 1;
    if (!Number.isInteger(this.#maxWrites) || this.#maxWrites < 1) {
      throw new RangeError(`maxConcurrentWrites must be an integer >= 1, got ${String(options.maxConcurrentWrites)}`);
    }
  }

  /** Resolves with one result per task, in order, once the write holding them is durable; rejects if it failed. */
  submit(tasks: readonly RetryTask[]): Promise<InsertResult[]> {
    if (tasks.length === 0) return Promise.resolve([]);
    return new Promise<VisibleInsert>((resolve, reject) => {
      this.#queue.push({ tasks, visible: false, resolve, reject });
      this.#schedule();
    }).then(async ({ results, durable }) => {
      await durable;
      return results;
    });
  }

  /**
   * {@link submit}, answered in two steps: `results` once the tasks are visible to the store's readers, `durable`
   * once they are durable (with no `insertVisible`, both at once). For the hand-off, whose attempt need not wait for
   * the flush; the caller acknowledges nothing before `durable`. Other submissions that share its write still answer
   * once durable.
   */
  submitVisible(tasks: readonly RetryTask[]): Promise<VisibleInsert> {
    if (tasks.length === 0) return Promise.resolve({ results: [], durable: DURABLE });
    return new Promise<VisibleInsert>((resolve, reject) => {
      this.#queue.push({ tasks, visible: true, resolve, reject });
      this.#schedule();
    });
  }

  /** Resolves when every submission made so far has been written (or has failed). */
  async drain(): Promise<void> {
    while (this.#writing.size > 0 || this.#queue.length > 0 || this.#scheduled) {
      await (this.#writing.size > 0 ? Promise.race(this.#writing) : new Promise<void>((r) => setImmediate(r)));
    }
  }

  #schedule(): void {
    if (this.#writing.size >= this.#maxWrites || this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#flushNext();
    });
  }

  #flushNext(): void {
    if (this.#writing.size >= this.#maxWrites || this.#queue.length === 0) return;
    const taken: Submission[] = [];
    let size = 0;
    while (this.#queue.length > 0) {
      const next = this.#queue[0] as Submission;
      if (taken.length > 0 && size + next.tasks.length > this.#max) break;
      taken.push(next);
      this.#queue.shift();
      size += next.tasks.length;
    }
    const writing: Promise<void> = this.#write(taken).finally(() => {
      this.#writing.delete(writing);
      this.#flushNext();
    });
    this.#writing.add(writing);
  }

  async #write(taken: Submission[]): Promise<void> {
    // Plain loops and no key or object per task: this runs for every task enqueued, and `flatMap`, a joined key and a
    // slot object per task showed in W4's profile.
    const all: RetryTask[] = [];
    for (const s of taken) for (const task of s.tasks) all.push(task);
    /** The index in `unique` of each (tenant, idempotency key)'s first task. */
    const firstIndexOf = new TenantMap<string, number>();
    const unique: RetryTask[] = [];
    /** For each task of `all`: its index in `unique`, as `-1 - index` when it repeats an earlier key of this flush. */
    const slots = new Int32Array(all.length);
    for (let i = 0; i < all.length; i++) {
      const task = all[i] as RetryTask;
      const seen = firstIndexOf.get(task.tenantId, task.idempotencyKey);
      if (seen !== undefined) {
        slots[i] = -1 - seen;
        continue;
      }
      firstIndexOf.set(task.tenantId, task.idempotencyKey, unique.length);
      slots[i] = unique.length;
      unique.push(task);
    }
    let results: InsertResult[];
    let durable = DURABLE;
    try {
      if (this.#insertVisible !== undefined && taken.some((s) => s.visible)) ({ results, durable } = await this.#insertVisible(unique));
      else results = await this.#insert(unique);
      if (results.length !== unique.length) {
        throw new Error(`insertTasks returned ${results.length} results for ${unique.length} tasks`);
      }
    } catch (error) {
      for (const s of taken) s.reject(error);
      return;
    }
    let offset = 0;
    for (const s of taken) {
      const own: InsertResult[] = new Array(s.tasks.length);
      for (let i = 0; i < s.tasks.length; i++) {
        const slot = slots[offset + i] as number;
        own[i] = slot >= 0 ? (results[slot] as InsertResult) : { kind: 'duplicate', task: (results[-1 - slot] as InsertResult).task };
      }
      s.resolve({ results: own, durable });
      offset += s.tasks.length;
    }
  }
}
