/**
 * Circuit breaker: stop calling a failing target, probe it, and close again when it recovers.
 * State snapshots are plain JSON so a service can keep one breaker per target in its store.
 * @packageDocumentation
 */
export { CircuitBreaker } from './circuit-breaker.js';
export { CircuitState, type CircuitStateChange, type CircuitStateListener } from './breaker-state.js';
export { BrokenCircuitError } from './broken-circuit-error.js';
export { BreakerJitter, CIRCUIT_BREAKER_DEFAULTS, type CircuitBreakerOptions } from './breaker-options.js';
export type { CircuitBreakerSnapshot, BreakerWindowCounter } from './breaker-snapshot.js';
export type { WindowBucket, WindowSnapshot } from '../window/sliding-window.js';
export { InvalidSnapshotError } from '../validation/invalid-snapshot-error.js';
