import type { FaultPoint } from '../../src/engine/fault-point.js';
import { attemptsOf, audit, listAll } from '../audit.js';
import { ChaosDownstream } from '../chaos-downstream.js';
import { LEASE_MS, enqueue, keys, kill9, logLine, openAuditStore, serviceArgs, startServiceProcess, stop, waitSettled, workerIdOf } from '../chaos-kit.js';
import { waitFor } from '../../test/wait-for.js';
import { checks, type ChaosContext, type Scenario, type ScenarioOutcome } from '../scenario.js';
import { chaosStores, type StoreFixture } from '../store-fixtures.js';

// Faults of a worker process: kill -9 at each point of an attempt, SIGSTOP past its lease, SIGTERM under load.
// On each store of `chaosStores()` (SQLite alone inside `npm test`): the engine is one, the stores' fencing three.

/** A fresh store of `fixture` and a downstream, both cleaned up at the end. */
async function setUp(ctx: ChaosContext, fixture: StoreFixture, downstream: ChaosDownstream): Promise<{ storeUrl: string; target: string }> {
  const storeUrl = await fixture.fresh(ctx);
  const target = await downstream.start();
  ctx.defer(() => downstream.close());
  return { storeUrl, target };
}

/** kill -9 at a fault point of the first attempt, restart, and audit. */
async function killAt(ctx: ChaosContext, fixture: StoreFixture, point: FaultPoint | 'during-call'): Promise<ScenarioOutcome> {
  const { failed, check } = checks();
  // During the call: the first request of each key is held unanswered, and the kill comes as the first one arrives.
  const downstream = new ChaosDownstream(point === 'during-call' ? { misbehave: 'hang' } : {});
  const { storeUrl, target } = await setUp(ctx, fixture, downstream);
  const first = await startServiceProcess(serviceArgs(storeUrl), point === 'during-call' ? {} : { RETRYD_FAULT_PAUSE_AT: point });
  ctx.defer(() => stop(first));
  const arrived = downstream.nextRequest();
  const { acknowledged } = await enqueue(first.url, target, keys('order', ctx.tasks), { delayMs: 300 });
  let victim: string;
  if (point === 'during-call') {
    victim = await arrived;
  } else {
    const paused = await logLine(first, 'fault_pause');
    victim = acknowledged.find((task) => task.taskId === paused.taskId)?.idempotencyKey ?? '';
  }
  await kill9(first);
  const requestsAtKill = downstream.requests.get(victim) ?? 0;
  const processedAtKill = downstream.processed.get(victim) ?? 0;
  if (point === 'after-claim') check(requestsAtKill === 0, `the task stopped after its claim had already been sent (${requestsAtKill} requests)`);
  if (point === 'after-response') check(processedAtKill === 1, `the task stopped after its response was not processed (${processedAtKill})`);

  const second = await startServiceProcess(serviceArgs(storeUrl));
  ctx.defer(() => stop(second));
  const store = await openAuditStore(storeUrl);
  ctx.defer(() => store.close());
  await waitSettled(store, acknowledged.length);
  const report = await audit(store, acknowledged, downstream);
  const victimTask = acknowledged.find((task) => task.idempotencyKey === victim);
  const victimAttempts = victimTask === undefined ? [] : await attemptsOf(store, victimTask.taskId);
  check(victimAttempts[0]?.outcome === 'lease_expired', `the killed attempt was recorded as ${victimAttempts[0]?.outcome ?? 'nothing'}, not lease_expired`);
  const resent = downstream.requests.get(victim) ?? 0;
  if (point === 'after-response') {
    // The answer was lost with the process: the task is sent again, with the same key, and the downstream replays it.
    check(resent >= 2 && downstream.replays >= 1, `the re-send after the lost response was not a replay (${resent} requests, ${downstream.replays} replays)`);
  }
  return {
    audit: report,
    failed,
    notes: `killed with ${report.acknowledged} acknowledged; the victim's key got ${requestsAtKill} request(s) before the kill, ${resent} in all; ${report.leaseExpired} lost attempt(s) reaped as lease_expired; ${report.replays} replay(s) answered by the downstream`,
  };
}

