import Database from 'better-sqlite3';
import type { TaskStatus } from '@retryd/core';
import { afterAll, describe, expect, it } from 'vitest';
import { TaskListing } from '../src/backends/sqlite/list-tasks.js';
import {
  FIRST_API_KEYS,
  FIRST_API_KEYS_OF_TENANT,
  GET_API_KEY,
  GET_TENANT_LIMITS,
  HAS_ACTIVE_API_KEY,
  LIST_API_KEYS,
  LIST_API_KEYS_OF_TENANT,
  REVOKE_API_KEY,
} from '../src/backends/sqlite/access-store.js';
import {
  ADD_QUEUE,
  BUCKET_OF,
  HOLD_TARGET,
  IN_FLIGHT_OF,
  LIMIT_TARGET,
  LOWER_HINT,
  LOWER_HINT_AND_FREE,
  QUEUE_ID,
  READY_QUEUES,
  READY_TIMES,
  REFRESH_HINT,
  SET_GATE,
} from '../src/backends/sqlite/queue-statements.js';
import { DELETE_ATTEMPTS, DELETE_TASK, SELECT_EXPIRED } from '../src/backends/sqlite/purge-expired.js';
import { RESEAL_TASK, WALK_SEALED_TASKS } from '../src/backends/sqlite/sealed-tasks.js';
import { LIVE_BY_AGE, NEXT_QUEUE_TENANT } from '../src/backends/sqlite/oldest-pending-reads.js';
import { COUNT_DUE, GET_QUEUE, IN_FLIGHT_QUEUES, LIST_QUEUES, LIST_QUEUES_AFTER, QUEUE_HEAD } from '../src/backends/sqlite/target-views.js';
import {
  CANCEL_TASK,
  CLAIM_ONE,
  COMPLETE_TO_LIVE,
  HAS_DUE,
  COUNT_BY_STATUS,
  COUNT_BY_STATUS_OF_TENANT,
  FIND_EXPIRED_LEASES,
  NEXT_LEASE_EXPIRY_AT,
  RELEASE_LEASE,
  REPLAY_TASK,
  REQUEST_CANCEL,
  RESCHEDULE_TASK,
  SELECT_DUE,
} from '../src/backends/sqlite/statements.js';
import { T0 } from './fixtures/tasks.js';
import { A, B, C, NO_SCAN, forTarget, freshPath, lease, opened, plan, removeTempDir } from './sqlite-harness.js';
import { insertStoredTasks } from './fixtures/stored-tasks.js';

/** The purge's walk: `tasks_expiry` in order, and for each task one seek of `callbacks_owed`'s primary key. */
const EXPIRED_PLAN = /^SEARCH tasks USING INDEX tasks_expiry \(expires_at<\?\)\nCORRELATED SCALAR SUBQUERY \d+\nSEARCH o USING PRIMARY KEY \(tenant_id=\? AND task_id=\?\)$/;

afterAll(removeTempDir);

