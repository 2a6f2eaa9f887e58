import { attemptsOf, audit, listAll } from '../audit.js';
import { ChaosDownstream, type Misbehaviour } from '../chaos-downstream.js';
import { ATTEMPT_TIMEOUT_MS, enqueue, keys, openAuditStore, serviceArgs, startServiceProcess, stop, waitSettled, workerIdOf } from '../chaos-kit.js';
import { checks, type ChaosContext, type Scenario, type ScenarioOutcome } from '../scenario.js';

// A clock that jumps on one instance of two, and downstreams that misbehave in each way a network call can.

const HOUR_MS = 3_600_000;

/** Two instances on one SQLite file, the second with its clock `offsetMs` off; half the tasks enqueued through each. */
async function clockJump(ctx: ChaosContext, offsetMs: number): Promise<ScenarioOutcome> {
  const { failed, check } = checks();
  const storeUrl = `sqlite:${await ctx.tempDir()}/retryd.db`;
  const downstream = new ChaosDownstream({ misbehave: 'fail', delayMs: 50 });
  const target = await downstream.start();
  ctx.defer(() => downstream.close());
  const steady = await startServiceProcess(serviceArgs(storeUrl));
  ctx.defer(() => stop(steady));
  const jumped = await startServiceProcess(serviceArgs(storeUrl), { RETRYD_CLOCK_OFFSET_MS: String(offsetMs) });
  ctx.defer(() => stop(jumped));
  const half = Math.ceil(ctx.tasks / 2);
  const acknowledged = [
    ...(await enqueue(steady.url, target, keys('steady', half))).acknowledged,
    ...(await enqueue(jumped.url, target, keys('jumped', half))).acknowledged,
  ];
  const store = await openAuditStore(storeUrl);
  ctx.defer(() => store.close());
  // Tasks enqueued through an instance an hour ahead are due an hour from now for the other; that one runs them.
  await waitSettled(store, acknowledged.length, 60_000);
  const report = await audit(store, acknowledged, downstream);
  const byWorker = new Map<string, number>();
  for (const task of await listAll(store)) {
    for (const attempt of await attemptsOf(store, task.taskId)) byWorker.set(attempt.workerId, (byWorker.get(attempt.workerId) ?? 0) + 1);
  }
  const fenced = [steady, jumped].map((service) => service.logs.filter((line) => line.event === 'fenced_out').length);
  const [steadyExit, jumpedExit] = [await stop(steady), await stop(jumped)];
  check(steadyExit === 0 && jumpedExit === 0, `the instances exited with ${steadyExit} and ${jumpedExit} on SIGTERM`);
  const sign = offsetMs > 0 ? '+' : '−';
  return {
    audit: report,
    failed,
    notes:
      `attempts by the steady instance ${byWorker.get(workerIdOf(steady)) ?? 0}, by the one at ${sign}1 h ${byWorker.get(workerIdOf(jumped)) ?? 0}; ` +
      `${report.leaseExpired} leases reaped early as lease_expired; completions fenced out: ${fenced[0]} steady, ${fenced[1]} jumped; ${report.replays} replays answered downstream`,
  };
}

const clockAhead: Scenario = {
  id: 'clock-jump-ahead',
  store: 'SQLite',
  fault: "one instance's clock jumps 1 hour ahead",
  run: (ctx) => clockJump(ctx, HOUR_MS),
};

const clockBehind: Scenario = {
  id: 'clock-jump-behind',
  store: 'SQLite',
  fault: "one instance's clock jumps 1 hour behind",
  run: (ctx) => clockJump(ctx, -HOUR_MS),
};

/**
 * What the first attempt of a task must show for each misbehaviour: its outcome, and why. A trickled 200 is a success:
 * the status line is the downstream's answer, and the attempt ends at its timeout with the part of the body it read.
 */
