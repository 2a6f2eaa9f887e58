import type { Logger } from 'pino';
import type { ProtectionEvent } from '../protection/protection-events.js';
import { EventLogLimiter, PROTECTION_LOG_WINDOW_MS } from './event-log-limiter.js';

/**
 * Writes one log line per protection event, with the fields an alert matches on: `breaker_open` and `retry_storm` at
 * warn, `breaker_closed`, `target_held` and `target_released` at info; `now` is the service's clock (ms).
 *
 * Breaker lines are rate-limited per tenant and target ({@link PROTECTION_LOG_WINDOW_MS}, 60 s): a breaker whose
 * probes keep failing re-opens every second or so. The first opening is written; further openings within the window
 * are counted, and the next line about that breaker carries `suppressed` (openings and closings not written since
 * the last line). A closing is written whenever the last line said the breaker opened, so a breaker that stopped
 * flapping closed reads closed; closings after that within the window are counted too (a breaker that flaps open and
 * closed writes an opening and a closing a minute).
 *
 * `target_held` lines are rate-limited the same way, on their own: every response whose `Retry-After` reaches past
 * the last one extends the hold and would write a line, one per attempt in flight, every time the hold ends.
 * `retry_storm` lines are not: the storm detector reports a storm once, at its first second, and a storm opens the
 * breaker, so storms do not follow one another as re-openings do.
 *
 * @example
 * ```ts
 * const protection = new TargetProtection({ store, onEvent: protectionEventLogger(logger, () => clock.now()) });
 * ```
 */
export function protectionEventLogger(logger: Logger, now: () => number): (event: ProtectionEvent) => void {
  // Only a closing ends an episode: a hold's end is not an event.
  const limiter = new EventLogLimiter({ now, windowMs: PROTECTION_LOG_WINDOW_MS, endings: ['breaker_closed'] });
  return (event) => {
    if (event.event === 'retry_storm') {
      logger.warn(event, `retry storm on ${event.target}`);
      return;
    }
    if (event.event === 'target_released') {
      // An operator's action: rare, and always written.
      logger.info(event, `holds of ${event.target} released by an operator`);
      return;
    }
    // One subject for a breaker's openings and closings, another for the target's holds: their counts are apart.
    const family = event.event === 'target_held' ? 'held' : 'breaker';
    const suppressed = limiter.admit(`${family} ${event.tenantId} ${event.target}`, event.event);
    if (suppressed === null) return;
    const fields = suppressed > 0 ? { ...event, suppressed } : event;
    const unlogged = suppressed > 0 ? `; ${suppressed} earlier ${family === 'held' ? 'holds' : 'changes'} not logged` : '';
    switch (event.event) {
      case 'breaker_open':
        logger.warn(fields, `circuit breaker of ${event.target} opened (${event.cause}${unlogged})`);
        break;
      case 'breaker_closed':
        logger.info(fields, `circuit breaker of ${event.target} closed (${event.cause}${unlogged})`);
        break;
      case 'target_held':
        logger.info(fields, `${event.target} held until ${new Date(event.until).toISOString()} by its Retry-After${unlogged}`);
        break;
    }
  };
}
