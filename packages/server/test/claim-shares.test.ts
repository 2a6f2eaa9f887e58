import { describe, expect, it } from 'vitest';
import { claimShares, dealRoundRobin, ringOrder } from '../src/store/claim-shares.js';

const q = (tenantId: string, targetKey: string) => ({ tenantId, targetKey });

describe('the claim sharing rule', () => {
  it('orders queues by tenant then target, starting after the cursor and wrapping round', () => {
    const queues = [q('b', 'https://x'), q('a', 'https://y'), q('a', 'https://x'), q('c', 'http://z')];
    expect(ringOrder(queues).map((x) => `${x.tenantId} ${x.targetKey}`)).toEqual(['a https://x', 'a https://y', 'b https://x', 'c http://z']);
    expect(ringOrder(queues, q('a', 'https://y')).map((x) => `${x.tenantId} ${x.targetKey}`)).toEqual([
      'b https://x',
      'c http://z',
      'a https://x',
      'a https://y',
    ]);
    // A cursor past the last queue, or one no longer ready, still starts at the next queue in order.
    expect(ringOrder(queues, q('zz', '')).map((x) => x.tenantId)).toEqual(['a', 'a', 'b', 'c']);
    expect(ringOrder(queues, q('a', 'https://xx')).map((x) => `${x.tenantId} ${x.targetKey}`)[0]).toBe('a https://y');
  });

  it('offers each considered queue ceil(limit / considered) slots, and considers at most limit queues', () => {
    expect(claimShares(0, 8)).toEqual({ considered: 0, share: 0 });
    expect(claimShares(1, 8)).toEqual({ considered: 1, share: 8 });
    expect(claimShares(3, 8)).toEqual({ considered: 3, share: 3 });
    expect(claimShares(20, 8)).toEqual({ considered: 8, share: 1 });
  });

  it('deals round robin up to the limit, skipping queues that ran out', () => {
    expect(dealRoundRobin([['a1', 'a2', 'a3'], ['b1'], ['c1', 'c2']], 5)).toEqual(['a1', 'b1', 'c1', 'a2', 'c2']);
    expect(dealRoundRobin([['a1', 'a2', 'a3'], ['b1']], 10)).toEqual(['a1', 'b1', 'a2', 'a3']);
    expect(dealRoundRobin([[], []], 3)).toEqual([]);
  });
});
