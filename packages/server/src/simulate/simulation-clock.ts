import type { Clock } from '@retryd/core';

/**
 * The {@link Clock} to inject into core's `CircuitBreaker` and `RetryBudget` inside a simulation: `now()` is the
 * simulation's virtual time (read from `time`, the event queue's clock), so their windows and open periods run on
 * it. They only read the time; waiting is done by scheduling an event, so `sleep` refuses.
 */
export function simulationClock(time: () => number): Clock {
  return {
    now: time,
    sleep: () => Promise.reject(new Error('a simulation clock does not sleep: schedule an event on the queue instead')),
  };
}
