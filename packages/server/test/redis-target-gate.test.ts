import { readFileSync } from 'node:fs';
import { seededRandom } from '@retryd/core/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RetryTask } from '../src/domain/task.js';
import { PartitionKeys } from '../src/backends/redis/keys.js';
import { RedisStore } from '../src/backends/redis/redis-store.js';
import type { TargetRef } from '../src/store/store.js';
import { T0, finalOutcome, makeAttempt, makeTask, retryOutcome } from './fixtures/tasks.js';
import { REDIS_URL, dropPrefixes } from './redis-harness.js';
import { admin, closeOpened, expectIndexesExact, nextTokenAt, opened } from './redis-store-harness.js';
import { waitFor } from './wait-for.js';

// The Redis store's target gate (lua/includes/target-gate.lua): its numbers on Redis's own Lua, the ready index kept
// exact through limits, shared limits under concurrent claims from two instances and across tenants, and wake-ups
// when a slot frees.

afterAll(dropPrefixes);
afterEach(closeOpened);

const A = 'https://a.example.com';
const B = 'https://b.example.com';
const lease = { leaseMs: 60_000, workerId: 'w' };
const at = (targetKey: string, tenantId = 'default'): TargetRef => ({ tenantId, targetKey });
const tasksFor = (origin: string, n: number, tenantId = 'default', due = T0) =>
  Array.from({ length: n }, (_, i) => makeTask({ tenantId, targetUrl: `${origin}/x`, nextAttemptAt: due + i / 1_000 }));
const GATE_LUA = readFileSync(new URL('../src/backends/redis/lua/includes/target-gate.lua', import.meta.url), 'utf8');