/** The worker scenarios on one store. */
function onStore(fixture: StoreFixture): Scenario[] {
  const at = (id: string, fault: string, run: Scenario['run']): Scenario => ({ id: `${id}/${fixture.id}`, store: fixture.name, fault, run });
  return [
    at('kill-after-claim', '`kill -9` of the worker between claim and send', (ctx) => killAt(ctx, fixture, 'after-claim')),
    at('kill-during-call', '`kill -9` of the worker during the call', (ctx) => killAt(ctx, fixture, 'during-call')),
    at('kill-after-response', '`kill -9` after the response, before it is recorded (re-sent with the same idempotency key)', (ctx) =>
      killAt(ctx, fixture, 'after-response'),
    ),
    at('sigstop-past-lease', 'SIGSTOP past the lease, then SIGCONT: the stale completion is fenced out', (ctx) => stopPastLease(ctx, fixture)),
    at('sigterm-under-load', 'SIGTERM under load: graceful drain, exit 0, no lease left behind', (ctx) => termUnderLoad(ctx, fixture)),
  ];
}

/** A stops itself with the response in hand; B, on the same store, reaps the lapsed lease and runs the task again. */
async function stopPastLease(ctx: ChaosContext, fixture: StoreFixture): Promise<ScenarioOutcome> {
  const { failed, check } = checks();
  const downstream = new ChaosDownstream();
  const { storeUrl, target } = await setUp(ctx, fixture, downstream);
  const a = await startServiceProcess(serviceArgs(storeUrl), { RETRYD_FAULT_PAUSE_AT: 'after-response' });
  ctx.defer(() => stop(a));
  const { acknowledged } = await enqueue(a.url, target, keys('order', ctx.tasks), { delayMs: 300 });
  const paused = await logLine(a, 'fault_pause');
  const b = await startServiceProcess(serviceArgs(storeUrl));
  ctx.defer(() => stop(b));
  const store = await openAuditStore(storeUrl);
  ctx.defer(() => store.close());
  const taskId = String(paused.taskId);
  await waitFor('the frozen lease to be reaped and the task to succeed', async () => (await store.getTask('default', taskId))?.status === 'SUCCEEDED', 60_000);
  a.child.kill('SIGCONT');
  const fenced = await logLine(a, 'fenced_out').catch(() => undefined);
  check(fenced?.taskId === taskId, 'the woken instance did not report its late completion fenced out');
  await waitSettled(store, acknowledged.length);
  const exit = await stop(a);
  check(exit === 0, `the woken instance exited with ${exit} on SIGTERM`);
  const report = await audit(store, acknowledged, downstream);
  return { audit: report, failed, notes: `frozen past its ${LEASE_MS} ms lease; ${report.leaseExpired} lease(s) reaped by the other instance; late completion fenced out: ${fenced === undefined ? 'no' : 'yes'}` };
}

/** SIGTERM while calls are in flight: exit 0, every lease handed back, a restart finishes the rest. */
async function termUnderLoad(ctx: ChaosContext, fixture: StoreFixture): Promise<ScenarioOutcome> {
  const { failed, check } = checks();
  // Slow answers keep calls in flight at the moment of the SIGTERM.
  const downstream = new ChaosDownstream({ delayMs: 150 });
  const { storeUrl, target } = await setUp(ctx, fixture, downstream);
  const first = await startServiceProcess(serviceArgs(storeUrl));
  ctx.defer(() => stop(first));
  const workerId = workerIdOf(first);
  const { acknowledged } = await enqueue(first.url, target, keys('order', ctx.tasks * 4));
  await waitFor('calls under way', () => downstream.totalRequests >= 8, 30_000);
  first.child.kill('SIGTERM');
  const exit = await first.exited;
  check(exit === 0, `SIGTERM exited with ${exit}, not 0`);
  const store = await openAuditStore(storeUrl);
  ctx.defer(() => store.close());
  const leftBehind = (await listAll(store)).filter((task) => task.status === 'IN_FLIGHT' && task.leaseOwner === workerId).length;
  check(leftBehind === 0, `${leftBehind} leases left behind by the drained instance`);
  const doneAtStop = downstream.processed.size;
  const second = await startServiceProcess(serviceArgs(storeUrl));
  ctx.defer(() => stop(second));
  await waitSettled(store, acknowledged.length);
  const report = await audit(store, acknowledged, downstream);
  check(report.leaseExpired === 0, `${report.leaseExpired} attempts were lost to a lapsed lease: the drain handed back none`);
  return { audit: report, failed, notes: `stopped with ${doneAtStop} of ${acknowledged.length} done; exit ${exit}; leases left behind: ${leftBehind}; the restart finished the rest` };
}

/** The worker-process scenarios, on each store of `chaosStores()`. */
export const WORKER_SCENARIOS: Scenario[] = chaosStores().flatMap(onStore);
