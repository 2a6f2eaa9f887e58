import { Option } from 'commander';
import { RetrydError } from '../domain/errors.js';
import { DEFAULT_STORE_URL } from '../store/default-store-url.js';
import type { Store } from '../store/store.js';

/** The `--store` option of the operator commands: the same store `retryd serve` runs on. */
export function storeOption(): Option {
  return new Option('--store <url>', 'the store retryd serve runs on: sqlite:<file>, postgres://…, redis://… or redis+cluster://…').env('RETRYD_STORE').default(DEFAULT_STORE_URL);
}

/** Options of {@link withStore}. */
export interface WithStoreOptions {
  /**
   * Create the store when it holds no retryd data yet (`migrate`). Default false: a command that works on a store's
   * data refuses one that is not there, so that a mistyped `--store` is told instead of made, empty.
   */
  create?: boolean;
}

/**
 * Opens the store, runs `work` on it, closes it. A `RetrydError` (a field that breaks its rule, no such key) is the
 * operator's to fix: told in one line on stderr, exit code 2; so is a store that does not exist, unless `create`.
 */
export async function withStore(url: string, work: (store: Store) => Promise<void>, options: WithStoreOptions = {}): Promise<void> {
  if (options.create !== true && !(await storeIsThere(url))) return;
  // The store drivers are loaded when a command runs, not for its --help.
  const { openStore } = await import('../service/open-store.js');
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

/**
 * Whether the store holds retryd's data; when not, says so in one line on stderr (exit code 2), naming what is missing
 * and how to make it on purpose.
 */
export async function storeIsThere(url: string): Promise<boolean> {
  const { missingStoreReason } = await import('./store-presence.js');
  const { redactUrl } = await import('../service/start-retryd.js');
  const missing = await missingStoreReason(url);
  if (missing === undefined) return true;
  console.error(`retryd: no retryd store at --store ${redactUrl(url)}: ${missing}. Check --store (or RETRYD_STORE); retryd migrate --store … or retryd serve creates one`);
  process.exitCode = 2;
  return false;
}
