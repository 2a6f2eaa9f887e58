import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, deriveIdempotencyKey } from '../src/idempotency/derive-idempotency-key.js';

const key = (method: string, url: string | URL, body?: unknown) => deriveIdempotencyKey({ method, url, body });

/** Rebuilds `value` with every object's keys in the order `picks` chooses. */
function shuffleKeys(value: unknown, picks: number[]): unknown {
  if (Array.isArray(value)) return value.map((item: unknown) => shuffleKeys(item, picks));
  if (typeof value !== 'object' || value === null) return value;
  const remaining = Object.entries(value);
  const shuffled: [string, unknown][] = [];
  let i = 0;
  while (remaining.length > 0) {
    const [entry] = remaining.splice((picks[i++ % Math.max(1, picks.length)] ?? 0) % remaining.length, 1);
    if (entry) shuffled.push([entry[0], shuffleKeys(entry[1], picks)]);
  }
  // fromEntries, not assignment: fast-check's JSON includes "__proto__" keys, which must stay own data.
  return Object.fromEntries(shuffled);
}

describe('deriveIdempotencyKey', () => {
  it('is 32 lower-case hex characters', () => {
    expect(key('POST', 'https://a.com/orders', { sku: 'A' })).toMatch(/^[0-9a-f]{32}$/);
    expect(key('GET', 'http://a.com')).toMatch(/^[0-9a-f]{32}$/);
  });

  it('is SHA-256 of METHOD, URL and body joined by line feeds (keys are persisted: the format must not drift)', () => {
    const expected = createHash('sha256').update('POST\nhttps://a.com/x?a=1&b=2\n{"a":1,"b":[2]}').digest('hex');
    expect(key('post', 'https://A.com:443/x/?b=2&a=1#frag', { b: [2], a: 1 })).toBe(expected.slice(0, 32));
  });

  it('is stable: the same request gives the same key every time', () => {
    const make = () => key('PUT', 'https://api.example.com/v1/items/42?x=1', { name: 'n', tags: ['a', 'b'] });
    expect(make()).toBe(make());
  });

  describe('gives one key for spellings of the same request', () => {
    const base = key('POST', 'https://api.example.com/orders?a=1&b=2', { sku: 'A', qty: 1 });
    it.each([
      ['method case', 'post', 'https://api.example.com/orders?a=1&b=2'],
      ['query order', 'POST', 'https://api.example.com/orders?b=2&a=1'],
      ['trailing slash', 'POST', 'https://api.example.com/orders/?a=1&b=2'],
      ['several trailing slashes', 'POST', 'https://api.example.com/orders///?a=1&b=2'],
      ['default port', 'POST', 'https://api.example.com:443/orders?a=1&b=2'],
      ['host case', 'POST', 'https://API.Example.COM/orders?a=1&b=2'],
      ['scheme case', 'POST', 'HTTPS://api.example.com/orders?a=1&b=2'],
      ['fragment', 'POST', 'https://api.example.com/orders?a=1&b=2#section'],
      ['dot segments', 'POST', 'https://api.example.com/x/../orders?a=1&b=2'],
      ['a URL object', 'POST', new URL('https://api.example.com/orders?b=2&a=1')],
    ])('%s', (_why, method, url) => {
      expect(key(method, url, { qty: 1, sku: 'A' })).toBe(base);
    });

    it('the bare origin with and without "/"', () => {
      expect(key('GET', 'https://a.com')).toBe(key('GET', 'https://a.com/'));
      expect(key('GET', 'http://a.com:80')).toBe(key('GET', 'http://a.com/'));
    });

    it('repeated parameters sorted by value', () => {
      expect(key('GET', 'https://a.com/s?tag=b&tag=a&q=1')).toBe(key('GET', 'https://a.com/s?q=1&tag=a&tag=b'));
    });

    it('no body: undefined, null and the empty string', () => {
      const none = key('GET', 'https://a.com/x');
      expect(key('GET', 'https://a.com/x', null)).toBe(none);
      expect(key('GET', 'https://a.com/x', '')).toBe(none);
    });

    it('a body as text, as its UTF-8 bytes, or as data', () => {
      const text = key('POST', 'https://a.com/x', '{"a":1,"é":"ü"}');
      expect(key('POST', 'https://a.com/x', Buffer.from('{"a":1,"é":"ü"}'))).toBe(text);
      expect(key('POST', 'https://a.com/x', new TextEncoder().encode('{"a":1,"é":"ü"}'))).toBe(text);
      expect(key('POST', 'https://a.com/x', new TextEncoder().encode('{"a":1,"é":"ü"}').buffer)).toBe(text);
      expect(key('POST', 'https://a.com/x', { é: 'ü', a: 1 })).toBe(text);
    });

    it('a byte view hashes only its own bytes', () => {
      const bytes = Buffer.from('xxabcyy');
      expect(key('POST', 'https://a.com/x', bytes.subarray(2, 5))).toBe(key('POST', 'https://a.com/x', 'abc'));
      expect(key('POST', 'https://a.com/x', new DataView(bytes.buffer, bytes.byteOffset + 2, 3))).toBe(
        key('POST', 'https://a.com/x', 'abc'),
      );
    });

    it('a URLSearchParams body as the form it sends', () => {
      expect(key('POST', 'https://a.com/x', new URLSearchParams({ a: '1 2' }))).toBe(key('POST', 'https://a.com/x', 'a=1+2'));
    });
  });

  describe('gives different keys for different requests', () => {
    const base = key('POST', 'https://a.com/orders?a=1', { sku: 'A' });
    it.each([
      ['method', 'PUT', 'https://a.com/orders?a=1', { sku: 'A' }],
      ['path', 'POST', 'https://a.com/order?a=1', { sku: 'A' }],
      ['path case', 'POST', 'https://a.com/Orders?a=1', { sku: 'A' }],
      ['path depth', 'POST', 'https://a.com/orders/1?a=1', { sku: 'A' }],
      ['query value', 'POST', 'https://a.com/orders?a=2', { sku: 'A' }],
      ['no query', 'POST', 'https://a.com/orders', { sku: 'A' }],
      ['scheme', 'POST', 'http://a.com/orders?a=1', { sku: 'A' }],
      ['non-default port', 'POST', 'https://a.com:8443/orders?a=1', { sku: 'A' }],
      ['host', 'POST', 'https://b.com/orders?a=1', { sku: 'A' }],
      ['body value', 'POST', 'https://a.com/orders?a=1', { sku: 'B' }],
      ['body type', 'POST', 'https://a.com/orders?a=1', { sku: ['A'] }],
      ['no body', 'POST', 'https://a.com/orders?a=1', undefined],
    ])('%s', (_why, method, url, body) => {
      expect(key(method, url, body)).not.toBe(base);
    });

    it('text cannot move between the URL and the body', () => {
      expect(key('POST', 'https://a.com/x?q=1', '')).not.toBe(key('POST', 'https://a.com/x', '?q=1'));
      expect(key('POST', 'https://a.com/x', 'y')).not.toBe(key('POST', 'https://a.com/xy'));
    });

    it('array order in the body matters', () => {
      expect(key('POST', 'https://a.com/x', [1, 2])).not.toBe(key('POST', 'https://a.com/x', [2, 1]));
    });
  });

  it('property: the order of keys in the body never changes the key', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.array(fc.nat(20), { minLength: 1 }), (body, picks) => {
        expect(key('POST', 'https://a.com/x', shuffleKeys(body, picks))).toBe(key('POST', 'https://a.com/x', body));
      }),
    );
  });

  it('property: the order of query parameters never changes the key', () => {
    const param = fc.tuple(fc.string({ minLength: 1 }), fc.string());
    fc.assert(
      fc.property(fc.array(param, { maxLength: 6 }), (params) => {
        const url = (list: [string, string][]) => `https://a.com/x?${new URLSearchParams(list).toString()}`;
        expect(key('GET', url([...params].reverse()))).toBe(key('GET', url(params)));
      }),
    );
  });

  describe('refuses invalid input with a TypeError naming the field and the rule', () => {
    it.each(['not a url', '/orders', '', 'https://', 'http://a b.com/'])('url %j', (url) => {
      expect(() => key('GET', url)).toThrow(new TypeError(`url must be an absolute URL (WHATWG URL syntax), got ${JSON.stringify(url)}`));
    });

    it('a scheme other than http(s)', () => {
      expect(() => key('GET', 'ftp://a.com/f')).toThrow(new TypeError('url must use the http: or https: scheme, got "ftp://a.com/f"'));
    });

    it('a url that is neither a string nor a URL', () => {
      expect(() => key('GET', 42 as unknown as string)).toThrow(new TypeError('url must be a string or a URL, got 42'));
    });

    it.each(['', 'PO ST', 'GET\n', 'GÉT'])('method %j', (method) => {
      expect(() => key(method, 'https://a.com')).toThrow(
        new TypeError(`method must be an HTTP token (RFC 9110 §9.1), got ${JSON.stringify(method)}`),
      );
    });

    it('a body that JSON would silently turn into {}', () => {
      expect(() => key('POST', 'https://a.com', new Map([['a', 1]]))).toThrow(/cannot represent a Map at \$/);
      expect(() => key('POST', 'https://a.com', { items: [new Set([1])] })).toThrow(/a Set at \$\.items\[0\]/);
    });
  });
});