describe('query plans', () => {
  async function planDatabase(populated: boolean): Promise<Database.Database> {
    const path = freshPath();
    const store = await opened(path);
    if (populated) {
      // Mostly finished tasks over a few targets, as in a long-lived store (most to be deleted in time, some kept for
      // good), then fresh statistics for the planner.
      const tasks = Array.from({ length: 3_000 }, (_, i) =>
        forTarget(
          [A, B, C][i % 3] as string,
          i % 10 === 0 ? { nextAttemptAt: T0 + i } : { status: 'SUCCEEDED', nextAttemptAt: null, expiresAt: i % 10 === 1 ? null : T0 + i },
        ),
      );
      await insertStoredTasks(store, tasks);
      await store.claimDue(T0 + 500, { ...lease, limit: 20 });
      await store.holdTarget({ tenantId: 'default', targetKey: C }, T0 + 1_000, T0);
      await store.limitTarget({ tenantId: 'default', targetKey: B }, { ratePerSecond: 10, burst: 2, maxInFlight: 5 }, T0);
      // Another tenant, mostly in flight: the in-flight count of one tenant's queue must not read them.
      await store.insertTasks(Array.from({ length: 200 }, (_, i) => forTarget(A, { tenantId: 'other', nextAttemptAt: T0 + i })));
      await store.claimDue(T0 + 500, { ...lease, limit: 150 });
      // Targets seen before and idle now, as in any long-lived store: most queue rows are not ready.
      await insertStoredTasks(store, Array.from({ length: 50 }, (_, i) => forTarget(`https://idle-${i}.example.com`, { status: 'SUCCEEDED', nextAttemptAt: null })));
    }
    await store.close();
    const db = new Database(path);
    if (populated) db.exec('ANALYZE');
    return db;
  }

  for (const populated of [false, true]) {
    const data = populated ? 'analyzed data' : 'empty';
    it(`claims, due times, hints, transitions and leases go through their indexes, never a scan (${data})`, async () => {
      const db = await planDatabase(populated);
      const key = { tenantId: 'default', taskId: 'x', now: T0 };
      const replay = { expectedVersion: 1, runAttemptOffset: 0, runStartedAt: null, nextAttemptAt: T0, updatedAt: T0 };
      const cases: [string, Record<string, unknown> | unknown[], RegExp][] = [
        [READY_QUEUES, [T0], /INDEX target_queues_ready \(ready_at<\?\)/],
        [READY_TIMES, [], /SEARCH q USING INDEX target_queues_ready[\s\S]*INDEX tasks_due \(queue_id=\?\)/],
        // A's queue is the first one seen: its number is 1.
        [SELECT_DUE, [A, 1, T0, 10], /INDEX tasks_due \(queue_id=\? AND next_attempt_at<\?\)/],
        [HAS_DUE, [1, T0], /COVERING INDEX tasks_due \(queue_id=\? AND next_attempt_at<\?\)/],
        [CLAIM_ONE, ['w', T0, T0, 1], /SEARCH tasks USING INTEGER PRIMARY KEY \(rowid=\?\)/],
        [REFRESH_HINT, [1, 1], /INDEX tasks_due \(queue_id=\?\)/],
        [QUEUE_ID, ['default', A], /^SEARCH target_queues USING COVERING INDEX target_queues_key \(tenant_id=\? AND target_key=\?\)$/],
        [ADD_QUEUE, ['default', A], /^$/],
        [LOWER_HINT, { queueId: 1, dueAt: T0 }, /^SEARCH target_queues USING INTEGER PRIMARY KEY \(rowid=\?\)$/],
        [HOLD_TARGET, ['default', A, T0, T0], /^$|target_queues_key/],
        [LOWER_HINT_AND_FREE, { queueId: 1, dueAt: T0 }, /^SEARCH target_queues USING INTEGER PRIMARY KEY \(rowid=\?\)$/],
        [LIMIT_TARGET, ['default', A, 10, 2, 5, T0, 2, T0, null], /^$|target_queues_key/],
        [BUCKET_OF, ['default', A], /SEARCH target_queues USING INDEX target_queues_key \(tenant_id=\? AND target_key=\?\)/],
        [SET_GATE, [1, T0, null, null, 1], /^SEARCH target_queues USING INTEGER PRIMARY KEY \(rowid=\?\)$/],
        // The tenant's in-flight entries alone: the index holds each one's queue and lease (007-one-in-flight-index.sql).
        [IN_FLIGHT_OF, [T0, 'default', 1], /^SEARCH tasks USING COVERING INDEX tasks_in_flight \(tenant_id=\?\)$/],
        [IN_FLIGHT_QUEUES, ['default'], /^SEARCH tasks USING COVERING INDEX tasks_in_flight \(tenant_id=\?\)$/],
        [GET_QUEUE, ['default', A], /SEARCH target_queues USING INDEX target_queues_key \(tenant_id=\? AND target_key=\?\)/],
        [LIST_QUEUES, ['default', 10], /SEARCH target_queues USING INDEX target_queues_key \(tenant_id=\?\)/],
        [LIST_QUEUES_AFTER, ['default', A, 10], /SEARCH target_queues USING INDEX target_queues_key \(tenant_id=\? AND target_key>\?\)/],
        [QUEUE_HEAD, [1], /COVERING INDEX tasks_due \(queue_id=\?\)/],
        [COUNT_DUE, [1, T0, 10_000], /COVERING INDEX tasks_due \(queue_id=\? AND next_attempt_at<\?\)/],
        [CANCEL_TASK, { ...key, expiresAt: T0 }, /INDEX tasks_pk \(tenant_id=\? AND task_id=\?\)/],
        [REQUEST_CANCEL, key, /INDEX tasks_pk \(tenant_id=\? AND task_id=\?\)/],
        [REPLAY_TASK, { ...replay, tenantId: 'default', taskId: 'x' }, /INDEX tasks_pk \(tenant_id=\? AND task_id=\?\)/],
        [RESCHEDULE_TASK, { tenantId: 'default', taskId: 'x', expectedVersion: 1, nextAttemptAt: T0, updatedAt: T0 }, /INDEX tasks_pk \(tenant_id=\? AND task_id=\?\)/],
        [RELEASE_LEASE, { ...key, fencingToken: 1 }, /INDEX tasks_pk \(tenant_id=\? AND task_id=\?\)/],
        [COMPLETE_TO_LIVE, [0, 1, T0, T0, 1, null, null, null, null, T0, 'default', 'x', 1, null, null, null, null], /INDEX tasks_pk/],
        // The purge: the expired tasks' stretch of the retention index, earliest first (no sort), also when every entry
        // has expired (the planner may know the bound value); then deletes by key.
        // A task whose callback is owed is kept: one seek of the outbox's primary key per expired task.
        [SELECT_EXPIRED, [T0, 500], EXPIRED_PLAN],
        [SELECT_EXPIRED, [T0 + 10_000, 500], EXPIRED_PLAN],
        [DELETE_ATTEMPTS, ['default', Buffer.alloc(16)], /^SEARCH attempts USING PRIMARY KEY \(tenant_id=\? AND task_id=\?\)$/],
        [DELETE_TASK, [1], /^SEARCH tasks USING INTEGER PRIMARY KEY \(rowid=\?\)$/],
        // The reaper's reads walk the one in-flight index, which holds IN_FLIGHT tasks only (at most the instances'
        // concurrency), and sort the lapsed ones: they run once per lapse or idle interval, never per claim.
        // (Each row's target key is read through its queue's number: one seek by rowid.)
        [
          FIND_EXPIRED_LEASES,
          { now: T0, limit: 10 },
          /^SCAN tasks USING INDEX tasks_in_flight\nCORRELATED SCALAR SUBQUERY 1\nSEARCH q USING INTEGER PRIMARY KEY \(rowid=\?\)\nUSE TEMP B-TREE FOR ORDER BY$/,
        ],
        [NEXT_LEASE_EXPIRY_AT, {}, /^SEARCH tasks USING COVERING INDEX tasks_in_flight$/],
        // The rotation's walk follows the task key from where its last page ended: a range, never a sort.
        [
          WALK_SEALED_TASKS,
          ['default', 'x', 10],
          /^SEARCH tasks USING INDEX tasks_pk \(\(tenant_id,task_id\)>\(\?,\?\)\)\nCORRELATED SCALAR SUBQUERY 1\nSEARCH q USING INTEGER PRIMARY KEY \(rowid=\?\)$/,
        ],
        [RESEAL_TASK, ['{}', null, 'default', 'x'], /INDEX tasks_pk \(tenant_id=\? AND task_id=\?\)/],
        // The oldest pending task of each target: the tenants by a skip along the queue key, then each tenant's live tasks
        // oldest first from where the last page ended: a range, never a sort.
        [NEXT_QUEUE_TENANT, [''], /^SEARCH target_queues USING COVERING INDEX target_queues_key \(tenant_id>\?\)$/],
        [
          LIVE_BY_AGE,
          ['default', -Infinity, Buffer.alloc(0), 128],
          /^SEARCH t USING INDEX tasks_live \(tenant_id=\? AND \(created_at,task_id\)>\(\?,\?\)\)\nSEARCH q USING INTEGER PRIMARY KEY \(rowid=\?\)$/,
        ],
      ];
      for (const [sql, params, index] of cases) {
        const details = plan(db, sql, params);
        expect(details, sql).toMatch(index);
        if (sql !== FIND_EXPIRED_LEASES) expect(details, sql).not.toMatch(NO_SCAN);
      }
      expect(plan(db, REFRESH_HINT, [1, 1])).toMatch(/SEARCH target_queues USING INTEGER PRIMARY KEY \(rowid=\?\)/);
      db.close();
    });
  }

  it('lists pages from the listing indexes without sorting the table', async () => {
    const db = await planDatabase(true);
    const shapes: [TaskStatus[], boolean, boolean, boolean, RegExp[]][] = [
      [[], false, false, false, [/tasks_live/, /tasks_ended/]],
      [['PENDING'], false, false, true, [/tasks_live/]],
      [['IN_FLIGHT'], false, false, true, [/tasks_in_flight/]],
      [['FAILED', 'EXHAUSTED'], false, false, true, [/tasks_ended \(tenant_id=\? AND status=\?/]],
      [['PENDING', 'IN_FLIGHT', 'CANCELLED'], false, false, false, [/tasks_live/, /tasks_ended/]],
      [['SUCCEEDED'], true, false, true, []],
      // A policy filter, like a target filter, rides on the status walks: no index leads by policy (006-task-space.sql).
      [[], true, false, false, [/tasks_live/, /tasks_ended/]],
      [['PENDING'], true, false, true, [/tasks_live/]],
      [['FAILED', 'EXHAUSTED'], false, true, true, [/tasks_ended \(tenant_id=\? AND status=\?/]],
      [[], false, true, false, [/tasks_live/, /tasks_ended/]],
      [[], true, true, false, [/tasks_live/, /tasks_ended/]],
    ];
    for (const [statuses, byPolicy, byTarget, withCursor, indexes] of shapes) {
      const params: Record<string, unknown> = { tenantId: 'default', limit: 10 };
      if (byPolicy) params['policyId'] = 'default';
      if (byTarget) params['targetKey'] = 'https://api.example.com';
      if (withCursor) Object.assign(params, { afterCreatedAt: T0, afterTaskId: 'x' });
      const details = plan(db, TaskListing.sql(statuses, { byPolicy, byTarget, withCursor }), params);
      expect(details, `${statuses.join(',')}`).not.toMatch(NO_SCAN);
      for (const index of indexes) expect(details, `${statuses.join(',')}`).toMatch(index);
    }
    const shape = { byPolicy: false, byTarget: false, withCursor: false };
    expect(() => TaskListing.sql(['DONE' as TaskStatus], shape)).toThrow(/Unknown task status "DONE"/);
    db.close();
  });

  it('counts by status from the listing indexes alone', async () => {
    const db = await planDatabase(true);
    for (const [sql, params] of [
      [COUNT_BY_STATUS_OF_TENANT, { tenantId: 'default' }],
      [COUNT_BY_STATUS, {}],
    ] as const) {
      const details = plan(db, sql, params);
      expect(details).not.toMatch(/SCAN tasks(?! USING COVERING)|TEMP B-TREE/);
      expect(details).toMatch(/COVERING INDEX tasks_ended/);
    }
    db.close();
  });

  it('reads API keys and tenant limits by key or index, never sorting', async () => {
    const db = await planDatabase(false);
    const cases: [string, Record<string, unknown> | unknown[], RegExp][] = [
      [GET_API_KEY, ['k'], /^SEARCH api_keys USING PRIMARY KEY \(key_id=\?\)$/],
      [REVOKE_API_KEY, { keyId: 'k', now: T0, tenantId: null }, /^SEARCH api_keys USING PRIMARY KEY \(key_id=\?\)$/],
      [FIRST_API_KEYS_OF_TENANT, ['default', 3], /^SEARCH api_keys USING INDEX api_keys_by_tenant \(tenant_id=\?\)$/],
      [LIST_API_KEYS_OF_TENANT, ['default', 'k', 3], /^SEARCH api_keys USING INDEX api_keys_by_tenant \(tenant_id=\? AND key_id>\?\)$/],
      // Every tenant's keys: the primary key walked in order, stopped by the LIMIT.
      [FIRST_API_KEYS, [3], /^SCAN api_keys$/],
      [LIST_API_KEYS, ['k', 3], /^SEARCH api_keys USING PRIMARY KEY \(key_id>\?\)$/],
      [HAS_ACTIVE_API_KEY, [], /SCAN api_keys USING INDEX api_keys_active$/],
      [GET_TENANT_LIMITS, ['default'], /^SEARCH tenant_limits USING PRIMARY KEY \(tenant_id=\?\)$/],
    ];
    for (const [sql, params, expected] of cases) expect(plan(db, sql, params), sql).toMatch(expected);
    db.close();
  });
});
