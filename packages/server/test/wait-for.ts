import { setTimeout as sleep } from 'node:timers/promises';

// The one way a test of any package (the client's and the examples' too) waits for something it cannot be told of by
// an event: poll a condition every few milliseconds against a deadline sized for a busy machine, and fail naming what
// never came. A slow run only waits longer; it fails only when the condition never holds.

/**
 * Polls `check` every `everyMs` (default 20 ms; more for a check that is costly to the service under test) until it
 * returns something other than `undefined` or `false`, and resolves to that value; throws
 * `timed out after <ms> ms waiting for <what>` once `timeoutMs` (default 30 s) has passed without it.
 *
 * @example
 * const task = await waitFor('the task to succeed', async () => {
 *   const found = await store.getTask(tenantId, taskId);
 *   return found?.status === 'SUCCEEDED' && found;
 * });
 */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
