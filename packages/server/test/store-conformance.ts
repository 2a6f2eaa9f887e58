import { afterEach, beforeEach, describe } from 'vitest';
import type { Store } from '../src/store/store.js';
import { accessCases } from './store-conformance/access-cases.js';
import { completionCases } from './store-conformance/completion-cases.js';
import { listingCases } from './store-conformance/listing-cases.js';
import { oldestPendingCases } from './store-conformance/oldest-pending-cases.js';
import { policyAndStateCases } from './store-conformance/policy-state-cases.js';
import { schedulingCases } from './store-conformance/scheduling-cases.js';
import { sealingCases } from './store-conformance/sealing-cases.js';
import { taskCases } from './store-conformance/task-cases.js';
import { limitCases } from './store-conformance/limit-cases.js';
import { targetCases } from './store-conformance/target-cases.js';
import { claimRoomCases } from './store-conformance/claim-room-cases.js';
import { transitionCases } from './store-conformance/transition-cases.js';
import { rescheduleCases } from './store-conformance/reschedule-cases.js';
import { retentionCases } from './store-conformance/retention-cases.js';
import { deletionCases } from './store-conformance/deletion-cases.js';
import { callbackCases } from './store-conformance/callback-cases.js';

/**
 * What a store configured to spread one tenant over several partitions (Redis sub-partitions) documents as
 * looser than the contract, each case it leaves out named in its own rule: the rest of the suite runs unchanged.
 */
export interface ConformanceLeeway {
  /** A target's rate and in-flight limits are shared out over partitions, not exact (`docs/stores.md`). */
  sharedTargetLimits?: boolean;
  /** A batch of completions is atomic per partition, not as a whole. */
  completionsAtomicPerPartition?: boolean;
}

/**
 * The one behavioural contract of the `Store` port, run unchanged against every store on a real backend
 * (SQLite file, PostgreSQL, Redis).
 *
 * `makeStore` must return a new, empty store of its own (a fresh file, schema or key prefix) that is not yet
 * initialised: the suite calls `init()` before each test and `close()` after it. Every time is an argument
 * (`T0` and offsets from `fixtures/tasks.ts`), so no case sleeps or reads a clock.
 *
 * @example
 * ```ts
 * describeStoreConformance('sqlite', async () => new SqliteStore(freshPath()));
 * ```
 */
export function describeStoreConformance(name: string, makeStore: () => Promise<Store>, leeway: ConformanceLeeway = {}): void {
  describe(`Store conformance: ${name}`, () => {
    let current: Store | undefined;
    const store = (): Store => {
      if (current === undefined) throw new Error('The store is only available inside a test.');
      return current;
    };

    beforeEach(async () => {
      current = await makeStore();
      await current.init();
    });
    afterEach(async () => {
      await current?.close();
      current = undefined;
    });

    describe('tasks', () => taskCases(store));
    describe('listing', () => listingCases(store));
    describe('claims and leases', () => schedulingCases(store));
    describe('completions and the attempt log', () => completionCases(store, leeway));
    describe('named transitions', () => transitionCases(store));
    describe('reschedule: run now, or at another time', () => rescheduleCases(store));
    describe('retention: expiresAt and the purge', () => retentionCases(store));
    describe('deleting finished tasks by hand', () => deletionCases(store));
    describe('callbacks owed when a task ends', () => callbackCases(store));
    describe('targets: fair claims and the gate', () => targetCases(store));
    describe("claims within the claimer's rooms per tenant and target", () => claimRoomCases(store));
    describe('targets: limits, holds and what operators see', () => limitCases(store, leeway));
    describe('policies, target state and counts', () => policyAndStateCases(store));
    describe('the oldest PENDING task of each target', () => oldestPendingCases(store));
    describe('access: API keys and tenant limits', () => accessCases(store));
    describe('sealed secrets: the walk and the re-seal', () => sealingCases(store));
  });
}
