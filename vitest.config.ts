import { configDefaults, defineConfig } from 'vitest/config';

// Three tiers of tests, each a vitest project (`npm run test:unit`, `test:stores`, `test:service`; `npm test` runs all):
//
// - unit: no servers and no child processes. The service's own HTTP on loopback and SQLite in memory or in a temporary
//   file are fine. Run it while working (a file in seconds, the tier in minutes).
// - stores: the store conformance suite and every test of a store on a real server (PostgreSQL, Redis, Redis Cluster, an
//   S3 stand-in) or of SQLite's own files, queries and migrations.
// - service: the built CLI (`npm run build` first), the chaos runs, the browser, the packed packages, anything else
//   that starts a process.
//
// A test file is in unit unless it is listed below; packages/server/test/test-tiers.test.ts fails when a file of the
// unit tier reaches a store harness or a child process (through any of its imports), naming the list it belongs in.

/** Every test file of the repository. */
export const ALL_TESTS = ['packages/*/test/**/*.test.ts', 'packages/*/src/**/*.test.ts', 'examples/*/test/**/*.test.ts'];

/** The stores tier: tests on a store's own server or files. */
export const STORE_TESTS = [
  'packages/server/test/api-reschedule.test.ts',
  'packages/server/test/api-targets.test.ts',
  'packages/server/test/file-blob-store.test.ts',
  'packages/server/test/postgres-access.test.ts',
  'packages/server/test/postgres-array-literal.test.ts',
  'packages/server/test/postgres-blob-store.test.ts',
  'packages/server/test/postgres-insert-records.test.ts',
  'packages/server/test/postgres-instances.test.ts',
  'packages/server/test/postgres-migration.test.ts',
  'packages/server/test/postgres-outage.test.ts',
  'packages/server/test/postgres-store.test.ts',
  'packages/server/test/postgres-target-limits.test.ts',
  'packages/server/test/postgres-target-queues.test.ts',
  'packages/server/test/protection-stores.test.ts',
  'packages/server/test/purger.test.ts',
  'packages/server/test/redis-access.test.ts',
  'packages/server/test/redis-blob-store.test.ts',
  'packages/server/test/redis-cluster.test.ts',
  'packages/server/test/redis-layout-migration.test.ts',
  'packages/server/test/redis-outage.test.ts',
  'packages/server/test/redis-retention.test.ts',
  'packages/server/test/redis-store.test.ts',
  'packages/server/test/redis-sub-partition-migration.test.ts',
  'packages/server/test/redis-target-gate.test.ts',
  'packages/server/test/redis-target-queues.test.ts',
  'packages/server/test/reschedule-wakes.test.ts',
  'packages/server/test/s3-blob-store.test.ts',
  'packages/server/test/s3-blobs-service.test.ts',
  'packages/server/test/shared-breaker-refresh.test.ts',
  'packages/server/test/sqlite-migration.test.ts',
  'packages/server/test/sqlite-query-plans.test.ts',
  'packages/server/test/sqlite-retention.test.ts',
  'packages/server/test/sqlite-store.test.ts',
  'packages/server/test/sqlite-target-limits.test.ts',
  'packages/server/test/sqlite-target-queues.test.ts',
  'packages/server/test/sqlite-wal-checkpointer.test.ts',
  'packages/server/test/sqlite-wal-flush.test.ts',
  'packages/server/test/task-callbacks.test.ts',
];

/** The service tier: tests that start processes (the built CLI, Chromium, npm, PostgreSQL of their own). */
export const SERVICE_TESTS = [
  'examples/payments/test/payment-store.test.ts',
  'examples/payments/test/payments-demo.test.ts',
  'examples/payments/test/settlement.test.ts',
  'packages/client/test/browser.test.ts',
  'packages/client/test/entry-points.test.ts',
  'packages/client/test/file-spool.test.ts',
  'packages/client/test/handoff-spool.test.ts',
  'packages/client/test/readme-inprocess-examples.test.ts',
  'packages/client/test/readme-service-examples.test.ts',
  'packages/core/test/package.test.ts',
  'packages/server/test/api-compression.test.ts',
  'packages/server/test/api-docs-headers.test.ts',
  'packages/server/test/bench-report.test.ts',
  'packages/server/test/bench-scarce.test.ts',
  'packages/server/test/bootstrap-admin-key.test.ts',
  'packages/server/test/chaos.test.ts',
  'packages/server/test/cli-api.test.ts',
  'packages/server/test/cli-command-index.test.ts',
  'packages/server/test/cli-demo.test.ts',
  'packages/server/test/cli-store-presence.test.ts',
  'packages/server/test/cli-timeouts.test.ts',
  'packages/server/test/cli.test.ts',
  'packages/server/test/console.test.ts',
  'packages/server/test/crash-recovery.test.ts',
  'packages/server/test/deploy-image.test.ts',
  'packages/server/test/grpc-targets.test.ts',
  'packages/server/test/http-dispatcher-timeouts.test.ts',
  'packages/server/test/keys-rotate-encryption.test.ts',
  'packages/server/test/many-instances.test.ts',
  'packages/server/test/metrics-port.test.ts',
  'packages/server/test/openapi-document.test.ts',
  'packages/server/test/package-pack.test.ts',
  'packages/server/test/pg-enqueue.test.ts',
  'packages/server/test/protection-crash.test.ts',
  'packages/server/test/protection-service.test.ts',
  'packages/server/test/redis-cluster-sub-partitions.test.ts',
  'packages/server/test/redis-durability-warning.test.ts',
  'packages/server/test/redis-sub-partitions.test.ts',
  'packages/server/test/secrets-at-rest.test.ts',
  'packages/server/test/service-access.test.ts',
  'packages/server/test/simulate-capacity.test.ts',
  'packages/server/test/simulate-cli.test.ts',
  'packages/server/test/store-outage.test.ts',
  'packages/server/test/test-switches-service.test.ts',
  'packages/server/test/timeouts-service.test.ts',
  'packages/server/test/tracing.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: keep integration suites (real servers, real databases) from starving each other.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: ALL_TESTS, exclude: [...configDefaults.exclude, ...STORE_TESTS, ...SERVICE_TESTS] } },
      { extends: true, test: { name: 'stores', include: STORE_TESTS } },
      { extends: true, test: { name: 'service', include: SERVICE_TESTS } },
    ],
  },
});
