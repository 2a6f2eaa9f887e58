import type { StormSettings } from './target-settings.js';
import type { EndedSecond } from './traffic-counters.js';

/** A retry storm as it is reported: the last second's retries and success ratio. */
export interface RetryStorm {
  retriesPerSecond: number;
  successRatio: number;
}

/**
 * Retry-storm detection for one target: a whole second whose retries rose to `riseFactor` times their baseline average,
 * numbered at least `minRetriesPerSecond`, while fewer than `maxSuccessRatio` of its calls succeeded. A storm is
 * reported once, at its first second; it ends with the first second that is not one (a quiet second included).
 * A second with no call ended in it is not judged: a storm needs evidence that the calls fail.
 */
export class StormDetector {
  private storming = false;

  /** Looks at a second that just ended; returns the storm when one begins with it, else null. */
  stormBeginningWith(settings: StormSettings, second: EndedSecond): RetryStorm | null {
    const { retries, calls, successes, baselineRetriesPerSecond } = second;
    const successRatio = calls === 0 ? 1 : successes / calls;
    const storm =
      retries > 0 &&
      calls > 0 &&
      retries >= settings.minRetriesPerSecond &&
      retries >= settings.riseFactor * baselineRetriesPerSecond &&
      successRatio < settings.maxSuccessRatio;
    const begins = storm && !this.storming;
    this.storming = storm;
    return begins ? { retriesPerSecond: retries, successRatio } : null;
  }
}
