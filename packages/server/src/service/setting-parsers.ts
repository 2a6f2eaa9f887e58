import { durationText, MAX_RETENTION_MS, MIN_RETENTION_MS, parseDurationText } from '../retention/retention-periods.js';

/** A flag or variable with a value that breaks its rule; the message names both. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly code = 'INVALID_CONFIG';
}

/** Parses an integer option, naming the flag and the rule when it is wrong. */
export function parseIntegerOption(flag: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(`${flag} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return n;
}

/** Parses an option that takes one of a few words, naming the flag and the choices when it is wrong. */
export function parseChoiceOption<T extends string>(flag: string, value: string, choices: readonly T[]): T {
  if ((choices as readonly string[]).includes(value)) return value as T;
  throw new ConfigError(`${flag} must be one of ${choices.join(', ')}, got ${JSON.stringify(value)}`);
}

/** Parses a retention period (`7d`, `12h`, `90m`, `60s` or ms), naming the flag and the rule when it is wrong. */
export function parseRetentionOption(flag: string, value: string): number {
  return parsePeriodOption(flag, value, MIN_RETENTION_MS, MAX_RETENTION_MS);
}

/** Parses a period (`7d`, `12h`, `90m`, `60s`, `500ms` or plain ms) from `minMs` to `maxMs`, naming the flag and the rule when it is wrong. */
export function parsePeriodOption(flag: string, value: string, minMs: number, maxMs: number): number {
  const ms = parseDurationText(value);
  if (ms === undefined || ms < minMs || ms > maxMs) {
    throw new ConfigError(
      `${flag} must be a period from ${durationText(minMs)} to ${durationText(maxMs)} (a number with ms, s, m, h or d; plain ms), got ${JSON.stringify(value)}`,
    );
  }
  return ms;
}

/** Splits a comma-separated list, dropping blanks. */
export function parseListOption(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** Reads a setting's text for the flag it is given by (the flag names itself in every error). */
export type ParserOf<T> = (flag: string) => (value: string) => T;

/** A TCP port, 0 (a free one) to 65535. */
export const port: ParserOf<number> = (flag) => (value) => parseIntegerOption(flag, value, 0, 65535);
/** An integer from `min` to `max`. */
export const integer =
  (min: number, max?: number): ParserOf<number> =>
  (flag) =>
  (value) =>
    parseIntegerOption(flag, value, min, max);
/** A period (`7d`, `12h`, `90m`, `60s` or ms) from `minMs` to `maxMs`. */
export const period =
  (minMs: number, maxMs: number): ParserOf<number> =>
  (flag) =>
  (value) =>
    parsePeriodOption(flag, value, minMs, maxMs);
/** A retention period, a minute to ten years. */
export const retention: ParserOf<number> = (flag) => (value) => parseRetentionOption(flag, value);
/** One of `choices`, checked by retryd (a `ConfigError` naming the flag and the choices). */
export const oneOf =
  <T extends string>(choices: readonly T[]): ParserOf<T> =>
  (flag) =>
  (value) =>
    parseChoiceOption(flag, value, choices);
/** A comma-separated list, blanks dropped. */
export const list: ParserOf<string[]> = () => parseListOption;
