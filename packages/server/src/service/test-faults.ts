import { writeSync } from 'node:fs';
import { systemClock, type Clock } from '@retryd/core';
import { FaultPoint, type FaultHook } from '../engine/fault-point.js';
import { ConfigError } from './retryd-config.js';

// Test-only switches of `retryd serve`, read from the environment by the chaos suite (packages/server/chaos/) through
// the test-only entry (test-faults-entry.ts). Neither is an option of the service: the published package has neither
// file, and without that entry nothing reads these variables.

const POINTS: readonly string[] = Object.values(FaultPoint);

/**
 * `RETRYD_FAULT_PAUSE_AT=after-claim|after-response`: at that point of the first attempt that reaches it, the process
 * writes `{"event":"fault_pause","point":…,"taskId":…}` on stdout and stops itself with SIGSTOP, so a test can
 * `kill -9` it exactly there (or SIGCONT it later). Undefined when unset.
 * @throws ConfigError naming the variable and its values when set to anything else
 */
export function faultHookFromEnv(env: NodeJS.ProcessEnv): FaultHook | undefined {
  const at = env['RETRYD_FAULT_PAUSE_AT'];
  if (at === undefined || at === '') return undefined;
  if (!POINTS.includes(at)) throw new ConfigError(`RETRYD_FAULT_PAUSE_AT must be one of ${POINTS.join(', ')}, got ${at}`);
  let paused = false;
  return (point, task) => {
    if (point !== at || paused) return;
    paused = true;
    // Synchronous: the line must be out before the process stops.
    writeSync(1, `${JSON.stringify({ event: 'fault_pause', point, taskId: task.taskId })}\n`);
    process.kill(process.pid, 'SIGSTOP');
  };
}

/**
 * `RETRYD_CLOCK_OFFSET_MS=<integer>`: this instance's clock runs that far ahead (or behind, negative) of the machine's,
 * as if its clock had jumped. Undefined when unset.
 * @throws ConfigError naming the variable and the rule when it is not an integer
 */
export function clockFromEnv(env: NodeJS.ProcessEnv): Clock | undefined {
  const raw = env['RETRYD_CLOCK_OFFSET_MS'];
  if (raw === undefined || raw === '') return undefined;
  const offset = Number(raw);
  if (!Number.isSafeInteger(offset)) throw new ConfigError(`RETRYD_CLOCK_OFFSET_MS must be an integer (ms), got ${raw}`);
  return { ...systemClock, now: () => systemClock.now() + offset };
}
