import { Command } from 'commander';
import { storeOption, withStore } from './with-store.js';

/**
 * `retryd migrate`: brings the store's schema to this version's, as `retryd serve` does at start, and exits. For a
 * schema that applications write to before any service has run on it (the transactional enqueue of
 * `@retryd/server/pg` does not migrate), or as a deploy step ahead of the new services.
 */
export function migrateCommand(): Command {
  return new Command('migrate')
    .description("Bring the store's schema to this retryd version's (as retryd serve does at start) and exit")
    .addOption(storeOption())
    .action(async (flags: { store: string }) => {
      // Opening a store migrates it (every instance does, under the store's own lock): nothing more to do.
      await withStore(flags.store, async (store) => {
        const { redactUrl } = await import('../service/start-retryd.js');
        console.log(`retryd: the ${store.kind} store at ${redactUrl(flags.store)} is at this version's schema`);
      }, { create: true });
    });
}
