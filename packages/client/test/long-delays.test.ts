import { MAX_POLICY_MS } from '@retryd/core';
import { describe, expect, it, vi } from 'vitest';
import { LONG_DELAY_MS as LONG, useFakeTimersInEachTest } from '../../core/test/fake-long-timers.js';
import { RetrydClient, RetryQueue } from '../src/index.js';

// Delays past 2^31 − 1 ms (24.8 days) on the default clock, core's systemClock.
const fixed = { backoffType: 'FIXED', initialDelayMs: LONG, maxDelayMs: LONG, multiplier: 1, jitterType: 'NONE', maxAttempts: 2 } as const;
useFakeTimersInEachTest();

describe('long delays on the system clock', () => {
  it('RetryQueue arms one timer for a 3e9 ms retry and sends it then, not 1 ms later and again', async () => {
    let sent = 0;
    const queue = await RetryQueue.open({
      policy: { ...fixed, totalBudgetMs: MAX_POLICY_MS },
      send: async () => {
        sent++;
        return new Response(null, { status: 503 });
      },
    });
    try {
      await queue.enqueue({ url: 'https://api.example.com/events', method: 'POST', body: '{}' });
      await vi.advanceTimersByTimeAsync(500); // the bug: a 1 ms timer re-armed 382 times in 500 ms
      expect(sent).toBe(1);
      expect(vi.getTimerCount()).toBe(1);
      await vi.advanceTimersByTimeAsync(LONG - 501);
      expect(sent).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(sent).toBe(2);
    } finally {
      queue.close();
    }
  });

  it("RetrydClient's default sleep waits a 3e9 ms retry of its own whole", async () => {
    const urls: string[] = [];
    const client = new RetrydClient({
      url: 'http://retryd.test',
      apiKey: 'rtd_k',
      retry: fixed,
      fetch: async (input) => {
        urls.push(String(input));
        return urls.length === 1 ? new Response('', { status: 503 }) : new Response('{"taskId":"t1"}', { status: 200 });
      },
    });
    const task = client.getTask('t1');
    await vi.advanceTimersByTimeAsync(LONG - 1);
    expect(urls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await task).toEqual({ taskId: 't1' });
    expect(urls).toHaveLength(2);
  });
});
