import { compareTargets } from '../store/claim-shares.js';
import type { TargetRef } from '../store/store.js';

/**
 * Where the engine's next claim starts the ring (`ClaimOptions.after`): the last target queue, in ring order, that a
 * claim starting after `after` served, given the tasks it returned; `after` itself when it returned none.
 *
 * A claim serves the ready queues in ring order (`(tenantId, targetKey)` ascending, starting after `after`, wrapping
 * round: see `ringOrder`), so passing on the last one served lets the next claim go on with the queues this one had
 * no slot for. Without it, with more ready queues than slots, every claim would serve the same first queues.
 *
 * One pass with `compareTargets`, no sort (this runs on every claim): in ring order the queues after `after` come
 * first and those at or before it last, so the last served is the greatest of those at or before `after` if there
 * are any, else the greatest of all. Returns a new object, so the cursor does not keep a claimed task alive.
 *
 * @example
 * ```ts
 * // served a:https://x, b:https://y after a:https://x → the ring wrapped past b; the next claim starts after a:https://x
 * lastQueueServed(tasks, { tenantId: 'a', targetKey: 'https://x' });
 * ```
 */
export function lastQueueServed(tasks: readonly TargetRef[], after: TargetRef | undefined): TargetRef | undefined {
  let greatest: TargetRef | undefined;
  let greatestWrapped: TargetRef | undefined;
  for (const task of tasks) {
    if (after !== undefined && compareTargets(task, after) <= 0) {
      if (greatestWrapped === undefined || compareTargets(task, greatestWrapped) > 0) greatestWrapped = task;
    } else if (greatest === undefined || compareTargets(task, greatest) > 0) {
      greatest = task;
    }
  }
  const last = greatestWrapped ?? greatest;
  return last === undefined ? after : { tenantId: last.tenantId, targetKey: last.targetKey };
}
