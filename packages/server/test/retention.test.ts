import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '@retryd/core/testing';
import { policyRetentionKey, RetentionBook, TENANT_RETENTION_KEY, writeRetentionOverride } from '../src/retention/retention-book.js';
import { Purger } from '../src/retention/purger.js';
import {
  checkRetentionOverride,
  DEFAULT_RETENTION,
  durationText,
  expiresAtOf,
  mergeRetention,
  parseDurationText,
} from '../src/retention/retention-periods.js';
import { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import { EngineHarness } from './engine-harness.js';
import { T0, makeTask } from './fixtures/tasks.js';

// Retention: the periods and their rules, the book that resolves a task's (service, tenant, policy), and the engine
// giving every task that ends its expiresAt, which the purge then honours.

const DAY = 86_400_000;

describe('retention periods', () => {
  it('checks an override field by field, naming the field and the rule', () => {
    expect(checkRetentionOverride({ succeededMs: 60_000, cancelledMs: 10 * DAY })).toEqual({ ok: true, override: { succeededMs: 60_000, cancelledMs: 10 * DAY } });
    const bad = checkRetentionOverride({ succeededMs: 59_999, deadLettersMs: 1.5e6 + 0.5, keepForever: true });
    expect(bad.ok).toBe(false);
    expect(bad.ok ? [] : bad.errors.map((e) => [e.field, e.rule])).toEqual([
      ['succeededMs', 'an integer number of ms from 60000 (a minute) to 315360000000 (ten years)'],
      ['deadLettersMs', 'an integer number of ms from 60000 (a minute) to 315360000000 (ten years)'],
      ['keepForever', 'one of succeededMs, deadLettersMs, cancelledMs'],
    ]);
    expect(checkRetentionOverride([], 'retention')).toMatchObject({ ok: false, errors: [{ field: 'retention', rule: 'an object' }] });
  });

  it('merges overrides over the defaults, the last one winning, and dates each final status', () => {
    const periods = mergeRetention(DEFAULT_RETENTION, { deadLettersMs: 90 * DAY }, { succeededMs: DAY }, undefined);
    expect(periods).toEqual({ succeededMs: DAY, deadLettersMs: 90 * DAY, cancelledMs: 7 * DAY });
    expect(expiresAtOf('SUCCEEDED', T0, periods)).toBe(T0 + DAY);
    expect(expiresAtOf('FAILED', T0, periods)).toBe(T0 + 90 * DAY);
    expect(expiresAtOf('EXHAUSTED', T0, periods)).toBe(T0 + 90 * DAY);
    expect(expiresAtOf('CANCELLED', T0, periods)).toBe(T0 + 7 * DAY);
    expect(expiresAtOf('PENDING', T0, periods)).toBeNull();
    expect(expiresAtOf('IN_FLIGHT', T0, periods)).toBeNull();
  });

  it('reads periods as people write them', () => {
    expect(['7d', '12h', '90m', '60s', '60000', ' 2d '].map(parseDurationText)).toEqual([7 * DAY, 12 * 3_600_000, 90 * 60_000, 60_000, 60_000, 2 * DAY]);
    expect(['', '7w', '-1d', '1.5d', 'd'].map(parseDurationText)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect([7 * DAY, 3_600_000, 90_000, 1_500].map(durationText)).toEqual(['7 d', '1 h', '90 s', '1500 ms']);
  });
});

describe('RetentionBook', () => {
  let store: SqliteStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it("resolves a task's periods: the service's, then its tenant's own, then its registered policy's own", async () => {
    store = new SqliteStore(':memory:');
    await store.init();
    const clock = new ManualClock(T0);
    const book = new RetentionBook({ state: store.targetState, defaults: DEFAULT_RETENTION, now: () => clock.now(), ttlMs: 5_000 });
    await writeRetentionOverride(store.targetState, 'acme', TENANT_RETENTION_KEY, 0, { succeededMs: DAY }, T0);
    await writeRetentionOverride(store.targetState, 'acme', policyRetentionKey('payments'), 0, { deadLettersMs: 365 * DAY, succeededMs: 2 * DAY }, T0);
    const named = makeTask({ tenantId: 'acme', policyId: 'payments' });
    const inline = makeTask({ tenantId: 'acme', policyId: null, policy: { maxAttempts: 2, backoffType: 'FIXED', initialDelayMs: 10, multiplier: 1, maxDelayMs: 10, jitterType: 'NONE' } });
    const other = makeTask({ tenantId: 'other' });

    expect(book.cachedFor(named)).toBeUndefined();
    await book.resolve([named, inline, other]);
    expect(book.periodsFor(named)).toEqual({ succeededMs: 2 * DAY, deadLettersMs: 365 * DAY, cancelledMs: 7 * DAY });
    // An inline policy has no retention of its own: its tenant's.
    expect(book.periodsFor(inline)).toEqual({ ...DEFAULT_RETENTION, succeededMs: DAY });
    expect(book.periodsFor(other)).toEqual(DEFAULT_RETENTION);

    // A change is seen once the entry is older than its TTL (read again in the background), at once after invalidate.
    await writeRetentionOverride(store.targetState, 'acme', TENANT_RETENTION_KEY, 1, { succeededMs: 3 * DAY }, T0);
    expect(book.periodsFor(inline).succeededMs).toBe(DAY);
    await clock.advance(4_999);
    book.periodsFor(inline);
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(book.periodsFor(inline).succeededMs).toBe(DAY);
    await clock.advance(1);
    // The stale entry still answers, and is read again behind it.
    expect(book.periodsFor(inline).succeededMs).toBe(DAY);
    for (let turn = 0; turn < 20 && book.periodsFor(inline).succeededMs !== 3 * DAY; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(book.periodsFor(inline).succeededMs).toBe(3 * DAY);
    await writeRetentionOverride(store.targetState, 'acme', TENANT_RETENTION_KEY, 2, {}, T0);
    book.invalidate('acme', TENANT_RETENTION_KEY);
    await book.resolve([inline]);
    expect(book.periodsFor(inline)).toEqual(DEFAULT_RETENTION);
  });

  it('reads a stored override that breaks the rules as absent, and says so', async () => {
    store = new SqliteStore(':memory:');
    await store.init();
    const invalid: string[] = [];
    const book = new RetentionBook({ state: store.targetState, defaults: DEFAULT_RETENTION, now: () => T0, onInvalid: (e) => invalid.push(e.message) });
    await store.targetState.putTargetState('default', TENANT_RETENTION_KEY, 0, JSON.stringify({ succeededMs: 5 }), T0);
    const task = makeTask();
    await book.resolve([task]);
    expect(book.periodsFor(task)).toEqual(DEFAULT_RETENTION);
    expect(invalid).toEqual([expect.stringContaining('succeededMs must be an integer number of ms from 60000')]);
  });
});

describe('the engine and the purge', () => {
  let h: EngineHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('gives each task that ends the expiresAt of its tenant and policy, and the purge deletes it then, freeing its key', async () => {
    h = await EngineHarness.open();
    await writeRetentionOverride(h.store.targetState, 'default', TENANT_RETENTION_KEY, 0, { succeededMs: 2 * 60_000 }, T0);
    const policy = { maxAttempts: 1, backoffType: 'FIXED', initialDelayMs: 10, multiplier: 1, maxDelayMs: 10, jitterType: 'NONE' } as const;
    const { task: ok } = await h.enqueue({ targetUrl: 'https://a.example/x', method: 'POST', idempotencyKey: 'order-1', policy });
    const { task: dead } = await h.enqueue({ targetUrl: 'https://a.example/x', method: 'POST', idempotencyKey: 'order-2', policy });
    await h.settle();
    h.dispatcher.take(ok).respond(200);
    h.dispatcher.take(dead).respond(503);
    await h.settle();
    const end = h.clock.now();
    expect(await h.task(ok)).toMatchObject({ status: 'SUCCEEDED', expiresAt: end + 2 * 60_000 });
    expect(await h.task(dead)).toMatchObject({ status: 'EXHAUSTED', expiresAt: end + DEFAULT_RETENTION.deadLettersMs });

    const purger = new Purger({ store: h.store, clock: h.clock, owner: 'p', report: (error) => { throw error; } });
    await h.advanceTo(end + 2 * 60_000 - 1);
    expect(await purger.pass()).toBe(0);
    await h.advanceTo(end + 2 * 60_000);
    expect(await purger.pass()).toBe(1);
    expect(await h.store.getTask('default', ok.taskId)).toBeUndefined();
    expect((await h.store.getTask('default', dead.taskId))?.status).toBe('EXHAUSTED');
    // The key is free: the same enqueue makes a new task.
    const again = await h.enqueue({ targetUrl: 'https://a.example/x', method: 'POST', idempotencyKey: 'order-1', policy });
    expect(again.task.taskId).not.toBe(ok.taskId);
  });
});
