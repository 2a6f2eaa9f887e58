// Dispatch lag of tasks due now (W2, W4): enqueue through the API on a steady schedule (or in one burst),
// then compare when each task's first request reached the downstream with the task's `nextAttemptAt`.
//
// lag = arrival at the downstream − nextAttemptAt
//   - arrival: stamped by ./downstream.mjs when the request's headers arrive (epoch ms, sub-ms precision,
//     `performance.timeOrigin + performance.now()`, the same time base as retryd's system clock);
//   - nextAttemptAt: the value the enqueue answered (retryd stores whole ms, rounded down, taken when the
//     request is validated: so the lag includes the durable enqueue (its fsync), the wake-up, the claim (another
//     commit), the HTTP request over loopback, and up to 1 ms of rounding).
// A second, service-side figure for a sample: attempt.startedAt − nextAttemptAt (both whole ms, one clock).

import { inParallel, sleep, summarize } from './report.mjs';

/**
 * Sends `total` tasks, `perTick` every `tickMs` (open loop: a slow answer does not delay the next batch;
 * at most `maxInFlight` requests outstanding), or all at once in batches of 1,000 when `burst`.
 * `makeTask(i)` returns the task body; returns the created tasks and how well the schedule was kept. With
 * `onCreated(i, task)`, each created task is handed to it instead and `created` stays empty: a long run (W8's
 * 300,000 tasks) keeps what it needs of them, not every task's whole view.
 *
 * @param {{ enqueueBatch: (tasks: object[]) => Promise<any[]> }} service
 * @param {{ total: number, makeTask: (i: number) => object, perTick?: number | undefined, tickMs?: number | undefined,
 *   burst?: boolean | undefined, maxInFlight?: number | undefined,
 *   onCreated?: ((i: number, task: any) => void) | undefined }} options
 */
export async function sendDueNow(service, { total, makeTask, perTick = 20, tickMs = 10, burst = false, maxInFlight = 64, onCreated }) {
  const created = onCreated === undefined ? new Array(total) : [];
  const latencies = [];
  const send = async (from, to) => {
    const t0 = performance.now();
    const tasks = await service.enqueueBatch(Array.from({ length: to - from }, (_, j) => makeTask(from + j)));
    latencies.push(performance.now() - t0);
    if (onCreated === undefined) for (let j = 0; j < tasks.length; j++) created[from + j] = tasks[j];
    else for (let j = 0; j < tasks.length; j++) onCreated(from + j, tasks[j]);
  };
  const started = performance.now();
  if (burst) {
    await inParallel(Math.ceil(total / 1000), 4, (b) => send(b * 1000, Math.min(total, (b + 1) * 1000)));
    return { created, latency: summarize(latencies), schedule: { ticks: Math.ceil(total / 1000), lateTicks: 0, maxLateMs: 0 }, ms: performance.now() - started };
  }
  const ticks = Math.ceil(total / perTick);
  const inFlight = new Set();
  let lateTicks = 0;
  let maxLateMs = 0;
  for (let k = 0; k < ticks; k++) {
    const due = started + k * tickMs;
    const wait = due - performance.now();
    if (wait >= 1) await sleep(Math.floor(wait));
    const late = performance.now() - due;
    if (late > 2) lateTicks += 1;
    if (late > maxLateMs) maxLateMs = late;
    const p = send(k * perTick, Math.min(total, (k + 1) * perTick)).finally(() => inFlight.delete(p));
    inFlight.add(p);
    if (inFlight.size >= maxInFlight) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  return { created, latency: summarize(latencies), schedule: { ticks, lateTicks, maxLateMs }, ms: performance.now() - started };
}

/** Lag per task (ms) from the downstream's arrivals; tasks that never arrived are counted as missing. */
export function lagsOf(created, arrivals) {
  const lags = [];
  let missing = 0;
  for (const task of created) {
    const at = arrivals.get(task.idempotencyKey);
    if (at === undefined) missing += 1;
    else lags.push(at - task.nextAttemptAt);
  }
  return { lags, missing };
}

/** Service-side lag (attempt 1 startedAt − nextAttemptAt, whole ms) of up to `sample` tasks spread evenly. */
export async function serviceSideLag(service, created, sample = 1000) {
  const step = Math.max(1, Math.floor(created.length / sample));
  const picks = [];
  for (let i = 0; i < created.length && picks.length < sample; i += step) picks.push(created[i]);
  const lags = [];
  await inParallel(picks.length, 8, async (i) => {
    const task = picks[i];
    const page = await service.call('GET', `/retry-tasks/${task.taskId}/attempts?limit=1`);
    const first = page.items[0];
    if (first !== undefined) lags.push(first.startedAt - task.nextAttemptAt);
  });
  return summarize(lags);
}
