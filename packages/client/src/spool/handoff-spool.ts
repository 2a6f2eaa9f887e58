import { DEFAULT_POLICY, assertValidPolicy, computeDelay, systemClock, type BackoffSchedule, type Random } from '@retryd/core';
import type { QueueClock } from '../queue/retry-queue-options.js';
import type { EnqueueRequest } from '../service/api-types.js';
import { positiveInteger } from '../shared/positive-integer.js';
import { SPOOL_MAX_BYTES, SPOOL_MAX_ENTRIES, SPOOL_RETRY, type HandoffSpoolOptions, type SpoolStats } from './handoff-spool-options.js';
import { refusedForGood } from './service-answer.js';
import type { DeadSpoolEntry, SpoolEntry } from './spool-entry.js';
import { SpoolFullError } from './spool-full-error.js';

const utf8 = new TextEncoder();

/**
 * Keeps the calls `handoffFetch` could not hand to the retryd service (it did not answer, or answered 408, 429 or a
 * 5xx) and forwards them when it answers again, so that a call is never lost to a retryd outage.
 *
 * - Durable: `spool` resolves once its {@link SpoolStorage} has the entry on disk (an fsynced journal in Node,
 *   IndexedDB in a browser); a spool opened on the same storage after a crash or a restart forwards what it held.
 * - Bounded: at most `maxEntries` entries and `maxBytes` bytes, waiting and set aside; past them `spool` throws
 *   {@link SpoolFullError} naming the limit, and the call is the caller's to report, never dropped silently.
 * - Forwarded in order (`seq`), one at a time, each with its own idempotency key, so that forwarding one twice (its
 *   answer lost) finds the task made the first time. Passes start when the spool opens, after each hand-off that
 *   reached the service, and on a backoff (`retry`, with jitter) while the service does not answer.
 * - An entry the service refuses for good (400, 409, 413, 415, 422) is set aside ({@link deadEntries}, `onRejected`)
 *   instead of blocking the ones behind it; any other refusal stops the pass and the entries wait.
 * - The same request spooled twice (the same idempotency key and request) is kept once.
 *
 * @example
 * ```ts
 * const spool = await HandoffSpool.open({ client, storage: fileSpoolStorage({ directory: '/var/lib/orders/retryd-spool' }) });
 * app.use(retrydExpress({ client, spool }).middleware);
 * ```
 */
export class HandoffSpool {
  readonly #live: SpoolEntry[] = [];
  readonly #dead: DeadSpoolEntry[] = [];
  readonly #retry: BackoffSchedule;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #clock: QueueClock;
  readonly #random: Random;
  #nextSeq = 1;
  /** Bytes of the live and dead entries, plus those being stored. */
  #heldBytes = 0;
  /** Entries being stored: counted against the limits so that spools racing one another cannot overfill it. */
  #reserved = 0;
  #failures = 0;
  #previousDelayMs = 0;
  #timer: unknown;
  #pass: Promise<void> | undefined;
  #closed = false;

  private constructor(private readonly options: HandoffSpoolOptions) {
    this.#retry = assertValidPolicy({ ...DEFAULT_POLICY, ...SPOOL_RETRY, ...options.retry });
    this.#maxEntries = positiveInteger(options.maxEntries ?? SPOOL_MAX_ENTRIES, 'maxEntries');
    this.#maxBytes = positiveInteger(options.maxBytes ?? SPOOL_MAX_BYTES, 'maxBytes');
    this.#clock = options.clock ?? (systemClock as QueueClock);
    this.#random = options.random ?? Math.random;
  }

  /**
   * A spool on `options.storage`, holding what it kept; a pass forwarding the waiting entries starts at once.
   * @throws InvalidPolicyError naming a `retry` field, RangeError naming `maxEntries` or `maxBytes`, or what the
   *   storage throws when it cannot be opened (a spool directory another process holds)
   */
  static async open(options: HandoffSpoolOptions): Promise<HandoffSpool> {
    const spool = new HandoffSpool(options);
    const { entries, dead } = await options.storage.load();
    for (const entry of entries) spool.#live.push(entry);
    for (const entry of dead) spool.#dead.push(entry);
    for (const entry of [...entries, ...dead]) {
      spool.#heldBytes += entry.bytes;
      spool.#nextSeq = Math.max(spool.#nextSeq, entry.seq + 1);
    }
    if (entries.length > 0) void spool.forward();
    return spool;
  }

  /** What waits and what was set aside, now. */
  get stats(): SpoolStats {
    let bytes = 0;
    let oldest = Infinity;
    for (const entry of this.#live) {
      bytes += entry.bytes;
      oldest = Math.min(oldest, entry.spooledAt);
    }
    return {
      entries: this.#live.length,
      bytes,
      oldestAgeMs: this.#live.length === 0 ? 0 : Math.max(0, this.#clock.now() - oldest),
      dead: this.#dead.length,
      deadBytes: this.#dead.reduce((sum, entry) => sum + entry.bytes, 0),
      waitingForRetryd: this.#failures > 0,
    };
  }

  /** Whether the last pass found retryd unavailable: `handoffFetch` then spools new calls without trying it first. */
  get waitingForRetryd(): boolean {
    return this.#failures > 0 && this.#live.length > 0;
  }

