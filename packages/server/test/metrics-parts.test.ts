import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CircuitState } from '@retryd/core';
import { ManualClock } from '@retryd/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { AttemptLogOutcome, type AttemptLog, type RetryTask } from '../src/domain/task.js';
import { LabelCap, OTHER_LABEL, TenantLabelCap } from '../src/metrics/label-cap.js';
import { QueueDepth } from '../src/metrics/queue-depth.js';
import { ServiceMetrics } from '../src/metrics/service-metrics.js';
import type { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import { openTempStore, taskFor } from './engine-helpers.js';
import { T0, finalOutcome } from './fixtures/tasks.js';
import { parseSamples, valueOf } from './metrics-text.js';

const DOCS = join(import.meta.dirname, '..', '..', '..', 'docs');

/** The `retry_` and `process_` metric names a PromQL expression names, histogram series by their base name. */
function metricsNamedIn(expr: string): string[] {
  // Label values (`outcome="retry_scheduled"`) are not metric names.
  const unquoted = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  return [...unquoted.matchAll(/\b(?:retry|process)_[a-z0-9_]+/g)].map(([name]) => name.replace(/_(bucket|sum|count)$/, ''));
}

/** Every string under a key named `expr` in a parsed JSON or YAML document. */
function exprsIn(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(exprsIn);
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) => (key === 'expr' && typeof value === 'string' ? [value] : exprsIn(value)));
}

function attemptOf(task: RetryTask, outcome: AttemptLog['outcome'], startedAt: number): AttemptLog {
  return {
    tenantId: task.tenantId,
    taskId: task.taskId,
    attemptNumber: 1,
    startedAt,
    durationMs: 20,
    responseStatus: 200,
    errorMessage: null,
    outcome,
    responseBodySnippet: null,
    nextAttemptAt: null,
    workerId: 'w',
    delayedBy: null,
    backoffAt: null,
  };
}

let store: SqliteStore;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ store, cleanup } = await openTempStore());
});
afterEach(async () => cleanup());

describe('LabelCap', () => {
  it('keeps the first values and folds every later one into other', () => {
    const cap = new LabelCap(2);
    expect(['a', 'b', 'c', 'a', 'd', 'b'].map((v) => cap.label(v))).toEqual(['a', 'b', OTHER_LABEL, 'a', OTHER_LABEL, 'b']);
    // A value spelled like the fold is one of the folded values, and takes no place.
    expect(new LabelCap(5).label(OTHER_LABEL)).toBe(OTHER_LABEL);
    expect(() => new LabelCap(0)).toThrow('Expected `limit` to be an integer >= 1, got 0.');
  });

  it('keeps the first values of each tenant apart: one tenant past its cap folds only its own', () => {
    const cap = new TenantLabelCap(2);
    expect(['a', 'b', 'c'].map((v) => cap.label('t1', v))).toEqual(['a', 'b', OTHER_LABEL]);
    expect(['c', 'd', 'a', 'e'].map((v) => cap.label('t2', v))).toEqual(['c', 'd', OTHER_LABEL, OTHER_LABEL]);
    expect(cap.label('t1', 'a')).toBe('a');
    expect(cap.label('t1', 'c')).toBe(OTHER_LABEL);
    expect(() => new TenantLabelCap(0)).toThrow('Expected `limit` to be an integer >= 1, got 0.');
  });
});

