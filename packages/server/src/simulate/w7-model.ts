import { DEFAULT_SIMULATION_SEED } from './seeded-random.js';
import { AIM_TEXT, aimMet } from './w7-aims.js';
import { runW7Case, type W7Run } from './w7-run.js';
import { DEFAULT_W7_TASKS, W7_CASES, W7_DESIGNS, W7Design } from './w7-workload.js';

/** What {@link simulateW7} runs. */
export interface W7Options {
  /** Case ids (`W7_CASE_IDS`), in output order. Default all. */
  cases?: readonly string[];
  /** The designs beside `none`, which every case runs first as the reference. Default all of `W7_DESIGNS`. */
  designs?: readonly W7Design[];
  /** Tasks per case, all due at 0. Default {@link DEFAULT_W7_TASKS}. */
  tasks?: number;
  /** Seed of every draw. Default {@link DEFAULT_SIMULATION_SEED}. */
  seed?: number;
  /**
   * The most attempts the service sends a second, as its CPU would bound them (a busy or small machine sends a target
   * two or three times its capacity, not ten). Default no limit but the concurrency.
   */
  sendsPerSecond?: number;
}

/** One design in one case, beside none. */
export interface W7Result extends W7Run {
  /** timeMs ÷ none's; null for f (every run lasts its hour) or when none did not finish. */
  timeRatio: number | null;
  /** calls ÷ none's (null when none made none). */
  callsRatio: number | null;
  /**
   * Case g: goodLagP99Ms ÷ that of `none` with the bad target answering `200` at once like the good ones (its tasks
   * kept: due at 0 with the others, their first attempts take their turn whatever the target answers). Null for the
   * other cases.
   */
  goodLagRatio: number | null;
  /** The case's aim (WORKLOADS.md W7), in words. */
  aim: string;
  /** Whether this design met it beside none: null for none itself, and when it cannot be told. */
  met: boolean | null;
}

/**
 * W7 on a virtual clock (`runW7Case`): for each case, `tasks` tasks all due at 0, each retried with the W7 policy
 * through core's `planRetry`, dispatched by a service with `W7_CONCURRENCY` attempts in flight (e: the service's default,
 * `W7_SERVICE_CONCURRENCY`), earliest due first, to one target (g: ten) protected by each design; every message takes
 * `|Normal(10, 2)|` ms. `none` runs first in every case as the reference of the ratios and aims; g also runs `none` with
 * its bad target answering at once, the reference of its lag. Pure and seeded: each (case, design) draws from streams
 * derived from the seed, the case and its place in `W7_DESIGNS`, so a row does not depend on which other rows are run.
 *
 * @example
 * ```ts
 * simulateW7({ cases: ['a1'], designs: ['landed'] });
 * // [{ case: 'a1', design: 'none', callsPerTask: 2, … }, { case: 'a1', design: 'landed', met: true, … }]
 * ```
 */
export function simulateW7(options: W7Options = {}): W7Result[] {
  const cases = (options.cases ?? W7_CASES.map((c) => c.id)).map((id) => {
    const found = W7_CASES.find((c) => c.id === id);
    if (found === undefined) throw new RangeError(`unknown W7 case ${JSON.stringify(id)}`);
    return found;
  });
  const designs = [W7Design.NONE, ...(options.designs ?? W7_DESIGNS).filter((d) => d !== W7Design.NONE)];
  const tasks = options.tasks ?? DEFAULT_W7_TASKS;
  const seed = options.seed ?? DEFAULT_SIMULATION_SEED;
  const results: W7Result[] = [];
  for (const spec of cases) {
    const sends = options.sendsPerSecond;
    const none = runW7Case(spec, W7Design.NONE, tasks, seed, false, sends);
    const alone = spec.goodTargets === undefined ? null : runW7Case(spec, W7Design.NONE, tasks, seed, true, sends).goodLagP99Ms;
    for (const design of designs) {
      const run = design === W7Design.NONE ? none : runW7Case(spec, design, tasks, seed, false, sends);
      const goodLagRatio = run.goodLagP99Ms === null || alone === null ? null : run.goodLagP99Ms / alone;
      results.push({
        ...run,
        timeRatio: spec.downstream.kind === 'dead' || !none.finished ? null : run.timeMs / none.timeMs,
        callsRatio: none.calls === 0 ? null : run.calls / none.calls,
        goodLagRatio,
        aim: AIM_TEXT[spec.aim],
        met: design === W7Design.NONE ? null : aimMet(spec.aim, { ...run, goodLagRatio }, { ...none, goodLagRatio: null }),
      });
    }
  }
  return results;
}
