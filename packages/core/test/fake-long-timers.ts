import { afterEach, beforeEach, vi } from 'vitest';

/**
 * A delay past 2^31 − 1 ms (24.8 days): `setTimeout` alone runs it after 1 ms. vitest's fake timers do the same as
 * Node and browsers there, so a test on them catches a timer that is not chained, with no real waiting.
 */
export const LONG_DELAY_MS = 3e9;

/** Fake timers (and `performance.now`, which the system clock reads) for each test of the calling file. */
export function useFakeTimersInEachTest(): void {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());
}
