import { audit } from '../audit.js';
import type { Acknowledged } from '../audit.js';
import { CHAOS_POLICY, keys, kill9, openAuditStore, serviceArgs, startServiceProcess, stop, waitSettled } from '../chaos-kit.js';
import { waitFor } from '../../test/wait-for.js';
import { GrpcChaosDownstream } from '../grpc-chaos-downstream.js';
import { checks, type ChaosContext, type Scenario, type ScenarioOutcome } from '../scenario.js';
import { chaosStores, type StoreFixture } from '../store-fixtures.js';

// A gRPC target through a crash: the same promises as an HTTP one (every task ends, each key processed once), with
// the idempotency key in metadata and gRPC statuses deciding the retries.

/** Enqueues one gRPC task per key (the key's bytes as the message), through the batch API; the acknowledged ones. */
async function enqueueGrpc(apiUrl: string, origin: string, keyList: readonly string[]): Promise<Acknowledged[]> {
  const tasks = keyList.map((key) => ({
    targetUrl: `${origin}/chaos.Payments/Charge`,
    method: 'POST',
    idempotencyKey: key,
    body: Buffer.from(key).toString('base64'),
    policy: CHAOS_POLICY,
  }));
  const res = await fetch(`${apiUrl}/retry-tasks/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tasks }) });
  if (res.status !== 200) throw new Error(`the batch was refused with ${res.status}: ${await res.text()}`);
  const { results } = (await res.json()) as { results: { status: number; task?: { taskId: string } }[] };
  return results.flatMap((result, i) => (result.status === 201 && result.task !== undefined ? [{ taskId: result.task.taskId, idempotencyKey: keyList[i] as string }] : []));
}

/** kill -9 while gRPC calls are under way (each key's first call answered UNAVAILABLE), restart, and audit. */
async function killDuringGrpc(ctx: ChaosContext, fixture: StoreFixture): Promise<ScenarioOutcome> {
  const { failed, check } = checks();
  const storeUrl = await fixture.fresh(ctx);
  const downstream = new GrpcChaosDownstream();
  const origin = await downstream.start();
  ctx.defer(() => downstream.close());
  const first = await startServiceProcess(serviceArgs(storeUrl));
  ctx.defer(() => stop(first));
  const count = Math.max(4, ctx.tasks * 4);
  const acknowledged = await enqueueGrpc(first.url, origin, keys('grpc-order', count));
  check(acknowledged.length === count, `${acknowledged.length} of ${count} tasks acknowledged`);
  // Mid-run: some keys retried and processed, most not yet.
  await waitFor('some keys processed', () => downstream.processed.size >= Math.ceil(count / 4), 30_000);
  await kill9(first);
  const processedAtKill = downstream.processed.size;
  const second = await startServiceProcess(serviceArgs(storeUrl));
  ctx.defer(() => stop(second));
  const store = await openAuditStore(storeUrl);
  ctx.defer(() => store.close());
  await waitSettled(store, acknowledged.length);
  const report = await audit(store, acknowledged, downstream);
  check(report.succeeded === acknowledged.length, `${report.succeeded} of ${acknowledged.length} tasks succeeded`);
  const unretried = acknowledged.filter((task) => (downstream.requests.get(task.idempotencyKey) ?? 0) < 2).length;
  check(unretried === 0, `${unretried} keys were processed without the UNAVAILABLE call before it`);
  return {
    audit: report,
    failed,
    notes: `killed with ${processedAtKill} of ${acknowledged.length} keys processed; ${report.requests} gRPC calls; ${report.leaseExpired} lost attempt(s) reaped as lease_expired; ${report.replays} replay(s)`,
  };
}

/** The gRPC scenarios, on each store of `chaosStores()`. */
export const GRPC_SCENARIOS: Scenario[] = chaosStores().map((fixture) => ({
  id: `kill-during-grpc/${fixture.id}`,
  store: fixture.name,
  fault: '`kill -9` of the worker while gRPC calls are under way (UNAVAILABLE on each key\'s first call)',
  run: (ctx) => killDuringGrpc(ctx, fixture),
}));
