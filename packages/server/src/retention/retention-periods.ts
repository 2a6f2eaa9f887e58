import { TaskStatus } from '@retryd/core';
import type { FieldError } from '../domain/errors.js';

/**
 * How long a finished task is kept, by how it ended, in ms: then it is deleted with its attempt log and its body, and
 * its idempotency key is free again (the same key enqueued later makes a new task).
 */
export interface RetentionPeriods {
  /** SUCCEEDED tasks. */
  succeededMs: number;
  /** Dead letters: FAILED and EXHAUSTED tasks (replayable until then). */
  deadLettersMs: number;
  /** CANCELLED tasks. */
  cancelledMs: number;
}

/** A tenant's or a policy's own retention: each period it sets replaces the one it would inherit. */
export type RetentionOverride = Partial<RetentionPeriods>;

const DAY_MS = 86_400_000;

/**
 * The service's retention unless `retryd serve` is told otherwise: a week for what succeeded or was cancelled (long
 * enough for a caller's own retries of an enqueue to find the task, and for a look at what happened), a month for dead
 * letters (long enough to be noticed, mended and replayed).
 */
export const DEFAULT_RETENTION: Readonly<RetentionPeriods> = Object.freeze({
  succeededMs: 7 * DAY_MS,
  deadLettersMs: 30 * DAY_MS,
  cancelledMs: 7 * DAY_MS,
});

/** The shortest period: a minute (a task must outlive the enqueue's own retries of it). */
export const MIN_RETENTION_MS = 60_000;
/** The longest period: ten years, as a policy's longest delay. */
export const MAX_RETENTION_MS = 10 * 365 * DAY_MS;

/** The fields of {@link RetentionPeriods}, in the order they are shown. */
export const RETENTION_FIELDS = ['succeededMs', 'deadLettersMs', 'cancelledMs'] as const;

/** The rule every period follows, in words. */
export const RETENTION_RULE = `an integer number of ms from ${MIN_RETENTION_MS} (a minute) to ${MAX_RETENTION_MS} (ten years)`;

const isPeriod = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= MIN_RETENTION_MS && (v as number) <= MAX_RETENTION_MS;

/**
 * Checks a retention override as the API and the command line take it: an object with any of `succeededMs`,
 * `deadLettersMs` and `cancelledMs`, each {@link RETENTION_RULE}, and nothing else. `path`, when given, prefixes the
 * field names of the errors (`retention.succeededMs`).
 */
export function checkRetentionOverride(input: unknown, path = ''): { ok: true; override: RetentionOverride } | { ok: false; errors: FieldError[] } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    const field = path || 'body';
    return { ok: false, errors: [{ field, rule: 'an object', message: `${field} must be an object of ${RETENTION_FIELDS.join(', ')}` }] };
  }
  const errors: FieldError[] = [];
  const override: RetentionOverride = {};
  for (const [key, value] of Object.entries(input)) {
    const field = path ? `${path}.${key}` : key;
    if (!(RETENTION_FIELDS as readonly string[]).includes(key)) {
      errors.push({ field, rule: `one of ${RETENTION_FIELDS.join(', ')}`, message: `${field} is not a retention period (known: ${RETENTION_FIELDS.join(', ')})` });
    } else if (!isPeriod(value)) {
      errors.push({ field, rule: RETENTION_RULE, message: `${field} must be ${RETENTION_RULE}, got ${JSON.stringify(value)}` });
    } else {
      override[key as keyof RetentionPeriods] = value;
    }
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, override };
}

/** `base` with each period an override sets replaced, the later overrides winning. */
export function mergeRetention(base: Readonly<RetentionPeriods>, ...overrides: (RetentionOverride | undefined)[]): RetentionPeriods {
  const merged = { ...base };
  for (const override of overrides) {
    if (override === undefined) continue;
    for (const field of RETENTION_FIELDS) {
      const value = override[field];
      if (value !== undefined) merged[field] = value;
    }
  }
  return merged;
}

/**
 * When a task that reaches `status` at `now` is deleted: `now` plus its period, or null for a status that is not final
 * (a live task is never deleted).
 */
export function expiresAtOf(status: TaskStatus, now: number, periods: Readonly<RetentionPeriods>): number | null {
  switch (status) {
    case TaskStatus.SUCCEEDED:
      return now + periods.succeededMs;
    case TaskStatus.FAILED:
    case TaskStatus.EXHAUSTED:
      return now + periods.deadLettersMs;
    case TaskStatus.CANCELLED:
      return now + periods.cancelledMs;
    default:
      return null;
  }
}

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: DAY_MS };

/**
 * Parses a period as the command line gives it: a whole number of ms, or of `s`, `m`, `h` or `d` (`90s`, `12h`,
 * `30d`); undefined when it is neither. The caller checks it against {@link RETENTION_RULE}.
 *
 * @example
 * ```ts
 * parseDurationText('7d'); // 604800000
 * parseDurationText('60000'); // 60000
 * ```
 */
export function parseDurationText(text: string): number | undefined {
  const match = /^\s*(\d+)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (match === null) return undefined;
  const n = Number(match[1]) * (UNITS[match[2] ?? 'ms'] as number);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A period in words for people: `7 d`, `12 h`, `90 s`, or ms when it is none of those whole. */
export function durationText(ms: number): string {
  for (const [unit, size] of [
    ['d', DAY_MS],
    ['h', 3_600_000],
    ['min', 60_000],
    ['s', 1_000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
  }
  return `${ms} ms`;
}
