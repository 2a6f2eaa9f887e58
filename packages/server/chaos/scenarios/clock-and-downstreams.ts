import { attemptsOf, audit } from '../audit.js';
import { ChaosDownstream, type Misbehaviour } from '../chaos-downstream.js';
import { ATTEMPT_TIMEOUT_MS, enqueue, keys, logLine, openAuditStore, serviceArgs, startServiceProcess, stop, waitSettled } from '../chaos-kit.js';
import { waitFor } from '../../test/wait-for.js';
import { checks, type ChaosContext, type Scenario, type ScenarioOutcome } from '../scenario.js';

// A clock that jumps on one instance of two, and downstreams that misbehave in each way a network call can.

const HOUR_MS = 3_600_000;

/** The lease of the instance whose lease is at stake: long, so that a reap within it is plainly early. */
const LONG_LEASE_MS = 60_000;

/**
 * Two instances on one SQLite file, one with its clock `offsetMs` off. The instance that will hold a lease (the
 * steady one when the other is ahead, the jumped one when it is behind) claims with a 60 s lease and stops with its
 * response in hand; the other is started and, its clock an hour past that lease, reaps it at once. Woken, the holder's
 * completion is fenced out, the task runs again with the same key (a replay downstream), and the audit holds.
 */
async function clockJump(ctx: ChaosContext, offsetMs: number): Promise<ScenarioOutcome> {
  const { failed, check } = checks();
  const storeUrl = `sqlite:${await ctx.tempDir()}/retryd.db`;
  // Answers 200 at once: the holder stops with a processed key in hand, so the task's re-send is a replay.
  const downstream = new ChaosDownstream();
  const target = await downstream.start();
  ctx.defer(() => downstream.close());
  const jump = { RETRYD_CLOCK_OFFSET_MS: String(offsetMs) };
  const ahead = offsetMs > 0;
  const holder = await startServiceProcess(serviceArgs(storeUrl, LONG_LEASE_MS), { RETRYD_FAULT_PAUSE_AT: 'after-response', ...(ahead ? {} : jump) });
  ctx.defer(() => stop(holder));
  const { acknowledged } = await enqueue(holder.url, target, keys('order', ctx.tasks), { delayMs: 300 });
  const taskId = String((await logLine(holder, 'fault_pause')).taskId);
  const pausedAt = Date.now();
  const other = await startServiceProcess(serviceArgs(storeUrl), ahead ? jump : {});
  ctx.defer(() => stop(other));
  const store = await openAuditStore(storeUrl);
  ctx.defer(() => store.close());
  const reaped = async () => (await attemptsOf(store, taskId)).some((attempt) => attempt.outcome === 'lease_expired');
  await waitFor('the held lease to be reaped', reaped, LONG_LEASE_MS / 2);
  const reapedAfterMs = Date.now() - pausedAt;
  holder.child.kill('SIGCONT');
  const fenced = await logLine(holder, 'fenced_out').catch(() => undefined);
  check(fenced?.taskId === taskId, 'the woken holder did not report its completion fenced out');
  await waitSettled(store, acknowledged.length, 60_000);
  const report = await audit(store, acknowledged, downstream);
  const [holderExit, otherExit] = [await stop(holder), await stop(other)];
  check(holderExit === 0 && otherExit === 0, `the instances exited with ${holderExit} and ${otherExit} on SIGTERM`);
  const who = ahead ? 'the instance 1 h ahead reaped the steady one\'s' : 'the steady instance reaped the one 1 h behind\'s';
  return {
    audit: report,
    failed,
    notes:
      `${who} ${LONG_LEASE_MS / 1000} s lease ${(reapedAfterMs / 1000).toFixed(1)} s after the holder stopped (a live worker's lease: ` +
      `only fencing stops the stale completion, fenced out: ${fenced === undefined ? 'no' : 'yes'}); ${report.leaseExpired} leases reaped in all; ` +
      `${report.replays} re-sends answered as replays downstream`,
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
        // The body never ends: an attempt that ended was cut by its timeout (a timer may fire a millisecond early).
        const short = firsts.filter((first) => first === undefined || first.durationMs < ATTEMPT_TIMEOUT_MS - 50 || first.responseStatus !== 200);
        const durations = firsts.map((first) => Math.round(first?.durationMs ?? 0));
        check(short.length === 0, `${short.length} trickled answers were not cut at the ${ATTEMPT_TIMEOUT_MS} ms timeout with their 200 (${Math.min(...durations)}-${Math.max(...durations)} ms)`);
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
