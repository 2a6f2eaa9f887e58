import { describe, expect, it } from 'vitest';
import { memoByString } from '../src/shared/string-memo.js';

describe('memoByString', () => {
  it('computes each string once, remembers an undefined answer too, and starts afresh when full', () => {
    const calls: string[] = [];
    const lengthOf = memoByString((text) => {
      calls.push(text);
      return text === '' ? undefined : text.length;
    }, 2);
    expect([lengthOf('ab'), lengthOf('ab'), lengthOf(''), lengthOf('')]).toEqual([2, 2, undefined, undefined]);
    expect(calls).toEqual(['ab', '']);
    // A third string fills it past its limit: what it knew is dropped, and asked again.
    expect(lengthOf('abc')).toBe(3);
    expect(lengthOf('ab')).toBe(2);
    expect(calls).toEqual(['ab', '', 'abc', 'ab']);
  });
});
