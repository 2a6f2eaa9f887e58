// `npm run bench -- --merge FILE`: a run of some workloads completes an earlier results file, whose steps for the
// other workloads it takes over, each marked with the run it came from, so that the page keeps every figure and says
// which run measured it.

import { BASELINE_WORKLOADS, STORES, WORKLOADS } from './plan.mjs';

/**
 * What a run of `workloads` on `stores` takes over from `earlier` (the results file `file`, as the page names it): the
 * steps of every other workload, and of these workloads on other stores (`runs`), each with `from: { file, startedAt, commit, dirty }` (a step the earlier file had
 * taken over itself keeps its own), the runs they came from (`merged`: `from` with the `workloads` it gave and its
 * note), the workloads and stores of both runs, and the earlier `baseline` when a kept step ran beside it.
 *
 * @example
 * const kept = takeOver(JSON.parse(readFileSync(f, 'utf8')), 'bench/results/2026-11-28-6.json', { quick: false, workloads: ['w1', 'w7'], stores });
 */
export function takeOver(earlier, file, { quick, workloads, stores, baseline }) {
  if (earlier.format !== 1) throw new Error(`--merge: ${file} is not a results file of npm run bench (format 1)`);
  if (earlier.quick !== quick) throw new Error(`--merge: ${file} is ${earlier.quick ? 'a quick' : 'a full-size'} run and this one is not: their figures do not go on one page`);
  const own = { file, startedAt: earlier.startedAt, commit: earlier.environment.git.commit, dirty: earlier.environment.git.dirty };
  // A step is measured again when its workload runs on a store it ran on; every other one is kept (`--workloads w8
  // --stores redis` keeps the earlier W8 on SQLite and PostgreSQL, and a step of several stores goes if one of them runs).
  const measuredAgain = (r) => workloads.includes(r.workload) && r.store.split(',').some((store) => stores.includes(store));
  const runs = earlier.runs.filter((r) => !measuredAgain(r)).map((r) => ({ ...r, from: r.from ?? own }));
  const merged = [...new Map(runs.map((r) => [r.from.startedAt, r.from])).values()].map((from) => {
    const note = from.startedAt === earlier.startedAt ? earlier.note : earlier.merged?.find((m) => m.startedAt === from.startedAt)?.note;
    const gave = WORKLOADS.filter((w) => runs.some((r) => r.workload === w && r.from.startedAt === from.startedAt));
    return { ...from, workloads: gave, ...(note === undefined ? {} : { note }) };
  });
  const keptBaseline = earlier.baseline !== undefined && runs.some((r) => BASELINE_WORKLOADS.includes(r.workload));
  if (keptBaseline && baseline !== undefined && baseline.cli !== earlier.baseline.cli) {
    throw new Error(`--merge: ${file}'s ${BASELINE_WORKLOADS.join(' and ')} ran beside another --baseline (${earlier.baseline.cli}); run them again in this run too`);
  }
  return {
    runs,
    merged,
    workloads: WORKLOADS.filter((w) => workloads.includes(w) || runs.some((r) => r.workload === w)),
    stores: STORES.filter((s) => stores.includes(s) || earlier.stores.includes(s)),
    baseline: baseline ?? (keptBaseline ? earlier.baseline : undefined),
  };
}
