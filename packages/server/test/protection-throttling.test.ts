import { afterEach, describe, expect, it } from 'vitest';
import { T0 } from './fixtures/tasks.js';
import { only, ProtectedHarness } from './protection-harness.js';

// Retry-After holds and adaptive throttling (AIMD), on the engine harness: what the downstream says about its load
// reaches the store's gate, for every task of the target and every instance.

const A = 'https://a.example';
const B = 'https://b.example';

let p: ProtectedHarness;
afterEach(async () => {
  await p.close();
});

/** The rate the store's gate holds for A now. */
const storedRate = async () => (await p.h.store.admin.getTarget(p.ref(A), p.h.clock.now()))?.ratePerSecond;

describe('Retry-After', () => {
  it('a 429 or 503 with Retry-After holds the whole target until then, not only its task; other targets go on', async () => {
    p = await ProtectedHarness.open({ defaults: only({ retryAfterHoldsTarget: true }) });
    const [first] = await p.insert(p.task(`${A}/hook`));
    await p.answer(p.openTo(A), 429, { 'retry-after': '30' });
    expect(p.first.events).toEqual([{ event: 'target_held', tenantId: 'default', target: A, until: T0 + 30_000, status: 429 }]);
    expect((await p.h.store.admin.getTarget(p.ref(A), T0))?.heldUntil).toBe(T0 + 30_000);

    const later = await p.insert(p.task(`${A}/hook`), p.task(`${A}/hook`), p.task(`${B}/hook`));
    expect(p.open.map((d) => d.task.targetKey)).toEqual([B]);
    await p.answer(p.openTo(B), 200);
    await p.h.advanceTo(T0 + 29_999);
    expect(p.openTo(A)).toEqual([]);
    await p.h.advanceTo(T0 + 30_000);
    expect(p.openTo(A).map((d) => [d.taskId, d.attemptNumber, d.at])).toEqual(
      expect.arrayContaining([
        [first!.taskId, 2, T0 + 30_000],
        [later[0]!.taskId, 1, T0 + 30_000],
        [later[1]!.taskId, 1, T0 + 30_000],
      ]),
    );
  });

  it('holds only its own task when retryAfterHoldsTarget is off', async () => {
    p = await ProtectedHarness.open({ defaults: only({ retryAfterHoldsTarget: false }) });
    await p.insert(p.task(`${A}/hook`));
    await p.answer(p.openTo(A), 503, { 'retry-after': '30' });
    await p.insert(p.task(`${A}/hook`));
    expect(p.openTo(A)).toHaveLength(1);
    expect(p.events).toEqual([]);
  });
});

describe('adaptive throttling (AIMD)', () => {
  const ADAPTIVE = { enabled: true, decreaseFactor: 0.5, decreaseIntervalMs: 500, increasePerSecond: 10, minRatePerSecond: 1 };

  it('halves the allowed rate on a 429 (from the configured limit, at most every 500 ms), raises it by 10/s each quiet second, and lifts it at the limit', async () => {
    p = await ProtectedHarness.open({ defaults: only({ adaptive: ADAPTIVE, rateLimit: { ratePerSecond: 40, burst: 40 } }) });
    const call = async (at: number, status: number) => {
      await p.h.advanceTo(at);
      await p.insert(p.task(`${A}/hook`, { policy: { ...p.task(A).policy!, maxAttempts: 1 } }));
      await p.answer(p.openTo(A), status);
    };
    await call(T0, 429);
    // The configured limit was written when the target was first seen (T0); the next write waits 200 ms.
    expect(await storedRate()).toBe(40);
    await p.h.advanceTo(T0 + 199);
    expect(await storedRate()).toBe(40);
    await p.h.advanceTo(T0 + 200);
    expect(await p.h.store.admin.getTarget(p.ref(A), T0 + 200)).toMatchObject({ ratePerSecond: 20, burst: 2 });
    expect((await p.first.protection.getTarget(p.ref(A)))?.allowedRatePerSecond).toBe(20);

    await call(T0 + 300, 429); // within 500 ms of the last decrease: the same burst of answers
    await p.h.advance(200);
    expect(await storedRate()).toBe(20);
    await call(T0 + 600, 429);
    await p.h.advance(200);
    expect(await storedRate()).toBe(10);

    await call(T0 + 1_600, 200); // one quiet second
    await p.h.advance(200);
    expect(await storedRate()).toBe(20);
    await call(T0 + 3_700, 200); // two more: 40, the configured limit, where the adaptive limit is lifted
    await p.h.advance(200);
    expect(await p.h.store.admin.getTarget(p.ref(A), p.h.clock.now())).toMatchObject({ ratePerSecond: 40, burst: 40 });
    expect((await p.first.protection.getTarget(p.ref(A)))?.allowedRatePerSecond).toBeNull();
  });

  it('without a configured limit, starts from the rate it dispatched at over the last second, and lifts the limit after 30 s without a 429', async () => {
    p = await ProtectedHarness.open({ defaults: only({ adaptive: ADAPTIVE }), engine: { concurrency: 64, claimBatchSize: 64 } });
    await p.insert(...Array.from({ length: 30 }, () => p.task(`${A}/hook`)));
    const calls = p.openTo(A);
    await p.answer(calls.slice(0, 29), 200);
    await p.h.advanceTo(T0 + 500);
    await p.answer(calls.slice(29), 429);
    expect(await storedRate()).toBe(15);
    expect(await p.h.store.admin.getTarget(p.ref(A), T0 + 500)).toMatchObject({ burst: 2, maxInFlight: null });

    // Raised every quiet second while there is traffic, and lifted once it has not been needed for 30 s.
    await p.h.advanceTo(T0 + 10_500);
    await p.answer(p.openTo(A), 200);
    await p.insert(p.task(`${A}/hook`));
    await p.answer(p.openTo(A), 200);
    await p.h.advance(200);
    expect(await storedRate()).toBe(115);
    await p.h.advanceTo(T0 + 30_500);
    await p.insert(p.task(`${A}/hook`));
    await p.answer(p.openTo(A), 200);
    await p.h.advance(200);
    expect(await storedRate()).toBeNull();
  });

  it('a bare 503 lowers nothing (it may be one key not ready, or a share of calls failing); a 503 with Retry-After does', async () => {
    p = await ProtectedHarness.open({ defaults: only({ adaptive: ADAPTIVE, rateLimit: { ratePerSecond: 40, burst: 40 } }) });
    const once = { policy: { ...p.task(A).policy!, maxAttempts: 1 } };
    for (let i = 0; i < 5; i++) {
      await p.h.advanceTo(T0 + i * 600);
      await p.insert(p.task(`${A}/hook`, once));
      await p.answer(p.openTo(A), 503);
    }
    await p.h.advance(200);
    expect(await storedRate()).toBe(40);
    expect((await p.first.protection.getTarget(p.ref(A)))?.allowedRatePerSecond).toBeNull();

    await p.insert(p.task(`${A}/hook`, once));
    await p.answer(p.openTo(A), 503, { 'retry-after': '0' });
    await p.h.advance(200);
    expect(await storedRate()).toBe(20);
  });
});
