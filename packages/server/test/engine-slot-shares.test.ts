import { describe, expect, it } from 'vitest';
import { defaultPerTarget, defaultPerTenant, SlotShares, worthGrowing } from '../src/engine/slot-shares.js';
import { resolveEngineOptions } from '../src/engine/engine-options.js';
import type { Store } from '../src/store/store.js';

const ref = (tenantId: string, targetKey = 'https://x.example') => ({ tenantId, targetKey });
function holding(shares: SlotShares, tenantId: string, n: number, targetKey?: string): void {
  for (let i = 0; i < n; i++) shares.take(ref(tenantId, targetKey));
}

describe('SlotShares', () => {
  it('keeps a sixteenth of the slots from any one target and a thirty-second from any one tenant by default', () => {
    expect([defaultPerTarget(256), defaultPerTenant(256)]).toEqual([240, 248]);
    expect([defaultPerTarget(32), defaultPerTenant(32)]).toEqual([30, 31]);
    // Too few slots to keep any: all of them.
    expect([defaultPerTarget(8), defaultPerTenant(8)]).toEqual([8, 8]);
    const store = {} as Store;
    expect(resolveEngineOptions({ store })).toMatchObject({ maxInFlightPerTenant: 248, maxInFlightPerTarget: 240, maxRetryAfterMs: 3_600_000 });
    // Above the slots there are: all of them.
    expect(resolveEngineOptions({ store, concurrency: 10, maxInFlightPerTarget: 50 })).toMatchObject({ maxInFlightPerTarget: 10 });
    expect(() => resolveEngineOptions({ store, maxInFlightPerTenant: 0 })).toThrow('Expected `maxInFlightPerTenant` to be an integer >= 1, got 0.');
  });

  it('binds nothing while no one is near its bound: the store takes its usual path', () => {
    const shares = new SlotShares({ concurrency: 256, perTenant: 248, perTarget: 240 });
    holding(shares, 'a', 100);
    expect(shares.rooms(128, false)).toBeUndefined();
    expect(shares.growth(128)).toBeUndefined();
  });

  it('gives a lone tenant all but the reserve, and a newcomer its share of what is free at once', () => {
    const shares = new SlotShares({ concurrency: 256, perTenant: 248, perTarget: 240 });
    holding(shares, 'a', 240);
    expect(shares.reserve).toBe(16);
    expect(shares.rooms(16, false)).toEqual({ tenant: 16, target: 16, tenants: new Map([['a', 8]]), targets: new Map([['a', new Map([['https://x.example', 0]])]]) });
    expect(shares.admits(ref('a'))).toBe(false);
    expect(shares.admits(ref('a', 'https://y.example'))).toBe(true);
    expect(shares.admits(ref('b'))).toBe(true);
  });

  it('passes a second time only for one that filled its share or was kept out by it', () => {
    // A lone tenant's share is every slot: a newcomer would be offered less than it may grow to, a holder not.
    const shares = new SlotShares({ concurrency: 32, perTenant: 31, perTarget: 30 });
    holding(shares, 'a', 8);
    const growth = shares.growth(24)!;
    expect(growth).toMatchObject({ tenants: new Map([['a', null]]), newTenant: 16 });
    const claimed = (tenantId: string, n: number) => Array.from({ length: n }, () => ref(tenantId));
    expect(worthGrowing(growth, claimed('a', 22))).toBe(false);
    expect(worthGrowing(growth, claimed('b', 15))).toBe(false);
    expect(worthGrowing(growth, claimed('b', 16))).toBe(true);
  });

  it('offers beyond the share only in the second pass, and never beyond the bound or into the reserve', () => {
    const shares = new SlotShares({ concurrency: 32, perTenant: 31, perTarget: 30 });
    holding(shares, 'a', 16, 'https://a.example');
    holding(shares, 'b', 8, 'https://b.example');
    // Shares of 16: a has none left; b (8 left) and a newcomer (11) are not bound below the claim's 8.
    expect(shares.rooms(8, false)).toEqual({ tenant: 8, target: 8, tenants: new Map([['a', 0]]), targets: new Map([['a', new Map([['https://a.example', 0]])]]) });
    const growth = shares.growth(8)!;
    expect(growth.tenants).toEqual(new Map([['a', 0], ['b', null]]));
    // a was kept out by its share but may grow: a second pass is worth it, even after a claim that took nothing.
    expect(worthGrowing(growth, [])).toBe(true);
    // Beyond its share, a may take what keeps 30 (a target's bound) in flight: 6 more.
    expect(shares.rooms(8, true)).toEqual({ tenant: 8, target: 8, tenants: new Map([['a', 7]]), targets: new Map([['a', new Map([['https://a.example', 6]])]]) });
    shares.release(ref('a', 'https://a.example'));
    shares.release(ref('nobody'));
    expect(shares.total).toBe(23);
  });
});
