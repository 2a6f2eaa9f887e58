import { isDeepStrictEqual } from 'node:util';
import type { Page, RetryTask } from '../domain/task.js';
import type { PageRequest, TaskRef, TransitionResult } from './store.js';

/**
 * What a task keeps sealed with the encryption key: its stored `headers` (a credential header is `{ enc }`) and its
 * inline `body` (sealed when `sensitiveBody`). A sensitive body kept in the blob store is the blob store's.
 */
export type SealedParts = Pick<RetryTask, 'headers' | 'body'>;

/**
 * The sub-port of the `Store` that `retryd keys rotate-encryption` uses to re-seal stored secrets under the current
 * primary key while the service runs (see `secrets/rotate-stored-secrets.ts`): a walk over every tenant's tasks and one
 * named transition, `resealTask`. The plain values never change: a task's headers and body are written once at insert,
 * and a re-seal only changes which key they are sealed with.
 *
 * Deliberately not here: any notion of keys or ciphertext (the caller decides what to write, the store only guards
 * the write), and the blob store (a body kept there is re-sealed by writing its blob again).
 */
export interface SealedTaskStore {
  /**
   * One page of the tasks of every tenant that may hold a sealed value, in a stable order of the store's choosing (a
   * later page never repeats an earlier one), from the opaque cursor of the previous page. Every task that holds a
   * sealed header or `sensitiveBody` and exists from the first page to the last is in exactly one page, whatever
   * status it moves through meanwhile; a store may also return tasks that hold none (the caller skips them). Tasks
   * inserted during the walk may be left out: they are sealed under the key of the instance that took them.
   *
   * An operator's walk, not a hot path: each page is one bounded read (at most `limit` tasks), but a store may read
   * past tasks without secrets to fill it.
   *
   * @throws InvalidCursorError for a cursor this walk did not make
   */
  walkSealedTasks(page: PageRequest): Promise<Page<RetryTask>>;

  /**
   * Replaces a task's `headers` and inline `body` with `next` if they are still `expected` (compared as values:
   * headers in any order of their names), in one atomic step. Nothing else changes: not its status, version,
   * `updatedAt`, lease, fencing token or attempts, so an attempt in flight keeps its lease and its completion still
   * applies. `applied` with the task after the write; `refused` with the task as it is when its headers or body differ
   * from `expected`; `not_found` when the tenant has no such task.
   *
   * Headers and bodies never change after insert, so a refusal means a surprise (another rotation that wrote first):
   * the caller reads the task again.
   */
  resealTask(ref: TaskRef, expected: SealedParts, next: SealedParts): Promise<TransitionResult>;
}

/**
 * Whether two tasks' sealed parts hold the same values: the same body, and the same headers whatever the order of
 * their names (a store that keeps headers as JSON may give them back in another order than they were written).
 */
export function sameSealedParts(a: SealedParts, b: SealedParts): boolean {
  return a.body === b.body && isDeepStrictEqual(a.headers, b.headers);
}
