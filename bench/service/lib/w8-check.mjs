// W8's end-of-run check (../w8.mjs): nothing is lost. Every task enqueued in the last retention period before the
// end must still be in the store, finished as it should have (SUCCEEDED, or EXHAUSTED for the keys the downstream
// always refuses) or still live, and a finished one must carry its `expiresAt`.

import { inParallel, statusOf, summarize } from './report.mjs';

const LIVE = new Set(['PENDING', 'IN_FLIGHT']);

/**
 * Reads back the tasks `indexes` (oldest first, `concurrency` at a time: the oldest are the first the purge may
 * take) with `GET /retry-tasks/{taskId}`. A task not found is lost, unless its retention could have passed when it
 * was asked for: a task ends no sooner than `minLifeMs` after its creation (its retry delay: every task here makes
 * two attempts), so it cannot expire before `createdAt + minLifeMs + retentionMs`; the check runs right after the
 * load, so there should be none of those either.
 *
 * Returns counts by status, `lost`, `goneAfterRetention`, `wrongOutcome` (a task that should have succeeded
 * exhausted, or the reverse), `otherStatus` (FAILED, CANCELLED: none is expected), `noExpiry` (finished with no
 * `expiresAt`), the spread of `expiresAt − updatedAt` over the finished ones (the retention, to the ms), a few
 * examples of what went wrong, and how long the check took.
 */
export async function checkRecent(service, { indexes, ids, createdAt, exhausts, retentionMs, minLifeMs, concurrency = 32 }) {
  const byStatus = {};
  let lost = 0;
  let goneAfterRetention = 0;
  let wrongOutcome = 0;
  let otherStatus = 0;
  let noExpiry = 0;
  const expiry = [];
  const examples = [];
  const note = (what) => examples.length < 5 && examples.push(what);
  const started = performance.now();
  await inParallel(indexes.length, concurrency, async (j) => {
    const i = indexes[j];
    const askedAt = Date.now();
    let task;
    try {
      task = await service.call('GET', `/retry-tasks/${ids[i]}`);
    } catch (error) {
      if (statusOf(error) !== 404) throw error;
      if (askedAt >= createdAt[i] + minLifeMs + retentionMs) goneAfterRetention += 1;
      else {
        lost += 1;
        note(`task ${i} (${ids[i]}) not found ${askedAt - createdAt[i]} ms after its creation`);
      }
      return;
    }
    byStatus[task.status] = (byStatus[task.status] ?? 0) + 1;
    if (LIVE.has(task.status)) return;
    if (task.status !== 'SUCCEEDED' && task.status !== 'EXHAUSTED') {
      otherStatus += 1;
      note(`task ${i} (${ids[i]}) ${task.status}: ${task.lastError ?? task.deadLetterReason ?? ''}`);
      return;
    }
    if ((task.status === 'EXHAUSTED') !== exhausts(i)) {
      wrongOutcome += 1;
      note(`task ${i} (${ids[i]}) ${task.status}: ${task.lastError ?? task.deadLetterReason ?? ''}`);
    }
    if (task.expiresAt === null || task.expiresAt === undefined) {
      noExpiry += 1;
      note(`task ${i} (${ids[i]}) ${task.status} without expiresAt`);
    } else expiry.push(task.expiresAt - task.updatedAt);
  });
  return {
    checked: indexes.length,
    byStatus,
    lost,
    goneAfterRetention,
    wrongOutcome,
    otherStatus,
    noExpiry,
    expiryAfterEnd: summarize(expiry),
    examples,
    seconds: (performance.now() - started) / 1000,
    ok: lost === 0 && otherStatus === 0 && noExpiry === 0,
  };
}
