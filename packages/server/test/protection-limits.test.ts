import { SLOW_START_IN_FLIGHT } from '../src/protection/ready-attempt.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { BlobStore } from '../src/blobs/blob-store.js';
import { DEFAULT_TENANT } from '../src/domain/task.js';
import { RetrydError } from '../src/domain/errors.js';
import { TargetGuard } from '../src/security/target-guard.js';
import { TaskService } from '../src/tasks/task-service.js';
import { T0 } from './fixtures/tasks.js';
import { FAST, only, ProtectedHarness } from './protection-harness.js';

// Rate and concurrency limits set through `TargetControl`, enforced by the store's gate across instances; the hand-off
// that skips the gate only for targets known to be free; settings validated, stored and read back.

const A = 'https://a.example';
const B = 'https://b.example';

let p: ProtectedHarness;
afterEach(async () => {
  await p.close();
});

describe('limits shared by every instance', () => {
  // Claims of one task at a time, so that both instances' claims interleave and each gets a share.
  it('two instances respect one concurrency limit', async () => {
    p = await ProtectedHarness.open({ instances: 2, engine: { claimBatchSize: 1 } });
    await p.first.protection.putSettings(p.ref(A), { maxInFlight: 3 });
    const tasks = await p.insert(...Array.from({ length: 10 }, () => p.task(`${A}/hook`)), p.task(`${B}/hook`));
    let most = 0;
    while (p.openTo(A).length > 0) {
      most = Math.max(most, p.openTo(A).length);
      await p.answer(p.openTo(A).slice(0, 1), 200);
    }
    expect(most).toBe(3);
    expect(p.openTo(B)).toHaveLength(1);
    // Both instances took their share of the work.
    expect(p.instances.map((i) => i.dispatcher.dispatches.filter((d) => d.task.targetKey === A).length).every((n) => n > 0)).toBe(true);
    for (const task of tasks.slice(0, 10)) expect(await p.h.task(task)).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 1 });
  });

  it('two instances respect one rate limit: its burst, then one call per token', async () => {
    p = await ProtectedHarness.open({ instances: 2, engine: { claimBatchSize: 1 } });
    await p.first.protection.putSettings(p.ref(A), { rateLimit: { ratePerSecond: 10, burst: 2 } });
    await p.insert(...Array.from({ length: 30 }, () => p.task(`${A}/hook`)));
    for (let at = T0; at <= T0 + 2_000; at += 10) {
      await p.h.advanceTo(at);
      await p.answer(p.open, 200);
    }
    const times = p.dispatches.map((d) => d.at - T0);
    expect(times.slice(0, 2)).toEqual([0, 0]);
    // A token every 100 ms after the burst, whichever instance claims it.
    expect(times.slice(2)).toEqual(Array.from({ length: 20 }, (_, i) => 100 * (i + 1)));
    expect(new Set(p.dispatches.map((d) => d.task.leaseOwner)).size).toBe(2);
  });

  it("spreads the sends of a burst one instance claimed at once at the target's rate, not all at the claim", async () => {
    p = await ProtectedHarness.open();
    await p.first.protection.putSettings(p.ref(A), { rateLimit: { ratePerSecond: 10, burst: 5 } });
    await p.insert(...Array.from({ length: 12 }, () => p.task(`${A}/hook`)));
    for (let at = T0; at <= T0 + 2_000; at += 10) {
      await p.h.advanceTo(at);
      await p.answer(p.open, 200);
    }
    // The claim at T0 took the bucket's 5 tokens; they go out 100 ms apart, and the tokens after them in turn.
    expect(p.dispatches.map((d) => d.at - T0)).toEqual(Array.from({ length: 12 }, (_, i) => 100 * i));
  });
});

