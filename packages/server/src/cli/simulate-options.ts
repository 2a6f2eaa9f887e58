import { writeFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { ConfigError, parseIntegerOption, parseListOption } from '../service/retryd-config.js';
import { DEFAULT_SIMULATION_SEED } from '../simulate/seeded-random.js';

// The flags every `retryd simulate` model shares, and how their values are checked: one line naming the flag and the rule.

const MAX_SEED = 0xffff_ffff;

/** A parser for an integer flag from `min` to `max`. */
export const int = (flag: string, min: number, max?: number) => (value: string) => parseIntegerOption(flag, value, min, max);

/**
 * A parser for a number flag from `min` to `max` (decimals allowed).
 *
 * @throws ConfigError naming the flag and the rule, e.g. `--headroom must be a number from 0.01 to 1, got "2"`
 */
export const decimal = (flag: string, min: number, max: number) => (value: string) => {
  const n = /^\s*(?:\d+(?:\.\d*)?|\.\d+)(?:e\d+)?\s*$/i.test(value) ? Number(value) : Number.NaN;
  if (!(n >= min && n <= max)) throw new ConfigError(`${flag} must be a number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
};

/**
 * A parser for a comma-separated list of numbers from `min` to `max` (`1e6` allowed), in the order given, without repeats.
 *
 * @throws ConfigError naming the flag and the rule
 */
export const decimalList = (flag: string, min: number, max: number) => (value: string) => {
  const one = decimal(flag, min, max);
  try {
    return [...new Set(value.split(',').map((item) => one(item)))];
  } catch {
    throw new ConfigError(`${flag} must be comma-separated numbers from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
};

/**
 * The options every model ends with: `--seed <n>` (the seed of every random draw), `--json` (an array of result objects
 * instead of the tables) and `--svg <file>` (also write the chart).
 */
export function addRunOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--seed <n>', `seed of every random draw: the same seed gives the same figures (0 to ${MAX_SEED})`)
        .default(DEFAULT_SIMULATION_SEED)
        .argParser(int('--seed', 0, MAX_SEED)),
    )
    .addOption(new Option('--json', 'print the results as JSON (an array, one object per row) instead of tables'))
    .addOption(new Option('--svg <file>', 'also write the chart to this SVG file'));
}

/**
 * Parses a comma-separated list of names from `choices`, in the order given, without repeats.
 *
 * @throws ConfigError naming the flag and the rule, e.g. `--cases must be comma-separated names from a1, a2, got "x"`
 */
export function parseChoiceList<T extends string>(flag: string, value: string, choices: readonly T[]): T[] {
  const items = parseListOption(value);
  if (items.length === 0 || items.some((item) => !(choices as readonly string[]).includes(item))) {
    throw new ConfigError(`${flag} must be comma-separated names from ${choices.join(', ')}, got ${JSON.stringify(value)}`);
  }
  return [...new Set(items as T[])];
}

/** Writes a chart to `file`, or fails naming `--svg` and the reason. */
export function writeSvg(file: string, svg: string): void {
  try {
    writeFileSync(file, svg);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError(`--svg must name a file that can be written, got ${JSON.stringify(file)} (${reason})`);
  }
}