const FIRST_ATTEMPT: Record<Exclude<Misbehaviour, 'ok' | 'fail'>, { fault: string; outcome: string; why: RegExp }> = {
  hang: { fault: 'the downstream accepts the request and never answers', outcome: 'retry_scheduled', why: /no response within/ },
  trickle: { fault: 'the downstream answers 200 and trickles its body, a byte per 100 ms', outcome: 'succeeded', why: /^$/ },
  late: { fault: 'the downstream answers 200 after the client timed out', outcome: 'retry_scheduled', why: /no response within/ },
  huge: { fault: 'the downstream answers 503 with an 8 MiB body', outcome: 'retry_scheduled', why: /^HTTP 503$/ },
  reset: { fault: 'the downstream resets the connection', outcome: 'retry_scheduled', why: /reset|closed|socket/i },
};

function misbehaving(mode: keyof typeof FIRST_ATTEMPT): Scenario {
  return {
    id: `downstream-${mode}`,
    store: 'SQLite',
    fault: FIRST_ATTEMPT[mode].fault,
    async run(ctx) {
      const { failed, check } = checks();
      const storeUrl = `sqlite:${await ctx.tempDir()}/retryd.db`;
      // The first request of each key misbehaves, the next is answered (or replayed, if the first was processed).
      const downstream = new ChaosDownstream({ misbehave: mode, lateMs: 1_500 });
      const target = await downstream.start();
      ctx.defer(() => downstream.close());
      const service = await startServiceProcess(serviceArgs(storeUrl));
      ctx.defer(() => stop(service));
      const { acknowledged } = await enqueue(service.url, target, keys(mode, ctx.tasks));
      const store = await openAuditStore(storeUrl);
      ctx.defer(() => store.close());
      await waitSettled(store, acknowledged.length, 60_000);
      const report = await audit(store, acknowledged, downstream);
      const firsts = await Promise.all(acknowledged.map(async ({ taskId }) => (await attemptsOf(store, taskId))[0]));
      const expected = FIRST_ATTEMPT[mode];
      const unexplained = firsts.filter((first) => first?.outcome !== expected.outcome || !expected.why.test(first.errorMessage ?? ''));
      const shown = unexplained[0] === undefined ? '' : `${unexplained[0].outcome} ${unexplained[0].responseStatus ?? ''} ${unexplained[0].errorMessage ?? ''}`;
      check(unexplained.length === 0, `${unexplained.length} first attempts are not ${expected.outcome} with ${String(expected.why)}: ${shown}`);
      if (mode === 'trickle') {
        const short = firsts.filter((first) => first === undefined || first.durationMs < ATTEMPT_TIMEOUT_MS || first.responseStatus !== 200);
        check(short.length === 0, `${short.length} trickled answers were not cut at the ${ATTEMPT_TIMEOUT_MS} ms timeout with their 200`);
      }
      const longest = Math.max(...firsts.map((first) => Buffer.byteLength(first?.responseBodySnippet ?? '')));
      if (mode === 'huge') {
        check(firsts.every((first) => first?.responseStatus === 503), 'the huge answers were not recorded as 503');
        check(longest <= 4096, `a stored snippet is ${longest} bytes, over the 4 KiB cap`);
        check(downstream.hugeCutShort > 0, 'the service read every huge body to its end');
      }
      const sample = firsts[0];
      return {
        audit: report,
        failed,
        notes:
          `first attempt: ${sample?.outcome ?? '?'} (${sample?.responseStatus ?? 'no status'}${sample?.errorMessage ? `, "${sample.errorMessage}"` : ''}), ` +
          `longest stored snippet ${longest} B${mode === 'huge' ? `, ${downstream.hugeCutShort} huge bodies cut short` : ''}; ${report.replays} replays`,
      };
    },
  };
}

/** The clock and downstream scenarios. */
export const CLOCK_AND_DOWNSTREAM_SCENARIOS: Scenario[] = [
  clockAhead,
  clockBehind,
  ...(['hang', 'trickle', 'late', 'huge', 'reset'] as const).map(misbehaving),
];
