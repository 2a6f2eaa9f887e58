import { systemClock } from '@retryd/core';

// The service dates what it writes with systemClock (monotonic, anchored to the epoch once, when the process starts),
// floored to whole ms. Date.now() follows the host's wall clock, which NTP may step by tens of ms while a test runs:
// bounds read from it can then miss a time the service wrote a moment before. A test that runs the service in its own
// process reads the service's clock instead.

/** "Now" as the in-process service dates a task: whole epoch ms from `systemClock`. */
export const serviceNow = (): number => Math.floor(systemClock.now());
