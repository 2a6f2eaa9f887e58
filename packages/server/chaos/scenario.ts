import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditReport } from './audit.js';

/** What a scenario is given: its size, a place for files, and a list of clean-ups run when it ends. */
export interface ChaosContext {
  /** Tasks to enqueue (small inside `npm test`, larger for `npm run chaos`). */
  tasks: number;
  /** Runs `fn` when the scenario ends, last registered first, whether it passed or not. */
  defer(fn: () => Promise<unknown> | unknown): void;
  /** A new temporary directory, removed at the end. */
  tempDir(): Promise<string>;
}

/** What a scenario found: the audit, the failed checks of its own, and its figures in one line. */
export interface ScenarioOutcome {
  audit: AuditReport;
  /** Sentences of the scenario's own checks that failed (the audit's are in `audit.problems`). */
  failed: string[];
  /** What happened, in figures: for the results table. */
  notes: string;
}

/** One fault, run against the real service. */
export interface Scenario {
  /** Stable id (`kill-after-claim`), the name of its test and its row. */
  id: string;
  /** The store(s) it runs on. */
  store: string;
  /** The fault, in words, for the results table. */
  fault: string;
  run(ctx: ChaosContext): Promise<ScenarioOutcome>;
}

/** A scenario's run, as the table shows it. */
export interface ScenarioResult extends ScenarioOutcome {
  id: string;
  store: string;
  fault: string;
  tasks: number;
  durationMs: number;
  passed: boolean;
}

/** Collects the failed checks of a scenario: `check(condition, sentence)`. */
export function checks(): { failed: string[]; check: (ok: boolean, sentence: string) => void } {
  const failed: string[] = [];
  return { failed, check: (ok, sentence) => void (ok || failed.push(sentence)) };
}

/** Runs `scenario` with `tasks` tasks and every clean-up it registered. */
export async function runScenario(scenario: Scenario, tasks: number): Promise<ScenarioResult> {
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  const ctx: ChaosContext = {
    tasks,
    defer: (fn) => void cleanups.push(fn),
    tempDir: async () => {
      const dir = await mkdtemp(join(tmpdir(), `retryd-chaos-${scenario.id.replaceAll('/', '-')}-`));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      return dir;
    },
  };
  const started = Date.now();
  try {
    const outcome = await scenario.run(ctx);
    const passed = outcome.failed.length === 0 && outcome.audit.problems.length === 0;
    return { ...outcome, id: scenario.id, store: scenario.store, fault: scenario.fault, tasks, durationMs: Date.now() - started, passed };
  } finally {
    for (const fn of cleanups.reverse()) await fn();
  }
}
