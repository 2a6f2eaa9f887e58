/**
 * Test helpers for code that uses `@retryd/core`: run retries on a manual clock with a seeded random
 * and assert exact delays.
 * @packageDocumentation
 */
export { ManualClock } from './manual-clock.js';
export { seededRandom, sequenceRandom } from './seeded-random.js';