describe('ServiceMetrics', () => {
  it('folds targets and policies past their caps into other', async () => {
    const metrics = new ServiceMetrics({ store, maxTargets: 2, maxPolicies: 1, processMetrics: false });
    const origins = ['http://a.example', 'http://b.example', 'http://c.example', 'http://d.example'];
    for (const [i, origin] of origins.entries()) {
      const task = taskFor(`${origin}/hook`, undefined, { targetKey: origin, policyId: i === 0 ? null : `p${i}`, policy: null, nextAttemptAt: 1_000 });
      metrics.attemptRecorded(task, attemptOf(task, AttemptLogOutcome.SUCCEEDED, 1_250));
    }
    const samples = parseSamples(await metrics.scrape());
    const attempts = (target: string, policy: string) => valueOf(samples, 'retry_attempts_total', { outcome: 'succeeded', policy, target });
    expect(attempts('http://a.example', 'inline')).toBe(1);
    expect(attempts('http://b.example', OTHER_LABEL)).toBe(1);
    expect(attempts(OTHER_LABEL, OTHER_LABEL)).toBe(2);
    expect(samples.filter((s) => s.name === 'retry_attempts_total')).toHaveLength(3);
    // Lag is the start minus the due time: 250 ms, in the 0.5 s bucket and not the 0.1 s one.
    expect(valueOf(samples, 'retry_schedule_lag_seconds_bucket', { le: '0.1' })).toBe(0);
    expect(valueOf(samples, 'retry_schedule_lag_seconds_bucket', { le: '0.5' })).toBe(4);
    expect(valueOf(samples, 'retry_schedule_lag_seconds_sum')).toBeCloseTo(1, 6);
  });

  it("keeps another tenant's targets and policies labelled when one tenant has filled its places", async () => {
    const known: { tenantId: string; targetKey: string }[] = [];
    const metrics = new ServiceMetrics({
      store,
      maxTargets: 3,
      maxPolicies: 2,
      processMetrics: false,
      targets: { knownTargets: () => known.map((k) => ({ ...k, breaker: CircuitState.CLOSED, allowedRatePerSecond: null, held: false })) },
    });
    const record = (tenantId: string, origin: string, policyId: string) => {
      const task = taskFor(`${origin}/hook`, undefined, { tenantId, targetKey: origin, policyId, policy: null, nextAttemptAt: 1_000 });
      metrics.attemptRecorded(task, attemptOf(task, AttemptLogOutcome.SUCCEEDED, 1_100));
      known.push({ tenantId, targetKey: origin });
    };
    // Tenant noisy names five targets and three policies first: its own later ones fold into other.
    for (let i = 0; i < 5; i++) record('noisy', `http://n${i}.example`, `p${i % 3}`);
    record('quiet', 'http://q.example', 'billing');
    const samples = parseSamples(await metrics.scrape());
    const attempts = (target: string, policy: string) => valueOf(samples, 'retry_attempts_total', { outcome: 'succeeded', policy, target });
    expect(attempts('http://q.example', 'billing')).toBe(1);
    expect(attempts('http://n0.example', 'p0')).toBe(1);
    expect(attempts('http://n2.example', OTHER_LABEL)).toBe(1);
    expect(attempts(OTHER_LABEL, 'p0')).toBe(1);
    expect(attempts(OTHER_LABEL, 'p1')).toBe(1);
    const breakers = samples.filter((sample) => sample.name === 'retry_target_breaker_state' && sample.labels.state === 'closed');
    expect(Object.fromEntries(breakers.map((sample) => [sample.labels.target, sample.value]))).toEqual({
      'http://n0.example': 1,
      'http://n1.example': 1,
      'http://n2.example': 1,
      [OTHER_LABEL]: 2,
      'http://q.example': 1,
    });
  });

  it("counts the schedule lag from the end of its target's hold, and the wait for the target apart", async () => {
    const heldUntil = new Map([['http://held.example', 5_000]]);
    const heldThrough = (ref: { targetKey: string }, now: number) => Math.min(now, heldUntil.get(ref.targetKey) ?? -Infinity);
    const metrics = new ServiceMetrics({ store, processMetrics: false, targets: { knownTargets: () => [], heldThrough } });
    const held = taskFor('http://held.example/x', undefined, { targetKey: 'http://held.example', nextAttemptAt: 1_000 });
    const free = taskFor('http://free.example/x', undefined, { targetKey: 'http://free.example', nextAttemptAt: 1_000 });
    metrics.attemptRecorded(held, attemptOf(held, AttemptLogOutcome.SUCCEEDED, 5_200));
    metrics.attemptRecorded(free, attemptOf(free, AttemptLogOutcome.SUCCEEDED, 1_300));
    // Due after the hold ended: a lag like any other.
    metrics.attemptRecorded({ ...held, nextAttemptAt: 6_000 }, attemptOf(held, AttemptLogOutcome.SUCCEEDED, 6_100));
    const samples = parseSamples(await metrics.scrape());
    expect(valueOf(samples, 'retry_schedule_lag_seconds_count')).toBe(3);
    expect(valueOf(samples, 'retry_schedule_lag_seconds_sum')).toBeCloseTo(0.2 + 0.3 + 0.1, 6);
    expect(valueOf(samples, 'retry_target_held_wait_seconds_count')).toBe(1);
    expect(valueOf(samples, 'retry_target_held_wait_seconds_sum')).toBe(4);
  });

  it('counts dead letters by reason and task age by final status; a lost attempt has no duration', async () => {
    const metrics = new ServiceMetrics({ store, processMetrics: false });
    const task = taskFor('http://a.example/x', undefined, { targetKey: 'http://a.example', createdAt: 10_000, nextAttemptAt: 10_000 });
    metrics.attemptRecorded(task, attemptOf(task, AttemptLogOutcome.LEASE_EXPIRED, 0));
    metrics.taskEnded(task, 'EXHAUSTED', 'max_attempts', 70_000);
    metrics.taskEnded(task, 'SUCCEEDED', null, 10_500);
    metrics.storeCallTimed('claim', 0.002);
    const samples = parseSamples(await metrics.scrape());
    expect(valueOf(samples, 'retry_attempts_total', { outcome: 'lease_expired', policy: 'inline', target: 'http://a.example' })).toBe(1);
    expect(valueOf(samples, 'retry_attempt_duration_seconds_count')).toBe(0);
    expect(valueOf(samples, 'retry_dead_letters_total', { reason: 'max_attempts' })).toBe(1);
    expect(valueOf(samples, 'retry_task_age_seconds_sum', { status: 'EXHAUSTED' })).toBe(60);
    expect(valueOf(samples, 'retry_task_age_seconds_sum', { status: 'SUCCEEDED' })).toBe(0.5);
    expect(valueOf(samples, 'retry_store_duration_seconds_bucket', { operation: 'claim', le: '0.0025' })).toBe(1);
  });

  it('counts the tasks waiting on a held or half-open target, and none for a closed one', async () => {
    // What RetrydBreakerOpenLong tells apart: a half-open target with tasks waiting from an idle one left half-open.
    const states: [string, CircuitState, boolean, number][] = [
      ['http://open.example', CircuitState.OPEN, true, 4],
      ['http://probing.example', CircuitState.HALF_OPEN, false, 7],
      ['http://idle.example', CircuitState.HALF_OPEN, false, 0],
      ['http://closed.example', CircuitState.CLOSED, false, 9],
    ];
    const known = states.map(([targetKey, breaker, held]) => ({ tenantId: 'default', targetKey, breaker, allowedRatePerSecond: null, held }));
    const due = new Map(states.map(([targetKey, , , tasks]) => [targetKey, tasks]));
    const metrics = new ServiceMetrics({ store, processMetrics: false, targets: { knownTargets: () => known, dueTasks: async (ref) => due.get(ref.targetKey) ?? 0 } });
    const samples = parseSamples(await metrics.scrape()).filter((sample) => sample.name === 'retry_target_held_tasks');
    expect(samples.map((sample) => [sample.labels.target, sample.value])).toEqual([
      ['http://open.example', 4],
      ['http://probing.example', 7],
      ['http://idle.example', 0],
    ]);
  });

  it('counts tasks by status at most once per cache period, however often scraped', async () => {
    const clock = new ManualClock(0);
    let counts = 0;
    // The real store's count, counted: a decorator, as the fault-injecting stores are.
    const admin = Object.create(store.admin) as typeof store.admin;
    admin.countByStatus = (tenantId) => (counts++, store.admin.countByStatus(tenantId));
    const depth = new QueueDepth({ admin }, () => clock.now(), 5_000);
    await Promise.all([depth.read(), depth.read()]);
    await depth.read();
    expect(counts).toBe(1);
    await clock.advance(5_000);
    await depth.read();
    expect(counts).toBe(2);
  });
});