describe('canonicalJson', () => {
  it('sorts keys recursively and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: [true, { d: null, c: 'x' }] })).toBe('{"a":[true,{"c":"x","d":null}],"b":1}');
  });

  it('sorts by UTF-16 code units, as RFC 8785 does', () => {
    expect(canonicalJson({ b: 0, a: 0, B: 0, é: 0, '10': 0, '2': 0 })).toBe('{"10":0,"2":0,"B":0,"a":0,"b":0,"é":0}');
  });

  it('orders the members of small and large objects as Array.prototype.sort orders their names', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ unit: 'binary', maxLength: 6 }), { maxLength: 40 }), (names) => {
        const value = Object.fromEntries(names.map((name, i) => [name, i]));
        const sorted = Object.keys(value).sort();
        expect(canonicalJson(value)).toBe(`{${sorted.map((n) => `${JSON.stringify(n)}:${value[n] as number}`).join(',')}}`);
      }),
    );
  });

  it('follows JSON.stringify for dates, undefined, functions, non-finite numbers and -0', () => {
    const value = { d: new Date(0), u: undefined, f: () => 1, n: Number.NaN, i: -Infinity, z: -0, a: [undefined, () => 1] };
    expect(canonicalJson(value)).toBe('{"a":[null,null],"d":"1970-01-01T00:00:00.000Z","i":null,"n":null,"z":0}');
  });

  it('honours toJSON, and leaves out a member whose toJSON gives undefined', () => {
    expect(canonicalJson({ x: { toJSON: () => ({ z: 1, y: 2 }) }, gone: { toJSON: () => undefined } })).toBe('{"x":{"y":2,"z":1}}');
  });

  it('keeps "__proto__" as data and accepts null-prototype objects', () => {
    const obj = Object.assign(Object.create(null) as Record<string, unknown>, { b: 1 });
    const parsed: unknown = JSON.parse('{"a":2,"__proto__":{"x":1}}');
    expect(canonicalJson(parsed)).toBe('{"__proto__":{"x":1},"a":2}');
    expect(canonicalJson(obj)).toBe('{"b":1}');
  });

  it('escapes strings as JSON does', () => {
    expect(canonicalJson('a"b\\c\n\u0001\ud800')).toBe(JSON.stringify('a"b\\c\n\u0001\ud800'));
  });

  it('escapes member names as JSON does: quotes, backslashes, control characters, lone and paired surrogates', () => {
    const value = { plain: 1, 'q"': 2, 'b\\': 3, 'n\n': 4, 'lone\udc00': 5, 'pair\ud83d\ude00': 6, 'é✓': 7 };
    expect(JSON.parse(canonicalJson(value))).toEqual(value);
    expect(canonicalJson(value)).toBe(JSON.stringify(Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)))));
  });

  it('repeats a shared object but refuses a cycle', () => {
    const shared = { a: 1 };
    expect(canonicalJson([shared, shared])).toBe('[{"a":1},{"a":1}]');
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = { again: cyclic };
    expect(() => canonicalJson(cyclic)).toThrow(new TypeError('canonicalJson cannot represent a circular reference at $.self.again'));
  });

  it('writes a value that needs care late in its walk as it writes the same data given plainly', () => {
    // Plain data is written by a quicker walk that hands over to the careful one at the first thing it cannot take.
    const late = { z: [1, 2, { when: new Date(0), gone: undefined }], a: 'x', n: Number.NaN };
    expect(canonicalJson(late)).toBe(canonicalJson({ z: [1, 2, { when: '1970-01-01T00:00:00.000Z' }], a: 'x', n: null }));
  });

  it('writes deep values, and names a cycle that starts deep down', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 300; i++) deep = i % 2 === 0 ? [deep] : { k: deep };
    expect(canonicalJson(deep)).toBe(JSON.stringify(deep));
    const root: Record<string, unknown> = {};
    let at = root;
    for (let i = 0; i < 150; i++) at = (at['k'] = {}) as Record<string, unknown>;
    at['back'] = root;
    expect(() => canonicalJson(root)).toThrow(`circular reference at $${'.k'.repeat(150)}.back`);
  });

  it.each([
    ['undefined', undefined, 'undefined at $'],
    ['a function', () => 1, 'a function at $'],
    ['a bigint', { n: 1n }, 'a bigint at $.n'],
    ['a class instance', { x: new (class Point {})() }, 'a Point at $.x'],
    ['a typed array', [new Uint8Array(2)], 'a Uint8Array at $[0]'],
  ])('refuses %s', (_why, value, where) => {
    expect(() => canonicalJson(value)).toThrow(`canonicalJson cannot represent ${where}:`);
  });

  it('property: agrees with JSON.stringify on the data, and is a fixed point', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
    );
  });
});
