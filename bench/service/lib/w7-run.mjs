// A W7 run's tasks on the service (../w7.mjs): enqueued, due from one instant after the enqueue, waited for until every
// one ended, and counted by status from the store.

import { sleep } from './report.mjs';

/**
 * Enqueues `count` tasks with `policy`, the i-th a POST to `urlOf(i)` with the key `${keyPrefix}-${indexOf(i)}` and a
 * small JSON body, due `dueOffsetOf(indexOf(i))` ms after one instant after the enqueue (by default all at it, so that
 * a case's load starts at once). Returns that instant (`dueAt`) and the last task's due time (`lastDueAt`), epoch ms.
 *
 * @param {{ enqueueAll: (count: number, makeTask: (i: number) => object, options?: object) => Promise<unknown> }} service
 * @param {{ label: string, count: number, policy: object, keyPrefix: string, urlOf: (i: number) => string,
 *   indexOf?: ((i: number) => number) | undefined, dueOffsetOf?: ((i: number) => number) | undefined }} options
 */
export async function enqueueTasks(service, { label, count, policy, keyPrefix, urlOf, indexOf = (i) => i, dueOffsetOf = () => 0 }) {
  const dueAt = Date.now() + 1_000 + Math.ceil(count * 0.25);
  let lastDueAt = dueAt;
  const due = (i) => {
    // Whole ms: notBefore is an integer.
    const at = dueAt + Math.round(dueOffsetOf(indexOf(i)));
    lastDueAt = Math.max(lastDueAt, at);
    return at;
  };
  await service.enqueueAll(
    count,
    (i) => ({
      targetUrl: urlOf(i),
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orderId: indexOf(i), note: 'w7' }),
      idempotencyKey: `${keyPrefix}-${indexOf(i)}`,
      policy,
      notBefore: due(i),
    }),
    { minimal: true },
  );
  if (Date.now() > dueAt) console.log(`${label}: WARNING: the enqueue ended after the tasks fell due`);
  return { dueAt, lastDueAt };
}

/**
 * Whether no task is PENDING or IN_FLIGHT. IN_FLIGHT is asked before and after PENDING: a task claimed or handed back
 * between two questions would otherwise be in neither answer.
 */
async function nothingLive(service) {
  for (const status of ['IN_FLIGHT', 'PENDING', 'IN_FLIGHT']) if (await service.anyWithStatus(status)) return false;
  return true;
}

/**
 * Waits until every task ended (true) or `deadline` (epoch ms) passed (false). Nothing live must be seen twice in a
 * row: a task that slipped between the questions of one look (an attempt takes a millisecond here) will not twice.
 */
export async function waitEnded(service, deadline) {
  let seen = 0;
  while (Date.now() < deadline) {
    seen = (await nothingLive(service)) ? seen + 1 : 0;
    if (seen === 2) return true;
    await sleep(200);
  }
  return false;
}

/**
 * Every status's count in the store, when the last task to end (a terminal status) did, from its `updatedAt`, and the
 * ids of the ended tasks that took more than one attempt.
 */
export async function tally(service) {
  const statuses = {};
  let lastEndedAt = null;
  const retried = [];
  for (const status of ['SUCCEEDED', 'EXHAUSTED', 'FAILED', 'CANCELLED', 'PENDING', 'IN_FLIGHT']) {
    statuses[status] = 0;
    for await (const items of service.pagesWithStatus(status)) {
      statuses[status] += items.length;
      if (status === 'PENDING' || status === 'IN_FLIGHT') continue;
      for (const t of items) {
        lastEndedAt = Math.max(lastEndedAt ?? 0, t.updatedAt);
        if (t.attemptNumber > 1) retried.push(t.taskId);
      }
    }
  }
  return { statuses, lastEndedAt, retried };
}
