import { describe, expect, it } from 'vitest';
import { formatAudit } from '../src/demo/ledger-audit.js';
import { runDemo } from '../src/demo/run-demo.js';

// The demo runs the built gateway, worker and retryd (`npm run build` first), as `node run.mjs` does, on a PostgreSQL
// of its own.
describe('the payments demo, small', () => {
  it('survives 2 crashes of the worker, 2 of retryd and 1 of PostgreSQL over 200 payments: no double charge, none lost, all final', async () => {
    const lines: string[] = [];
    const result = await runDemo({ payments: 200, workerCrashes: 2, serviceCrashes: 2, postgresCrashes: 1, seed: 7, settleTimeoutMs: 90_000, log: (line) => lines.push(line) });
    const { report } = result;
    // What the run said (crashes, a process that stopped on its own and was restarted), beside the audit, if it fails.
    expect(report.ok, [...lines, ...formatAudit(report)].join('\n')).toBe(true);
    expect(result).toMatchObject({ workerCrashes: 2, serviceCrashes: 2, postgresCrashes: 1 });
    expect(report.done + report.dead).toBe(200);
    // The run exercised every path: declines, exhaustion in retryd, hand-offs settled by callback, and duplicates
    // absorbed by the key.
    expect(Object.keys(report.deadByReason)).toEqual(expect.arrayContaining(['declined: card_declined', 'exhausted: max_attempts']));
    expect(report.handedToRetryd).toBeGreaterThan(0);
    expect(report.duplicatesAbsorbed).toBeGreaterThan(0);
  }, 120_000);
});
