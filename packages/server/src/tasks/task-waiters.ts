import { isTerminal, type Clock, type TaskStatus } from '@retryd/core';
import { RetrydError } from '../domain/errors.js';
import type { RetryTask } from '../domain/task.js';

/** The longest a request may wait for a task to end: 30 s, under the idle timeouts of common proxies and load balancers. */
export const MAX_WAIT_MS = 30_000;

/** How often the tasks being waited for are read again, in case one ended where this process could not see it. */
export const WAIT_POLL_MS = 1_000;

/** The most requests one process keeps waiting at once; past it, a request answers at once (`busy`). */
export const MAX_WAITERS = 10_000;

/** How a wait ended: the task ended (or may have), the time passed, the caller left, or too many were waiting. */
export type WaitOutcome = 'ended' | 'timeout' | 'aborted' | 'busy';

/** What the waiters need of the store: one task's status, or undefined once it is gone. */
export type ReadStatus = (tenantId: string, taskId: string) => Promise<TaskStatus | undefined>;

export interface TaskWaitersOptions {
  readStatus: ReadStatus;
  clock: Clock;
  /** Default {@link WAIT_POLL_MS}. */
  pollMs?: number;
  /** Default {@link MAX_WAITERS}. */
  maxWaiters?: number;
}

/** A {@link ReadStatus} through whatever reads a task and throws a 404 for one that is not there (`TaskService.getTask`). */
export function statusReader(reader: { getTask(tenantId: string, taskId: string): Promise<RetryTask> }): ReadStatus {
  return async (tenantId, taskId) => {
    try {
      return (await reader.getTask(tenantId, taskId)).status;
    } catch (error) {
      if (error instanceof RetrydError && error.status === 404) return undefined;
      throw error;
    }
  };
}

const keyOf = (tenantId: string, taskId: string) => `${tenantId}\u0000${taskId}`;

/**
 * Requests waiting for tasks to end (`GET /retry-tasks/{taskId}?waitMs=`), cheap while they wait. This process's
 * engine and API tell it at once when a task ends ({@link TaskWaiters.ended}); a task ended by another instance is
 * found by one read per waited-for task every `pollMs` (however many requests wait for it), made only while someone
 * waits. No read per waiter per millisecond, and none at all when nobody waits.
 *
 * @example
 * const waiters = new TaskWaiters({ readStatus: async (t, id) => (await store.getTask(t, id))?.status, clock: systemClock });
 * engineHooks.onTaskEnded = (task) => waiters.ended(task.tenantId, task.taskId);
 * if ((await waiters.wait('default', taskId, 10_000)) === 'ended') { ... }
 */
export class TaskWaiters {
  readonly #readStatus: ReadStatus;
  readonly #clock: Clock;
  readonly #pollMs: number;
  readonly #maxWaiters: number;
  /** Per waited-for task, each of its waiters' release. */
  readonly #byTask = new Map<string, Set<(outcome: WaitOutcome) => void>>();
  #count = 0;
  #polling: AbortController | undefined;
  #closed = false;

  constructor(options: TaskWaitersOptions) {
    this.#readStatus = options.readStatus;
    this.#clock = options.clock;
    this.#pollMs = options.pollMs ?? WAIT_POLL_MS;
    this.#maxWaiters = options.maxWaiters ?? MAX_WAITERS;
  }

  /** How many requests wait now. */
  get size(): number {
    return this.#count;
  }

  /**
   * Waits up to `ms` for the task to end. The caller reads the task afterwards whatever the outcome: `ended` means
   * this process saw it end (or it is gone), and a wait can end just as another instance ends the task.
   */
  wait(tenantId: string, taskId: string, ms: number, signal?: AbortSignal): Promise<WaitOutcome> {
    if (this.#closed) return Promise.resolve('aborted');
    if (signal?.aborted) return Promise.resolve('aborted');
    if (this.#count >= this.#maxWaiters) return Promise.resolve('busy');
    const key = keyOf(tenantId, taskId);
    return new Promise<WaitOutcome>((resolve) => {
      const timer = new AbortController();
      const release = (outcome: WaitOutcome) => {
        const waiters = this.#byTask.get(key);
        if (waiters?.delete(release) !== true) return;
        if (waiters.size === 0) this.#byTask.delete(key);
        this.#count -= 1;
        timer.abort();
        signal?.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const onAbort = () => release('aborted');
      let waiters = this.#byTask.get(key);
      if (waiters === undefined) this.#byTask.set(key, (waiters = new Set()));
      waiters.add(release);
      this.#count += 1;
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#clock.sleep(ms, timer.signal).then(
        () => release('timeout'),
        () => undefined,
      );
      this.#startPolling();
    });
  }

  /** The task ended (or is gone): its waiters answer now. */
  ended(tenantId: string, taskId: string): void {
    const waiters = this.#byTask.get(keyOf(tenantId, taskId));
    if (waiters === undefined) return;
    for (const release of [...waiters]) release('ended');
  }

  /** Releases every waiter (`aborted`) and waits for no more: the service is stopping. */
  close(): void {
    this.#closed = true;
    for (const waiters of [...this.#byTask.values()]) for (const release of [...waiters]) release('aborted');
    this.#polling?.abort();
  }

  #startPolling(): void {
    if (this.#polling !== undefined) return;
    const polling = new AbortController();
    this.#polling = polling;
    void this.#poll(polling.signal).finally(() => {
      if (this.#polling === polling) this.#polling = undefined;
      // A waiter that came as the loop was leaving starts another.
      if (this.#count > 0 && !this.#closed) this.#startPolling();
    });
  }

  async #poll(signal: AbortSignal): Promise<void> {
    while (this.#count > 0) {
      try {
        await this.#clock.sleep(this.#pollMs, signal);
      } catch {
        return;
      }
      // One read per task, however many wait for it; a few at a time, so a crowd of waiters is not a burst.
      const keys = [...this.#byTask.keys()];
      for (let i = 0; i < keys.length && !signal.aborted; i += 8) {
        await Promise.all(keys.slice(i, i + 8).map((key) => this.#check(key)));
      }
    }
  }

  async #check(key: string): Promise<void> {
    const [tenantId = '', taskId = ''] = key.split('\u0000');
    let status: TaskStatus | undefined;
    try {
      status = await this.#readStatus(tenantId, taskId);
    } catch {
      // The store is down: the waiters keep waiting (their own time still ends them), and the next round reads again.
      return;
    }
    if (status === undefined || isTerminal(status)) this.ended(tenantId, taskId);
  }
}
