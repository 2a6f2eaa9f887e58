import type { Clock } from '@retryd/core';
import type { FaultHook } from '../engine/fault-point.js';

/**
 * What a test harness may put into `retryd serve` before it starts: a skewed clock, a hook at the engine's fault
 * points. Only a test-only entry installs them (`dist/service/test-faults-entry.js`, loaded with `node --import`, which
 * the published package does not contain); nothing in the service reads the environment for them, so a
 * `RETRYD_FAULT_*` variable set in production does nothing.
 */
export interface ServiceTestHooks {
  /** The clock of the whole service instead of the system's. */
  readonly clock?: Clock;
  /** Called at each fault point of every attempt. */
  readonly faultHook?: FaultHook;
}

let installed: ServiceTestHooks = {};

/** Installs `hooks` for every {@link startRetryd} of this process from now on; the test-only entry calls it. */
export function installServiceTestHooks(hooks: ServiceTestHooks): void {
  installed = hooks;
}

/** The hooks installed, none (`{}`) unless a test-only entry installed some. */
export function serviceTestHooks(): ServiceTestHooks {
  return installed;
}
