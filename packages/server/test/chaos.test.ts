import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeResults } from '../chaos/results-table.js';
import { runScenario, type ScenarioResult } from '../chaos/scenario.js';
import { SCENARIOS } from '../chaos/scenarios/index.js';

/**
 * The chaos suite (packages/server/chaos/): every scenario runs the built service as child processes against real
 * stores and loopback downstreams, and ends with the audit. Inside `npm test` each runs small, on SQLite where a
 * scenario concerns every store; `npm run chaos` runs more tasks on every store and writes the results table into
 * docs/reliability.md (RETRYD_CHAOS_TASKS, RETRYD_CHAOS_STORES, RETRYD_CHAOS_WRITE=1, RETRYD_CHAOS_PARALLEL).
 */
const TASKS = Number(process.env['RETRYD_CHAOS_TASKS'] ?? 10);
const WRITE = process.env['RETRYD_CHAOS_WRITE'] === '1';
// Scenarios spend most of their time waiting (leases lapsing, timeouts, restarts), and each has its own store,
// downstream and ports, so a few at once share the two cores without disturbing each other.
const PARALLEL = Number(process.env['RETRYD_CHAOS_PARALLEL'] ?? 3);
const results: ScenarioResult[] = [];

let running = 0;
const waiting: (() => void)[] = [];
async function slot<T>(fn: () => Promise<T>): Promise<T> {
  while (running >= PARALLEL) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await fn();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

afterAll(async () => {
  if (!WRITE || results.length === 0) return;
  const order = SCENARIOS.map((scenario) => scenario.id);
  results.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
  await writeResults(join(import.meta.dirname, '..', '..', '..', 'docs', 'reliability.md'), results);
});

describe.concurrent('chaos', () => {
  it.each(SCENARIOS.map((scenario) => [scenario.id, scenario] as const))('%s', async (_id, scenario) => {
    const result = await slot(() => runScenario(scenario, TASKS));
    results.push(result);
    console.info(`${scenario.id}: ${result.passed ? 'pass' : 'FAIL'} in ${result.durationMs} ms: ${result.notes}`);
    expect({ failed: result.failed, problems: result.audit.problems }).toEqual({ failed: [], problems: [] });
  }, 300_000);
});
