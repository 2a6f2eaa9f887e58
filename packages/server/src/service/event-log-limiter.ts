/**
 * How long after a written line further lines of the same kind about the same subject are counted instead of
 * written, in ms: 60 s. A breaker whose probes keep failing re-opens every `openDurationMs` × 1.05ⁿ (from half a
 * second, see `DEFAULT_TARGET_SETTINGS`), so one down target wrote a `breaker_open` line every ~2.6 s (302 warnings in
 * 13 minutes in a new user's trial). Within a minute the line says nothing new; a minute is also the breaker's longest
 * open period (`maxOpenDurationMs`), so a target that stays down still writes a line about once a minute.
 */
export const PROTECTION_LOG_WINDOW_MS = 60_000;

/**
 * Most subjects an {@link EventLogLimiter} remembers (a few numbers each). Past it the least recently seen are
 * forgotten first; only more subjects than this with lines within one window can reach it.
 */
export const EVENT_LOG_LIMITER_MAX_SUBJECTS = 10_000;

/** Options of {@link EventLogLimiter}. Only `now` is required. */
export interface EventLogLimiterOptions {
  /** The clock, in ms (the service's `Clock.now`). */
  now: () => number;
  /** Default {@link PROTECTION_LOG_WINDOW_MS} (60 s). */
  windowMs?: number;
  /** Default {@link EVENT_LOG_LIMITER_MAX_SUBJECTS}. */
  maxSubjects?: number;
  /**
   * Kinds that end an episode (a breaker's `breaker_closed`): one is written whenever the subject's last written line
   * was of another kind, so a subject that settled never reads as if it had not (a breaker that flapped and closed
   * does not stay "opened" in the log). Within the window after one, further ones are counted as any kind is.
   * Default none.
   */
  endings?: readonly string[];
}

interface SubjectState {
  /** The kind of the subject's last written line. */
  lastKind: string;
  /** When a line of each kind was last written. */
  writtenAt: Map<string, number>;
  /** Lines about the subject not written since its last written one, every kind together. */
  suppressed: number;
  /** When the subject was last seen, written or not. */
  seenAt: number;
}

/**
 * Rate-limits log lines per subject (a tenant's target): the first line of a kind is written, further lines of that
 * kind within `windowMs` of it are counted instead, and the next line written about the subject says how many were
 * not. {@link EventLogLimiterOptions.endings} are written whenever they change what the log last said.
 *
 * Memory follows what is happening, not what happened: a subject seen in no line for a whole window is forgotten
 * (with its count of unwritten lines: the next line about it is written, without that count), and at most
 * `maxSubjects` are remembered. Each call costs a few map operations.
 *
 * It keeps no timer: nothing is written when a window ends, so after a flood the log may lag the state it describes
 * until the subject's next line (a breaker that opened again within the window after it closed reads closed until
 * it re-opens after the window); the current state is in the metrics and `GET /targets`.
 *
 * @example
 * ```ts
 * const limiter = new EventLogLimiter({ now: () => clock.now(), endings: ['breaker_closed'] });
 * const suppressed = limiter.admit(`${tenantId} ${target}`, 'breaker_open');
 * if (suppressed !== null) logger.warn({ event: 'breaker_open', target, ...(suppressed > 0 ? { suppressed } : {}) }, 'opened');
 * ```
 */
export class EventLogLimiter {
  readonly #now: () => number;
  readonly #windowMs: number;
  readonly #maxSubjects: number;
  readonly #endings: ReadonlySet<string>;
  /** In the order last seen, least recent first: what is forgotten first is at the front. */
  readonly #subjects = new Map<string, SubjectState>();

  constructor(options: EventLogLimiterOptions) {
    this.#now = options.now;
    this.#windowMs = options.windowMs ?? PROTECTION_LOG_WINDOW_MS;
    this.#maxSubjects = options.maxSubjects ?? EVENT_LOG_LIMITER_MAX_SUBJECTS;
    this.#endings = new Set(options.endings ?? []);
  }

  /**
   * Whether to write a line of `kind` about `subject` now: `null` when not (it is counted), else how many lines
   * about the subject were not written since its last written one (0 after none).
   */
  admit(subject: string, kind: string): number | null {
    const now = this.#now();
    this.#forget(now);
    const state = this.#subjects.get(subject);
    // Re-inserted on every sighting, so the Map's order is the order last seen.
    this.#subjects.delete(subject);
    if (state === undefined) {
      this.#subjects.set(subject, { lastKind: kind, writtenAt: new Map([[kind, now]]), suppressed: 0, seenAt: now });
      this.#trim();
      return 0;
    }
    state.seenAt = now;
    this.#subjects.set(subject, state);
    const writtenAt = state.writtenAt.get(kind);
    const ends = this.#endings.has(kind) && state.lastKind !== kind;
    if (!ends && writtenAt !== undefined && now - writtenAt < this.#windowMs) {
      state.suppressed++;
      return null;
    }
    const suppressed = state.suppressed;
    state.suppressed = 0;
    state.lastKind = kind;
    state.writtenAt.set(kind, now);
    return suppressed;
  }

  /** Subjects remembered now. */
  get size(): number {
    return this.#subjects.size;
  }

  /** Forgets the subjects seen in nothing for a whole window: from the front, stopping at the first seen since. */
  #forget(now: number): void {
    for (const [subject, state] of this.#subjects) {
      if (now - state.seenAt < this.#windowMs) return;
      this.#subjects.delete(subject);
    }
  }

  #trim(): void {
    for (const subject of this.#subjects.keys()) {
      if (this.#subjects.size <= this.#maxSubjects) return;
      this.#subjects.delete(subject);
    }
  }
}
