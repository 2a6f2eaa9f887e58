import type { BackoffSchedule, Random } from '@retryd/core';
import type { QueueClock } from '../queue/retry-queue-options.js';
import type { EnqueueAnswer } from '../service/api-types.js';
import type { RetrydClient } from '../service/retryd-client.js';
import type { DeadSpoolEntry, SpoolEntry, SpoolStorage } from './spool-entry.js';

/**
 * How a spool waits for retryd to answer again: from 1 s, doubling up to a minute, with full jitter (so that many
 * processes that lost the service together do not all come back at the same instant). Drawn by core's
 * `computeDelay`, as the service draws its tasks' delays.
 */
export const SPOOL_RETRY: Readonly<BackoffSchedule> = Object.freeze({
  backoffType: 'EXPONENTIAL',
  initialDelayMs: 1_000,
  multiplier: 2,
  maxDelayMs: 60_000,
  jitterType: 'FULL',
});

/** Entries a spool holds at most (waiting and set aside), by default: 10,000. */
export const SPOOL_MAX_ENTRIES = 10_000;

/** Bytes of entries a spool holds at most (waiting and set aside, their requests as JSON), by default: 16 MiB. */
export const SPOOL_MAX_BYTES = 16 * 1024 * 1024;

/** Options of {@link HandoffSpool.open}. */
export interface HandoffSpoolOptions {
  /** The client the entries are forwarded with (its own retries and timeout apply to each forward). */
  client: RetrydClient;
  /**
   * Where the entries are kept: `fileSpoolStorage({ directory })` from `@retryd/client/file-spool` in Node,
   * `indexedDbSpoolStorage()` from `@retryd/client/indexeddb` in a browser. One spool per storage.
   */
  storage: SpoolStorage;
  /** Entries held at most, waiting and set aside; beyond, `spool` throws `SpoolFullError`. Default {@link SPOOL_MAX_ENTRIES}. */
  maxEntries?: number;
  /** Bytes held at most (each entry's request as JSON, waiting and set aside). Default {@link SPOOL_MAX_BYTES}. */
  maxBytes?: number;
  /** The backoff between forwarding passes while retryd does not answer. Default {@link SPOOL_RETRY}. */
  retry?: Partial<BackoffSchedule>;
  /** A call was spooled (it is stored). */
  onSpooled?: (entry: SpoolEntry) => void;
  /** The service took an entry: `created`, or `replayed` when it already had the task (an earlier forward's answer was lost). */
  onForwarded?: (entry: SpoolEntry, answer: EnqueueAnswer) => void;
  /** The service refused an entry for good: it was set aside (see `deadEntries`). */
  onRejected?: (dead: DeadSpoolEntry) => void;
  /**
   * A forwarding pass stopped: retryd still does not answer, or refused in a way that would refuse every entry (a 401
   * for a revoked API key), or the storage failed. The entries wait for the next pass.
   */
  onError?: (error: unknown) => void;
  /** Time (default core's `systemClock`, whose `now` is epoch ms). */
  clock?: QueueClock;
  /** Randomness for the backoff's jitter (default `Math.random`). */
  random?: Random;
}

/** What a spool holds, for metrics: read {@link HandoffSpool.stats} as often as you scrape. */
export interface SpoolStats {
  /** Entries waiting to be forwarded. */
  entries: number;
  /** Their bytes. */
  bytes: number;
  /** How long the oldest waiting entry has waited, in ms; 0 when none waits. */
  oldestAgeMs: number;
  /** Entries set aside. */
  dead: number;
  /** Their bytes. */
  deadBytes: number;
  /** Whether the last forwarding pass found retryd unavailable (new hand-offs then go straight to the spool). */
  waitingForRetryd: boolean;
}
