import { describe, expect, it } from 'vitest';
import { storedTargetUrl, targetKeyOf, targetUrlOfStored } from '../src/domain/target-key.js';

describe('a task URL kept after its target key', () => {
  const key = 'https://api.example.com';

  it('keeps the text after the key when a path, query or fragment follows it, and reads it back whole', () => {
    for (const [url, stored] of [
      [`${key}/charges?x=1`, '/charges?x=1'],
      [`${key}/`, '/'],
      [`${key}?q`, '?q'],
      [`${key}#f`, '#f'],
    ] as const) {
      expect(storedTargetUrl(url, key, 'target_url')).toBe(stored);
      expect(targetUrlOfStored(stored, key)).toBe(url);
    }
  });

  it('keeps a URL whole when it does not begin with its key followed by a path, query or fragment', () => {
    for (const url of [key, 'https://api.example.com.evil.test/x', 'https://user@api.example.com/x', 'HTTPS://API.example.com/x', 'https://api.example.com:443/x']) {
      expect(storedTargetUrl(url, key, 'target_url')).toBe(url);
      expect(targetUrlOfStored(url, key)).toBe(url);
    }
  });

  it('round-trips every normalised URL with its own origin', () => {
    for (const raw of ['http://127.0.0.1:9999/w2-backlog', 'https://[::1]:8443/a/b?c=d#e', 'http://example.com', 'https://xn--bcher-kva.example/ü?ä=1']) {
      const url = new URL(raw).href;
      const origin = targetKeyOf(url);
      const stored = storedTargetUrl(url, origin, 'target_url');
      expect(stored.length).toBeLessThan(url.length);
      expect(targetUrlOfStored(stored, origin)).toBe(url);
    }
  });

  it('refuses a URL that is not absolute, naming the column', () => {
    for (const url of ['/relative', '?q', '#f']) {
      expect(() => storedTargetUrl(url, key, 'target_url')).toThrow(/^target_url: expected an absolute URL, got "/);
    }
  });
});
