import { describe, expect, it } from 'vitest';
import { checkedHex, hexBytes } from '../src/backends/sql/digest-bytes.js';
import { requestHashOf } from './fixtures/tasks.js';

describe('the request hash as bytes (codec hex)', () => {
  it('gives the bytes of lower-case hex, which read back as the same text', () => {
    const hash = requestHashOf('a request');
    const bytes = hexBytes(hash, 'request_hash');
    expect(bytes).toHaveLength(32);
    expect(bytes.toString('hex')).toBe(hash);
    expect(hexBytes('00ff00', 'request_hash')).toEqual(Buffer.from([0, 255, 0]));
  });

  it('refuses, naming the column, text whose bytes would read back as other text', () => {
    // Upper case reads back lower; an odd digit or a non-hex character would be dropped by Buffer.from.
    for (const text of ['', 'ABCD', 'abc', 'zz', 'ab cd', `${requestHashOf('x')}g`]) {
      expect(() => hexBytes(text, 'request_hash'), text).toThrow(`request_hash: expected lower-case hex digits in pairs, got ${JSON.stringify(text)}.`);
      expect(() => checkedHex(text, 'request_hash'), text).toThrow(/^request_hash: /);
    }
  });
});
