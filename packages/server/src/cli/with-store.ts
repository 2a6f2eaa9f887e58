import { Option } from 'commander';
import { RetrydError } from '../domain/errors.js';
import { DEFAULT_STORE_URL, openStore } from '../service/open-store.js';
import type { Store } from '../store/store.js';

/** The `--store` option of the operator commands: the same store `retryd serve` runs on. */
export function storeOption(): Option {
  return new Option('--store <url>', 'the store retryd serve runs on: sqlite:<file>, postgres://…, redis://… or redis+cluster://…').env('RETRYD_STORE').default(DEFAULT_STORE_URL);
}

/**
 * Opens the store, runs `work` on it, closes it. A `RetrydError` (a field that breaks its rule, no such key) is the
 * operator's to fix: told in one line on stderr, exit code 2.
 */
export async function withStore(url: string, work: (store: Store) => Promise<void>): Promise<void> {
  const { store, blobs } = await openStore(url);
  try {
    await work(store);
  } catch (error) {
    if (!(error instanceof RetrydError)) throw error;
    console.error(`retryd: ${error.detail}`);
    process.exitCode = 2;
  } finally {
    await store.close();
    await blobs.close?.();
  }
}