describe('settings', () => {
  it('are validated with every broken rule named, stored per target, and set the gate', async () => {
    p = await ProtectedHarness.open();
    const control = p.first.protection;
    const refused = await control.putSettings(p.ref(A), { breaker: { openDurationMs: -1, halfOpenProbes: 0 }, maxInFlight: 0, speed: 3 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RetrydError);
    expect((refused as RetrydError).code).toBe('VALIDATION_FAILED');
    expect((refused as RetrydError).errors?.map((e) => e.message)).toEqual([
      'breaker.openDurationMs must be a finite number >= 0',
      'breaker.halfOpenProbes must be an integer >= 1',
      'maxInFlight must be null or an integer >= 1',
      'speed must be absent (known fields: breaker, rateLimit, adaptive, retryBudget, stormDetection, signing, maxInFlight, retryAfterHoldsTarget, attemptTimeoutMs, connectTimeoutMs)',
    ]);
    expect(await control.getTarget(p.ref(A))).toBeUndefined();

    const status = await control.putSettings(p.ref(A), { rateLimit: { ratePerSecond: 50 }, maxInFlight: 8 });
    expect(status).toMatchObject({
      target: { targetKey: A, ratePerSecond: 50, burst: 1, maxInFlight: 8 },
      settings: { rateLimit: { ratePerSecond: 50, burst: null }, maxInFlight: 8, breaker: { enabled: false } },
      breaker: { state: 'CLOSED', openUntil: null, reopenCount: 0 },
      allowedRatePerSecond: null,
    });
    const stored = await p.h.store.targetState.getTargetState(DEFAULT_TENANT, `settings:${A}`);
    expect(JSON.parse(stored!.value)).toEqual(status.settings);
    // A patch applies over what is stored.
    expect((await control.putSettings(p.ref(A), { maxInFlight: null })).settings).toMatchObject({ rateLimit: { ratePerSecond: 50 }, maxInFlight: null });
    expect((await control.listTargets(DEFAULT_TENANT, { limit: 10 })).items.map((s) => [s.target.targetKey, s.target.maxInFlight])).toEqual([[A, null]]);
  });

  it('set on one instance reach the others within the cache time (about a second)', async () => {
    p = await ProtectedHarness.open({ instances: 2 });
    const [one, two] = p.instances;
    const admits = async () => {
      const admitted = two!.protection.admitsHandOff(p.ref(A), p.h.clock.now());
      await p.h.settle();
      return admitted;
    };
    await admits();
    expect(await admits()).toBe(true);
    await one!.protection.putSettings(p.ref(A), { maxInFlight: 2 });
    await p.h.advanceTo(T0 + 999);
    expect(await admits()).toBe(true);
    await p.h.advanceTo(T0 + 1_000);
    await admits();
    expect(await admits()).toBe(false);
    expect(two!.protection.limitsInFlight(p.ref(A))).toBe(true);
  });

  it('reads the view again before it lapses: a steady stream of hand-offs is never refused for its age', async () => {
    p = await ProtectedHarness.open();
    const protection = p.first.protection;
    const admits = async () => {
      const admitted = protection.admitsHandOff(p.ref(A), p.h.clock.now());
      await p.h.settle();
      return admitted;
    };
    await admits();
    // A batch every 250 ms for 5 s: the view (TTL 1 s) passes three quarters of its age again and again, and is read anew
    // each time before it lapses.
    const refused: number[] = [];
    for (let at = T0; at <= T0 + 5_000; at += 250) {
      await p.h.advanceTo(at);
      if (!(await admits())) refused.push(at - T0);
    }
    expect(refused).toEqual([]);
    // With no look for a TTL, the view has lapsed: the next batch goes through the claim gate while it is read again.
    await p.h.advanceTo(T0 + 6_000);
    expect(await admits()).toBe(false);
    expect(await admits()).toBe(true);
  });

  it("another instance's hold (a Retry-After) stops the hand-off once read, and a stale view never admits", async () => {
    p = await ProtectedHarness.open({ instances: 2 });
    const two = p.instances[1]!;
    const admits = async () => {
      const admitted = two.protection.admitsHandOff(p.ref(A), p.h.clock.now());
      await p.h.settle();
      return admitted;
    };
    await admits();
    expect(await admits()).toBe(true);
    // Written by some other instance: this one learns of it on its next read of the store.
    await p.h.store.holdTarget(p.ref(A), T0 + 5_000, T0);
    await p.h.advanceTo(T0 + 1_000);
    // A view a TTL old admits nothing; the read it starts finds the hold.
    expect(await admits()).toBe(false);
    expect(await admits()).toBe(false);
    await p.h.advanceTo(T0 + 5_000);
    await admits();
    expect(await admits()).toBe(true);
    // Likewise limits another instance wrote (an adaptive rate): read within a TTL, they stop the hand-off.
    await p.h.store.limitTarget(p.ref(A), { ratePerSecond: 5, burst: 1, maxInFlight: null }, T0 + 5_000);
    await p.h.advanceTo(T0 + 6_000);
    await admits();
    expect(await admits()).toBe(false);
  });
});

describe('breaker by hand', () => {
  it('an operator opens it for its longest open period (or the duration asked), closes it (the hold ends at once) and resets it', async () => {
    p = await ProtectedHarness.open({ defaults: only({ breaker: { enabled: true, openDurationMs: 500, maxOpenDurationMs: 5_000 } }) });
    const control = p.first.protection;
    expect((await control.breaker(p.ref(A), 'open', 3_600_000)).breaker).toEqual({ state: 'OPEN', openUntil: T0 + 3_600_000, reopenCount: 0 });
    await expect(control.breaker(p.ref(A), 'reset', 1_000)).rejects.toThrow('durationMs goes only with action open, not reset');
    const opened = await control.breaker(p.ref(A), 'open');
    expect(opened.breaker).toEqual({ state: 'OPEN', openUntil: T0 + 5_000, reopenCount: 0 });
    // A shorter opening replaces the hour's, in the store's gate too. One probe is all the gate lets through when the
    // hold ends, until one succeeds.
    expect(opened.target).toMatchObject({ heldUntil: T0 + 5_000, maxInFlight: 1 });
    expect(p.first.events).toEqual([{ event: 'breaker_open', tenantId: 'default', target: A, openUntil: T0 + 3_600_000, reopenCount: 0, cause: 'operator' }]);
    await p.insert(p.task(`${A}/hook`));
    expect(p.open).toEqual([]);

    await p.h.advance(1_000);
    const closed = await control.breaker(p.ref(A), 'close');
    expect(closed.breaker).toEqual({ state: 'CLOSED', openUntil: null, reopenCount: 0 });
    // Closed, and in slow start: no success of the target is known yet, so 10 in flight until one.
    expect(closed.target).toMatchObject({ heldUntil: null, maxInFlight: SLOW_START_IN_FLIGHT });
    await p.h.settle();
    expect(p.openTo(A).map((d) => d.at)).toEqual([T0 + 1_000]);
    expect(p.first.events.at(-1)).toEqual({ event: 'breaker_closed', tenantId: 'default', target: A, cause: 'operator' });

    expect((await control.breaker(p.ref(A), 'reset')).breaker).toEqual({ state: 'CLOSED', openUntil: null, reopenCount: 0 });
    expect(p.first.events).toHaveLength(2);
  });
});

describe('hand-off', () => {
  it('hands tasks due now to the local engine only for targets it knows to be free', async () => {
    p = await ProtectedHarness.open();
    const blobs: BlobStore = { put: async () => 'unused', get: async () => Buffer.alloc(0), delete: async () => undefined };
    const service = new TaskService({
      store: p.h.faulty.store,
      blobs,
      targetGuard: new TargetGuard({ lookup: async () => ['93.184.215.14'] }),
      clock: p.h.clock,
      wake: () => p.first.engine.wake(),
      handOff: p.first.engine,
    });
    const enqueue = async (url: string) => {
      const { task } = await service.enqueue(DEFAULT_TENANT, { targetUrl: url, method: 'POST', policy: FAST });
      await p.h.settle();
      return task.status;
    };
    try {
      await p.first.protection.putSettings(p.ref(A), { maxInFlight: 5 });
      // Read before its first task is written (HandOff.prepare), so free from the first.
      expect(await enqueue(`${B}/x`)).toBe('IN_FLIGHT');
      expect(await enqueue(`${B}/x`)).toBe('IN_FLIGHT');
      // Limited: always through the gate (a hand-off would not be counted against its rate).
      expect(await enqueue(`${A}/x`)).toBe('PENDING');
      expect(await enqueue(`${A}/x`)).toBe('PENDING');
      await p.first.protection.breaker(p.ref(B), 'open');
      expect(await enqueue(`${B}/x`)).toBe('PENDING');
    } finally {
      await service.close();
    }
  });
});