describe('Redis store: the target gate', () => {
  it("writes computed numbers that read back exactly, and finds the next token as the suite's own arithmetic does", async () => {
    const client = admin();
    const random = seededRandom(7);
    const values = Array.from({ length: 400 }, (_, i) => {
      const x = [T0 + random() * 1e7, random() * 10 - 5, random() * 1e-6, 1e300 * random(), -T0 * random()][i % 5] as number;
      return x;
    });
    const formatted = (await client.eval(
      `${GATE_LUA}\nlocal out = {}\nfor i, a in ipairs(ARGV) do\n  local x = tonumber(a)\n  out[#out + 1] = format_num(x)\n  out[#out + 1] = format_num(x / 3)\n  out[#out + 1] = format_num(x * 0.1 - 1)\nend\nreturn out`,
      0,
      ...values.map(String),
    )) as string[];
    values.forEach((x, i) => {
      expect(Number(formatted[3 * i])).toBe(x);
      expect(Number(formatted[3 * i + 1])).toBe(x / 3);
      expect(Number(formatted[3 * i + 2])).toBe(x * 0.1 - 1);
    });
    // Shortest where it can be: a whole millisecond is written as one.
    expect(formatted[0]?.length).toBeLessThanOrEqual(17 + 8);
    const whole = (await client.eval(`${GATE_LUA}\nreturn format_num(tonumber(ARGV[1]) + 101)`, 0, String(T0))) as string;
    expect(whole).toBe(String(T0 + 101));

    const buckets = Array.from({ length: 300 }, () => ({
      tokens: random() * 4 - 3,
      tokensAt: T0 + Math.floor(random() * 1e6) + random(),
      rate: [0.3, 1, 3, 7, 10, 33.3, 1_000, 12_345.678][Math.floor(random() * 8)] as number,
    }));
    const times = (await client.eval(
      `${GATE_LUA}\nlocal out = {}\nfor i = 1, #ARGV, 3 do\n  local gate = { tokens = tonumber(ARGV[i]), tokensAt = ARGV[i + 1], rate = tonumber(ARGV[i + 2]), burst = 1 }\n  out[#out + 1] = format_num(next_token_at(gate))\nend\nreturn out`,
      0,
      ...buckets.flatMap((b) => [String(b.tokens), String(b.tokensAt), String(b.rate)]),
    )) as string[];
    buckets.forEach((b, i) => expect(Number(times[i])).toBe(nextTokenAt(b.tokens, b.tokensAt, b.rate)));
  });

  it('aims the next due time at the exact time of the next whole token, and claims nothing a moment before it', async () => {
    const store = await opened();
    await store.insertTasks(tasksFor(A, 10));
    await store.limitTarget(at(A), { ratePerSecond: 10, burst: 3, maxInFlight: null }, T0);
    expect(await store.claimDue(T0 + 1, { limit: 10, ...lease })).toHaveLength(3);
    expect(await store.nextDueAt()).toBe(T0 + 101);
    // 1,000 / 3 ms per token is no whole number: the store aims at the least time the bucket holds one.
    await store.limitTarget(at(A), { ratePerSecond: 3, burst: 1, maxInFlight: null }, T0 + 200);
    expect(await store.claimDue(T0 + 200, { limit: 10, ...lease })).toHaveLength(1);
    const next = nextTokenAt(0, T0 + 200, 3);
    expect(await store.nextDueAt()).toBe(next);
    expect(await store.admin.getTarget(at(A), T0 + 201)).toMatchObject({ throttledUntil: next, ratePerSecond: 3, burst: 1, inFlight: 4 });
    expect(await store.claimDue(next - 0.001, { limit: 10, ...lease })).toEqual([]);
    expect(await store.claimDue(next, { limit: 10, ...lease })).toHaveLength(1);
  });

  it('keeps the ready index and the in-flight counts exact through limits, hand-offs, releases, holds and lifting', async () => {
    const store = await opened();
    const client = admin();
    const k = new PartitionKeys(store.prefix, 'default');
    await store.insertTasks([...tasksFor(A, 6), ...tasksFor(B, 3)]);
    await store.limitTarget(at(A), { ratePerSecond: 10, burst: 2, maxInFlight: 3 }, T0);
    await expectIndexesExact(client, k);
    const handedOff = makeTask({ targetUrl: `${A}/h`, status: 'IN_FLIGHT', leaseOwner: 'local', leaseExpiresAt: T0 + 500, fencingToken: 1 });
    await store.insertTasks([handedOff]);
    await expectIndexesExact(client, k);
    const first = await store.claimDue(T0 + 1, { limit: 10, ...lease });
    expect(first.filter((t) => t.targetKey === A)).toHaveLength(2);
    await expectIndexesExact(client, k);
    // At its in-flight limit (two claimed, one handed off) and out of tokens: A is out of `ready`.
    expect(await client.zscore(k.ready, A)).toBeNull();
    const [a1, a2] = first.filter((t) => t.targetKey === A) as [RetryTask, RetryTask];
    await store.completeAttempts([{ ...a1, attempt: makeAttempt(a1), next: retryOutcome(a1, T0 + 50) }], T0 + 2);
    await expectIndexesExact(client, k);
    expect(await client.zscore(k.ready, A)).toBe(String(T0 + 101));
    await store.releaseLeases([a2], T0 + 3);
    await expectIndexesExact(client, k);
    await store.holdTarget(at(A), T0 + 900, T0 + 4);
    await store.holdTarget(at(A), T0 + 300, T0 + 5);
    await expectIndexesExact(client, k);
    expect(await client.zscore(k.ready, A)).toBe(String(T0 + 900));
    const reaped = { ...handedOff, requireLeaseExpiredBy: T0 + 600, next: finalOutcome(handedOff, 'SUCCEEDED') };
    expect((await store.completeAttempts([reaped], T0 + 600))[0]?.kind).toBe('applied');
    await store.releaseTarget(at(A), T0 + 601);
    await expectIndexesExact(client, k);
    expect(await store.claimDue(T0 + 601, { limit: 10, ...lease })).toHaveLength(2);
    await expectIndexesExact(client, k);
    await store.limitTarget(at(A), { ratePerSecond: null, burst: null, maxInFlight: null }, T0 + 602);
    await expectIndexesExact(client, k);
    expect(await client.hgetall(k.gate(A))).toEqual({ inFlight: '2' });
    expect(await store.claimDue(T0 + 602, { limit: 10, ...lease })).toHaveLength(4);
    await expectIndexesExact(client, k);
  });

  it('never reads the queue of a target out of tokens or at its in-flight limit, whatever the claim', async () => {
    const store = await opened();
    const C = 'https://c.example.com';
    const client = admin();
    const k = new PartitionKeys(store.prefix, 'default');
    await store.insertTasks([...tasksFor(A, 5), ...tasksFor(B, 5), ...tasksFor(C, 20)]);
    await store.limitTarget(at(A), { ratePerSecond: 1, burst: 1, maxInFlight: null }, T0);
    await store.limitTarget(at(B), { ratePerSecond: null, burst: null, maxInFlight: 1 }, T0);
    expect((await store.claimDue(T0, { limit: 3, ...lease })).map((t) => t.targetKey)).toEqual([A, B, C]);
    // While they are poisoned, any command that reads A's or B's queue fails with WRONGTYPE.
    for (const target of [A, B]) {
      await client.rename(k.queue(target), `${k.queue(target)}:aside`);
      await client.set(k.queue(target), 'not a sorted set');
    }
    const claimed = await store.claimDue(T0 + 500, { limit: 30, ...lease });
    expect(claimed.map((t) => t.targetKey)).toEqual(Array<string>(19).fill(C));
    expect(await store.admin.getTarget(at(B), T0 + 500).catch((e: unknown) => e)).toBeInstanceOf(Error);
    for (const target of [A, B]) {
      await client.del(k.queue(target));
      await client.rename(`${k.queue(target)}:aside`, k.queue(target));
    }
    // A's next token; B waits for its attempt to end.
    expect(await store.nextDueAt()).toBe(T0 + 1_000);
  });

  it('holds two instances claiming at once, over several tenants, to one shared bucket and one in-flight limit', async () => {
    const one = await opened();
    const two = await opened(new RedisStore({ url: REDIS_URL, prefix: one.prefix }));
    await one.insertTasks([...tasksFor(A, 50, 'limited'), ...tasksFor(B, 50, 'limited'), ...tasksFor(A, 50, 'free')]);
    // A bucket of 7 that refills once a day, and at most 4 of B in flight.
    await one.limitTarget(at(A, 'limited'), { ratePerSecond: 1 / 86_400, burst: 7, maxInFlight: null }, T0);
    await two.limitTarget(at(B, 'limited'), { ratePerSecond: null, burst: null, maxInFlight: 4 }, T0);
    const claims = await Promise.all(
      Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? one : two).claimDue(T0 + 1 + (i % 3), { limit: 3, ...lease })),
    );
    const claimed = claims.flat();
    const count = (tenantId: string, targetKey: string) => claimed.filter((t) => t.tenantId === tenantId && t.targetKey === targetKey).length;
    expect(count('limited', A)).toBe(7);
    expect(count('limited', B)).toBe(4);
    expect(new Set(claimed.map((t) => t.taskId)).size).toBe(claimed.length);
    expect(await one.admin.getTarget(at(B, 'limited'), T0 + 5)).toMatchObject({ inFlight: 4, dueTasks: 46, throttledUntil: null });
    expect(await two.admin.getTarget(at(A, 'limited'), T0 + 5)).toMatchObject({ inFlight: 7, dueTasks: 43 });
    for (const tenant of ['limited', 'free']) await expectIndexesExact(admin(), new PartitionKeys(one.prefix, tenant));
  });

  it('wakes other instances when an attempt frees a slot of a target with due tasks, and when a limit is lifted', async () => {
    const one = await opened();
    const two = await opened(new RedisStore({ url: REDIS_URL, prefix: one.prefix }));
    let wakes = 0;
    one.onDue(() => wakes++);
    await two.limitTarget(at(A), { ratePerSecond: null, burst: null, maxInFlight: 1 }, T0);
    await two.insertTasks(tasksFor(A, 3));
    await waitFor('the insert wake-up', () => wakes === 1);
    const [held] = await two.claimDue(T0 + 1, { limit: 10, ...lease });
    if (held === undefined) throw new Error('expected a claim');
    await two.completeAttempts([{ ...held, attempt: makeAttempt(held), next: finalOutcome(held, 'SUCCEEDED') }], T0 + 2);
    await waitFor('the freed-slot wake-up', () => wakes === 2);
    await two.claimDue(T0 + 3, { limit: 10, ...lease });
    await two.limitTarget(at(A), { ratePerSecond: null, burst: null, maxInFlight: null }, T0 + 4);
    await waitFor('the lifted-limit wake-up', () => wakes === 3);
    // Setting a limit that changes nothing claimable wakes nobody.
    await two.limitTarget(at(A), { ratePerSecond: 100, burst: 5, maxInFlight: null }, T0 + 5);
    await two.ping();
    expect(wakes).toBe(3);
  });

  it('refuses limits that would break the bucket, naming the field', async () => {
    const store = await opened();
    await expect(store.limitTarget(at(A), { ratePerSecond: 0, burst: null, maxInFlight: null }, T0)).rejects.toThrow(/`ratePerSecond`/);
    await expect(store.limitTarget(at(A), { ratePerSecond: 1, burst: 0.5, maxInFlight: null }, T0)).rejects.toThrow(/`burst`/);
    await expect(store.limitTarget(at(A), { ratePerSecond: null, burst: null, maxInFlight: 1.5 }, T0)).rejects.toThrow(/`maxInFlight`/);
    expect(await store.admin.getTarget(at(A), T0)).toBeUndefined();
  });
});
