import { createInterface } from 'node:readline/promises';
import { UsageError } from './api-command.js';

/** Asks a yes/no question on stderr, read from stdin (a terminal): true for `y` or `yes`. */
export async function confirm(question: string): Promise<boolean> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await prompt.question(question)).trim());
  } finally {
    prompt.close();
  }
}

/**
 * Whether a bulk change may go ahead: at once with `--yes`; otherwise asked on a terminal (`[y/N]`), and refused with a
 * usage error (exit 2) when stdin is not one, so a script never changes tasks without saying so.
 *
 * @param what - the change in words, e.g. `cancel every live task of policy nightly at http://127.0.0.1:8080`
 */
export async function confirmed(what: string, yes: boolean | undefined): Promise<boolean> {
  if (yes === true) return true;
  if (!process.stdin.isTTY) throw new UsageError(`this would ${what}: add --yes to confirm when stdin is not a terminal`);
  return confirm(`${what}? [y/N] `);
}