describe('retry_oldest_pending_age_seconds', () => {
  const MINUTE = 60_000;
  const pendingOn = (origin: string, createdAt: number, overrides: Partial<RetryTask> = {}) =>
    taskFor(`${origin}/hook`, undefined, { targetKey: origin, createdAt, updatedAt: createdAt, nextAttemptAt: createdAt, ...overrides });
  const ages = async (metrics: ServiceMetrics) =>
    Object.fromEntries(
      parseSamples(await metrics.scrape())
        .filter((sample) => sample.name === 'retry_oldest_pending_age_seconds')
        .map((sample) => [sample.labels.target, sample.value]),
    );

  it('shows a stuck task while it waits, the oldest of tenants sharing a target, read once per cache period, gone once it ends', async () => {
    const clock = new ManualClock(T0);
    let reads = 0;
    // The real store's read, counted: a decorator, as the fault-injecting stores are.
    const admin = Object.create(store.admin) as typeof store.admin;
    admin.oldestPending = (limit) => (reads++, store.admin.oldestPending(limit));
    const metrics = new ServiceMetrics({ store: { admin }, clock, queueDepthCacheMs: 5_000, processMetrics: false });
    const stuck = pendingOn('http://a.example', T0 - 2 * MINUTE, { tenantId: 'acme' });
    const younger = pendingOn('http://a.example', T0 - 90_000);
    // Waiting on a retry an hour ahead: waiting all the same.
    const later = pendingOn('http://b.example', T0 - 30_000, { nextAttemptAt: T0 + 60 * MINUTE });
    await store.insertTasks([stuck, younger, later]);
    expect(await ages(metrics)).toEqual({ 'http://a.example': 120, 'http://b.example': 30 });

    // The stuck task ends: scrapes within the cache period still show it, ageing, without reading the store again.
    const [claimed] = await store.claimDue(T0, { limit: 1, leaseMs: MINUTE, workerId: 'w' });
    expect(claimed?.taskId).toBe(stuck.taskId);
    const fencingToken = claimed?.fencingToken ?? 0;
    await store.completeAttempts([{ tenantId: 'acme', taskId: stuck.taskId, fencingToken, next: finalOutcome(stuck, 'SUCCEEDED') }], T0);
    await clock.advance(1_000);
    expect(await ages(metrics)).toEqual({ 'http://a.example': 121, 'http://b.example': 31 });
    expect(reads).toBe(1);
    await clock.advance(4_000);
    expect(await ages(metrics)).toEqual({ 'http://a.example': 95, 'http://b.example': 35 });
    expect(reads).toBe(2);

    // Nothing waits any more: no series.
    for (const task of [younger, later]) await store.cancelTask(task, T0 + 5_000, T0 + 60 * MINUTE);
    await clock.advance(5_000);
    expect(await ages(metrics)).toEqual({});
  });

  it('asks the store for as many targets as the label has places, and folds targets past the cap into other', async () => {
    await store.insertTasks([
      pendingOn('http://x.example', T0 - 300_000),
      pendingOn('http://y.example', T0 - 200_000),
      pendingOn('http://z.example', T0 - 100_000),
    ]);
    const clock = new ManualClock(T0);
    const two = new ServiceMetrics({ store, clock, maxTargets: 2, processMetrics: false });
    expect(await ages(two)).toEqual({ 'http://x.example': 300, 'http://y.example': 200 });
    // Another metric took the only place: every target waiting reads as other, with the oldest age among them.
    const one = new ServiceMetrics({ store, clock, maxTargets: 1, processMetrics: false });
    const busy = taskFor('http://busy.example/x', undefined, { targetKey: 'http://busy.example', nextAttemptAt: T0 });
    one.attemptRecorded(busy, attemptOf(busy, AttemptLogOutcome.SUCCEEDED, T0));
    expect(await ages(one)).toEqual({ [OTHER_LABEL]: 300 });
  });
});

describe('docs/alerts.yml and docs/grafana-dashboard.json', () => {
  const exported = () => new Set(new ServiceMetrics({ store }).metricNames());

  it('name only metrics the service exports (alerts)', () => {
    const names = exprsIn(parse(readFileSync(join(DOCS, 'alerts.yml'), 'utf8'))).flatMap(metricsNamedIn);
    expect(names.length).toBeGreaterThan(5);
    expect(names.filter((name) => !exported().has(name))).toEqual([]);
  });

  it('name only metrics the service exports (dashboard)', () => {
    const dashboard = JSON.parse(readFileSync(join(DOCS, 'grafana-dashboard.json'), 'utf8')) as unknown;
    const names = [...exprsIn(dashboard), ...JSON.stringify(dashboard).match(/label_values\([^)]*\)/g)!].flatMap(metricsNamedIn);
    expect(names.length).toBeGreaterThan(10);
    expect(names.filter((name) => !exported().has(name))).toEqual([]);
  });
});
