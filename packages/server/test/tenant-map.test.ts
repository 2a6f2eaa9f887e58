import { describe, expect, it } from 'vitest';
import { TenantMap } from '../src/domain/tenant-map.js';

describe('TenantMap', () => {
  it('keeps a value per tenant and key: the same key of two tenants is two entries, null a key like any other', () => {
    const map = new TenantMap<string | null, number>();
    map.set('a', 'k', 1);
    map.set('b', 'k', 2);
    map.set('a', null, 3);
    expect([map.get('a', 'k'), map.get('b', 'k'), map.get('a', null), map.get('b', null)]).toEqual([1, 2, 3, undefined]);
    // A tenant and key that would join into another's (`a\0b` + `c` against `a` + `b\0c`) stay apart.
    map.set('x\u0000y', 'z', 4);
    expect(map.get('x', 'y\u0000z')).toBeUndefined();
    expect(map.has('a', 'k')).toBe(true);
    map.delete('a', 'k');
    expect(map.has('a', 'k')).toBe(false);
    expect(map.get('a', null)).toBe(3);
    map.deleteTenant('a');
    expect(map.get('a', null)).toBeUndefined();
    expect(map.get('b', 'k')).toBe(2);
    map.delete('nobody', 'k');
    expect(map.has('nobody', 'k')).toBe(false);
  });
});
