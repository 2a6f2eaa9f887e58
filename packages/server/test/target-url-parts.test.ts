import { describe, expect, it } from 'vitest';
import { MAX_PARSED_TARGET_URLS, TargetUrlParser } from '../src/engine/target-url-parts.js';

describe('TargetUrlParser', () => {
  it('gives the origin and the path with its query, as undici takes them, and parses each URL once', () => {
    const parser = new TargetUrlParser();
    const parts = parser.parse('https://api.example.com:8443/orders/7?expand=items#frag');
    expect(parts).toEqual({ protocol: 'https:', origin: 'https://api.example.com:8443', path: '/orders/7?expand=items' });
    expect(parser.parse('https://api.example.com:8443/orders/7?expand=items#frag')).toBe(parts);
    expect(parser.parse('http://127.0.0.1:9000')).toEqual({ protocol: 'http:', origin: 'http://127.0.0.1:9000', path: '/' });
    expect(parser.parse('ftp://files.example.com/a').protocol).toBe('ftp:');
  });

  it('throws for what is not a URL, every time, keeping nothing of it', () => {
    const parser = new TargetUrlParser();
    for (let i = 0; i < 2; i++) expect(() => parser.parse('not a url')).toThrow(expect.objectContaining({ code: 'ERR_INVALID_URL' }));
  });

  it(`keeps at most ${MAX_PARSED_TARGET_URLS} URLs: past that, it forgets them all and parses again`, () => {
    const parser = new TargetUrlParser();
    const first = parser.parse('https://a.example.com/0');
    for (let i = 1; i < MAX_PARSED_TARGET_URLS; i++) parser.parse(`https://a.example.com/${i}`);
    expect(parser.parse('https://a.example.com/0')).toBe(first);
    parser.parse('https://a.example.com/one-more');
    const again = parser.parse('https://a.example.com/0');
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });
});
