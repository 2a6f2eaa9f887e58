import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeResults } from '../chaos/results-table.js';
import { runScenario, type ScenarioResult } from '../chaos/scenario.js';
import { SCENARIOS } from '../chaos/scenarios/index.js';

/**
 * The chaos suite (packages/server/chaos/): every scenario runs the built service as child processes against real
 * stores and loopback downstreams, and ends with the audit. Inside `npm test` each runs small; `npm run chaos` sets
 * RETRYD_CHAOS_TASKS higher and RETRYD_CHAOS_WRITE=1, which writes the results table into docs/reliability.md.
 */
const TASKS = Number(process.env['RETRYD_CHAOS_TASKS'] ?? 10);
const WRITE = process.env['RETRYD_CHAOS_WRITE'] === '1';
const results: ScenarioResult[] = [];

afterAll(async () => {
  if (WRITE && results.length > 0) await writeResults(join(import.meta.dirname, '..', '..', '..', 'docs', 'reliability.md'), results);
});

describe('chaos', () => {
  it.each(SCENARIOS.map((scenario) => [scenario.id, scenario] as const))('%s', async (_id, scenario) => {
    const result = await runScenario(scenario, TASKS);
    results.push(result);
    console.info(`${scenario.id}: ${result.passed ? 'pass' : 'FAIL'} in ${result.durationMs} ms: ${result.notes}`);
    expect({ failed: result.failed, problems: result.audit.problems }).toEqual({ failed: [], problems: [] });
  }, 120_000);
});
