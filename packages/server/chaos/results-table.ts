import { readFile, writeFile } from 'node:fs/promises';
import type { ScenarioResult } from './scenario.js';

/** The markers in `docs/reliability.md` between which the suite writes its table. */
export const RESULTS_START = '<!-- chaos-results:start -->';
export const RESULTS_END = '<!-- chaos-results:end -->';

/** The results as a Markdown table, with the date and the size of the run. */
export function resultsTable(results: readonly ScenarioResult[], ranAt: Date): string {
  const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const rows = results.map((r) =>
    [
      `\`${r.id}\``,
      r.store,
      cell(r.fault),
      r.passed ? 'pass' : '**FAIL**',
      `${r.audit.succeeded}/${r.audit.acknowledged} succeeded, ${r.audit.dead} dead; ${r.audit.attempts} attempts, ${r.audit.requests} requests`,
      cell([...r.failed, ...r.audit.problems.slice(0, 3), r.notes].join('; ')),
      `${(r.durationMs / 1000).toFixed(1)} s`,
    ].join(' | '),
  );
  return [
    `Last run: ${ranAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${results.filter((r) => r.passed).length} of ${results.length} passed, ` +
      `${Math.max(...results.map((r) => r.tasks))} tasks a scenario (the audit column counts every task a scenario enqueued), on a shared 2-core machine.`,
    '',
    '| scenario | store | fault | result | audit | what happened | time |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
}

/** Replaces what lies between the markers of `file` with the table of `results`. */
export async function writeResults(file: string, results: readonly ScenarioResult[], ranAt = new Date()): Promise<void> {
  const text = await readFile(file, 'utf8');
  const start = text.indexOf(RESULTS_START);
  const end = text.indexOf(RESULTS_END);
  if (start < 0 || end < start) throw new Error(`${file} has no ${RESULTS_START} … ${RESULTS_END} markers`);
  const table = resultsTable(results, ranAt);
  await writeFile(file, `${text.slice(0, start + RESULTS_START.length)}\n${table}\n${text.slice(end)}`);
}