  /** The entries waiting, in the order they will be forwarded. */
  entries(): SpoolEntry[] {
    return [...this.#live];
  }

  /** The entries set aside, oldest first, each with the service's answer. */
  deadEntries(): DeadSpoolEntry[] {
    return [...this.#dead];
  }

  /**
   * Keeps `request` until the service takes it; resolves once it is stored. A pass forwarding it is due after the
   * backoff: the service has just failed to take it.
   * @param cause - why it could not be handed over now (the `cause` of a {@link SpoolFullError})
   * @throws SpoolFullError when it would take the spool past `maxEntries` or `maxBytes`; Error after `close()`
   */
  async spool(request: EnqueueRequest & { idempotencyKey: string }, cause?: unknown): Promise<SpoolEntry> {
    if (this.#closed) throw new Error('the spool is closed: open a new one on its storage');
    const text = JSON.stringify(request);
    const same = this.#live.find((entry) => entry.request.idempotencyKey === request.idempotencyKey && JSON.stringify(entry.request) === text);
    if (same !== undefined) return same;
    const bytes = utf8.encode(text).length;
    const heldEntries = this.#live.length + this.#dead.length + this.#reserved;
    if (heldEntries + 1 > this.#maxEntries) throw new SpoolFullError('maxEntries', this.#maxEntries, heldEntries, { cause, adding: 1 });
    if (this.#heldBytes + bytes > this.#maxBytes) throw new SpoolFullError('maxBytes', this.#maxBytes, this.#heldBytes, { cause, adding: bytes });
    const entry: SpoolEntry = { seq: this.#nextSeq++, request, spooledAt: this.#clock.now(), bytes };
    this.#reserved++;
    this.#heldBytes += bytes;
    try {
      await this.options.storage.append(entry);
    } catch (error) {
      this.#heldBytes -= bytes;
      throw error;
    } finally {
      this.#reserved--;
    }
    insertInOrder(this.#live, entry);
    report(this.options.onSpooled, entry);
    // The service has just failed to take this call: the next hand-offs skip it until a pass reaches it.
    if (this.#failures === 0) this.#failures = 1;
    this.#armTimer();
    return entry;
  }

  /**
   * Forwards the waiting entries now, in order, until none is left or the service fails to take one; resolves when
   * that pass ends (joining the pass under way, if any). Never rejects: failures go to `onError`, and a new pass is
   * set after the backoff.
   */
  forward(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#pass ??= this.#forwardAll().finally(() => {
      this.#pass = undefined;
      // After a failure, the retry; after a success, an entry spooled as the pass was ending, which it did not see.
      this.#armTimer();
    });
    return this.#pass;
  }

  /** Forgets an entry set aside (after it was dealt with by hand). Answers whether there was one with this `seq`. */
  async discardDead(seq: number): Promise<boolean> {
    const entry = this.#dead.find((dead) => dead.seq === seq);
    if (entry === undefined) return false;
    await this.options.storage.discardDead(seq);
    this.#dead.splice(this.#dead.indexOf(entry), 1);
    this.#heldBytes -= entry.bytes;
    return true;
  }

  /** Stops forwarding (the pass under way ends after its current entry) and releases the storage. What waits stays stored. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#clearTimer();
    await this.#pass;
    await this.options.storage.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #forwardAll(): Promise<void> {
    this.#clearTimer();
    for (let entry = this.#live[0]; entry !== undefined && !this.#closed; entry = this.#live[0]) {
      try {
        const answer = await this.options.client.enqueueTask(entry.request).catch(async (error: unknown) => {
          if (!refusedForGood(error)) throw error;
          await this.#setAside(entry!, error.status, error.code, error.detail);
          return undefined;
        });
        if (answer === undefined) continue;
        await this.options.storage.remove(entry.seq);
        this.#forget(entry);
        this.#failures = 0;
        this.#previousDelayMs = 0;
        report(this.options.onForwarded, entry, answer);
      } catch (error) {
        this.#failures++;
        report(this.options.onError, error);
        return;
      }
    }
  }

  async #setAside(entry: SpoolEntry, status: number, code: string, detail: string): Promise<void> {
    const dead: DeadSpoolEntry = { ...entry, deadAt: this.#clock.now(), status, code, detail };
    await this.options.storage.setAside(dead);
    this.#live.splice(this.#live.indexOf(entry), 1);
    this.#dead.push(dead);
    // The service answered: it is up, whatever it thought of this entry.
    this.#failures = 0;
    this.#previousDelayMs = 0;
    report(this.options.onRejected, dead);
  }

  #forget(entry: SpoolEntry): void {
    this.#live.splice(this.#live.indexOf(entry), 1);
    this.#heldBytes -= entry.bytes;
  }

  /**
   * Sets the next pass after the backoff of the failures so far, unless one is set. A pass under way when it fires is
   * joined rather than doubled.
   */
  #armTimer(): void {
    if (this.#closed || this.#timer !== undefined || this.#live.length === 0) return;
    const delay = computeDelay(this.#retry, Math.max(1, this.#failures), this.#previousDelayMs, this.#random);
    this.#previousDelayMs = delay;
    this.#timer = this.#clock.setTimer(delay, () => {
      this.#timer = undefined;
      void this.forward();
    });
  }

  #clearTimer(): void {
    if (this.#timer === undefined) return;
    this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }
}

/** Inserts in `seq` order: almost always at the end (an entry stored late behind one stored early is the exception). */
function insertInOrder(entries: SpoolEntry[], entry: SpoolEntry): void {
  let at = entries.length;
  while (at > 0 && (entries[at - 1] as SpoolEntry).seq > entry.seq) at--;
  entries.splice(at, 0, entry);
}

/** Calls a caller's callback; what it throws must not stop the spool. */
function report<A extends unknown[]>(callback: ((...args: A) => void) | undefined, ...args: A): void {
  try {
    callback?.(...args);
  } catch {
    // The callback's failure is the caller's; the spool goes on.
  }
}
