// The cases of clients/shared/client-vectors.json, the file every client of another language (clients/go,
// clients/python) reads to check that it derives idempotency keys, computes backoff delays, reads Retry-After and
// tells credential headers exactly as @retryd/core does. Each expected value is computed here by core itself.
import {
  CREDENTIAL_HEADER_WORDS,
  DEFAULT_POLICY,
  DEFAULT_RETRYABLE_STATUS_CODES,
  RETRYD_OWN_HEADERS,
  canonicalJson,
  computeDelay,
  deriveIdempotencyKey,
  isCredentialHeader,
  parseRetryAfter,
  type BackoffSchedule,
} from '../src/index.js';

/**
 * A request body as the file writes it: text (hashed as UTF-8), bytes (base64), or JSON data (an object or an array: a
 * string is text) with its canonical text, the bytes hashed.
 */
type VectorBody = { text: string } | { base64: string } | { json: unknown; canonical: string };

interface KeyCase {
  name: string;
  method: string;
  url: string;
  body?: VectorBody;
  /** A client may refuse to derive this one (it lacks the WHATWG parser's rarer features) but never give another key. */
  mayRefuse?: true;
}

const key = (name: string, method: string, url: string, extra: Partial<Pick<KeyCase, 'body' | 'mayRefuse'>> = {}): KeyCase => ({ name, method, url, ...extra });
const json = (value: unknown): VectorBody => ({ json: value, canonical: canonicalJson(value) });

const KEY_CASES: KeyCase[] = [
  key('a JSON body as text', 'POST', 'https://api.example.com/orders', { body: { text: '{"sku":"A","qty":1}' } }),
  key('method in lower case', 'post', 'https://api.example.com/orders', { body: { text: '{"sku":"A","qty":1}' } }),
  key('no body', 'GET', 'https://api.example.com/orders/42'),
  key('an empty body is no body', 'DELETE', 'https://api.example.com/orders/42', { body: { text: '' } }),
  key('a text body in UTF-8', 'PUT', 'https://api.example.com/notes/1', { body: { text: 'héllo wörld ✓ 😀' } }),
  key('a body with a line feed', 'POST', 'https://api.example.com/x', { body: { text: 'line one\nline two\n' } }),
  key('bytes that are not UTF-8', 'POST', 'https://api.example.com/upload', { body: { base64: Buffer.from([0, 255, 254, 128, 10, 13, 65]).toString('base64') } }),
  key('scheme and host case', 'GET', 'HTTPS://API.Example.COM/Orders'),
  key('the https default port', 'GET', 'https://api.example.com:443/orders'),
  key('the http default port', 'GET', 'http://api.example.com:80/orders'),
  key('a port of its own', 'GET', 'http://127.0.0.1:8080/orders'),
  key('a port with leading zeros', 'GET', 'http://api.example.com:08080/orders'),
  key('an empty port', 'GET', 'http://api.example.com:/orders'),
  key('the https port on http', 'GET', 'http://api.example.com:443/orders'),
  key('a trailing slash', 'GET', 'https://api.example.com/orders/'),
  key('several trailing slashes', 'GET', 'https://api.example.com/orders///'),
  key('the bare origin', 'GET', 'https://api.example.com'),
  key('the bare origin with a slash', 'GET', 'https://api.example.com/'),
  key('the bare origin with slashes', 'GET', 'https://api.example.com///'),
  key('a slash inside the path kept', 'GET', 'https://api.example.com//a//b'),
  key('a fragment', 'GET', 'https://api.example.com/orders#section'),
  key('a fragment after a query', 'GET', 'https://api.example.com/orders?b=2&a=1#section?x=1'),
  key('the query sorted by name', 'GET', 'https://api.example.com/s?b=2&a=1&c=3'),
  key('repeated names sorted by value', 'GET', 'https://api.example.com/s?tag=b&tag=a&q=1&tag=c'),
  key('plus and %20 are one space', 'GET', 'https://api.example.com/s?q=a+b&r=a%20b'),
  key('a space in the query', 'GET', 'https://api.example.com/s?q=a b'),
  key('an empty value and a name alone', 'GET', 'https://api.example.com/s?flag&empty=&x=1'),
  key('empty pairs', 'GET', 'https://api.example.com/s?&&a=1&&'),
  key('an empty query', 'GET', 'https://api.example.com/s?'),
  key('only empty pairs', 'GET', 'https://api.example.com/s?&&'),
  key('a query with = in the value', 'GET', 'https://api.example.com/s?a=b=c&d==e'),
  key('query characters re-encoded', 'GET', "https://api.example.com/s?q=*-._~!'()&r=a/b:c@d,e;f$g"),
  key('non-ASCII in the query', 'GET', 'https://api.example.com/s?q=é&r=%C3%A9&s=%c3%a9&t=日本'),
  key('a percent sign without hex in the query', 'GET', 'https://api.example.com/s?q=100%&r=%zz&s=%4'),
  key('percent-encoded bytes that are not UTF-8 in the query', 'GET', 'https://api.example.com/s?q=%FF%FE&r=%C3&s=%F0%9F%98&t=%E0%80&u=%ED%A0%80&v=%F4%90%80%80'),
  key('names sorted by UTF-16 code units', 'GET', 'https://api.example.com/s?%EE%80%80=1&%F0%9F%98%80=2&z=3&Z=4'),
  key('a query with + encoded', 'GET', 'https://api.example.com/s?q=%2B1&r=a%26b%3Dc'),
  key('a query with a quote and brackets', 'GET', 'https://api.example.com/s?q="x"&r=<y>&s=`z`&t={u}'),
  key('dot segments', 'GET', 'https://api.example.com/x/../orders/./42'),
  key('dot segments past the root', 'GET', 'https://api.example.com/../../orders'),
  key('percent-encoded dot segments', 'GET', 'https://api.example.com/a/%2e%2E/b/%2e/c/.%2e/d'),
  key('a final dot segment', 'GET', 'https://api.example.com/a/b/..'),
  key('a final single dot', 'GET', 'https://api.example.com/a/b/.'),
  key('a path with characters WHATWG encodes', 'GET', 'https://api.example.com/a b/"q"/<x>/`y`/{z}'),
  key('a path with characters WHATWG keeps', 'GET', "https://api.example.com/a|b^c!d$e&f'g(h)i*j+k,l;m=n:o@p[q]r~s"),
  key('non-ASCII in the path', 'GET', 'https://api.example.com/café/日本/😀'),
  key('percent-encodings in the path kept as written', 'GET', 'https://api.example.com/%41%c3%a9/%2F/%zz/100%'),
  key('backslashes as slashes', 'GET', 'https:\\\\api.example.com\\orders\\42'),
  key('tabs and line feeds dropped', 'GET', 'https://api.exa\tmple.com/or\nders?a=\r1'),
  key('surrounding spaces and controls trimmed', 'GET', ' \u0001 https://api.example.com/orders \u001f '),
  key('a special scheme without slashes', 'GET', 'https:api.example.com/orders'),
  key('a special scheme with three slashes', 'GET', 'https:///api.example.com/orders'),
  key('a host with a trailing dot', 'GET', 'https://api.example.com./orders'),
  key('a punycode host', 'GET', 'https://xn--bcher-kva.example/orders'),
  key('an IPv4 address', 'POST', 'http://127.0.0.1:3000/hooks', { body: { text: '{}' } }),
  key('an IPv4 address in short form', 'GET', 'http://127.1/x'),
  key('an IPv4 address as one number', 'GET', 'http://2130706433/x'),
  key('an IPv4 address in hex and octal', 'GET', 'http://0x7F.0.0.01/x'),
  key('an IPv4 address with a trailing dot', 'GET', 'http://10.0.0.1./x'),
  key('an IPv6 address', 'GET', 'http://[::1]:8080/x'),
  key('an IPv6 address in full', 'GET', 'http://[0000:0000:0000:0000:0000:0000:0000:0001]/x'),
  key('an IPv6 address in upper case', 'GET', 'http://[2001:DB8::A:0:0:1]/x'),
  key('an IPv6 address, longest zero run compressed', 'GET', 'http://[1:0:0:2:0:0:0:3]/x'),
  key('an IPv6 address with one zero group', 'GET', 'http://[1:0:2:3:4:5:6:7]/x'),
  key('an IPv4-mapped IPv6 address', 'GET', 'http://[::ffff:192.168.0.1]/x'),
  key('a JSON body as data, keys sorted', 'POST', 'https://api.example.com/orders', { body: json({ sku: 'A', qty: 1, nested: { b: [1, { d: null, c: true }], a: 'x' } }) }),
  key('JSON data and its text give one key', 'POST', 'https://api.example.com/orders', { body: json({ qty: 1, sku: 'A' }) }),
  key('JSON numbers as JavaScript writes them', 'POST', 'https://api.example.com/n', {
    body: json({ ints: [0, -0, 1, -17, 100, 9007199254740991], floats: [0.1, 1.5, -2.25, 1e21, 1e-7, 1.5e300, 123456789.125, 5e-324, 1e20, 0.000001] }),
  }),
  key('JSON strings escaped as JavaScript escapes them', 'POST', 'https://api.example.com/s', {
    body: json({ s: 'quote " backslash \\ slash / tab \t nl \n cr \r bs \b ff \f nul \u0000 us \u001f del \u007f ls \u2028 é 😀' }),
  }),
  key('JSON keys sorted by UTF-16 code units', 'POST', 'https://api.example.com/k', { body: json({ '\uE000': 1, '😀': 2, Z: 3, a: 4, '': 5, é: 6 }) }),
  key('JSON arrays, empty values and top-level data', 'POST', 'https://api.example.com/a', { body: json([[], {}, [null, false, 'x'], { a: [] }]) }),
  key('user and password in the URL', 'GET', 'https://user:pass@api.example.com/x', { mayRefuse: true }),
  key('a host in Unicode', 'GET', 'https://bücher.example/orders', { mayRefuse: true }),
  key('a host with percent-encoding', 'GET', 'https://api%2Eexample.com/orders', { mayRefuse: true }),
];

/** Calls core refuses (a TypeError): every client refuses them too. */
const INVALID_KEY_CASES: KeyCase[] = [
  key('a scheme that is not http(s)', 'GET', 'ftp://files.example.com/x'),
  key('a relative URL', 'GET', '/orders/42'),
  key('not a URL', 'GET', 'not a url'),
  key('no host', 'GET', 'http://'),
  key('a port out of range', 'GET', 'http://api.example.com:65536/x'),
  key('a port with a sign', 'GET', 'http://api.example.com:+80/x'),
  key('an IPv4 part out of range', 'GET', 'http://1.2.3.256/x'),
  key('an IPv4 number out of range', 'GET', 'http://4294967296/x'),
  key('a host that ends in a number but is no address', 'GET', 'http://api.example.1/x'),
  key('an unclosed IPv6 address', 'GET', 'http://[::1/x'),
  key('an IPv6 address with a zone', 'GET', 'http://[fe80::1%25eth0]/x'),
  key('a host with a space', 'GET', 'http://api example.com/x'),
  key('a method that is not a token', 'GE T', 'https://api.example.com/x'),
  key('an empty method', '', 'https://api.example.com/x'),
];

function bodyOf(body: VectorBody | undefined): unknown {
  if (body === undefined) return undefined;
  if ('text' in body) return body.text;
  if ('base64' in body) return Buffer.from(body.base64, 'base64');
  return body.json;
}

const schedule = (backoffType: BackoffSchedule['backoffType'], jitterType: BackoffSchedule['jitterType'], initialDelayMs: number, multiplier: number, maxDelayMs: number): BackoffSchedule => ({
  backoffType,
  initialDelayMs,
  multiplier,
  maxDelayMs,
  jitterType,
});

/** Each schedule with several retry numbers, previous delays and draws of the random source. */
const DELAY_SCHEDULES: BackoffSchedule[] = [
  { ...DEFAULT_POLICY },
  schedule('EXPONENTIAL', 'NONE', 100, 2, 10_000),
  schedule('EXPONENTIAL', 'EQUAL', 250, 1.5, 60_000),
  schedule('EXPONENTIAL', 'DECORRELATED', 100, 2, 5_000),
  schedule('EXPONENTIAL', 'FULL', 1_000, 1.7, 3_600_000),
  schedule('LINEAR', 'FULL', 200, 1, 1_500),
  schedule('LINEAR', 'NONE', 333, 1, 100_000),
  schedule('FIXED', 'EQUAL', 750, 1, 750),
  schedule('FIXED', 'DECORRELATED', 50, 1, 400),
];
const RETRY_NUMBERS = [1, 2, 3, 5, 8, 20, 1100];
const PREVIOUS_DELAYS = [0, 37.5, 10_000];
const RANDOMS = [0, 0.5, 0.123456789, 0.9999999999];

const NOW_MS = Date.UTC(2025, 0, 15, 12, 0, 0, 250);
const RETRY_AFTER_VALUES = [
  '0', '1', '120', ' 7 ', '007', '99999999999999999999', '-1', '1.5', '+3', '12abc', '', 'soon',
  'Wed, 15 Jan 2025 12:00:30 GMT', 'Wed, 15 Jan 2025 11:00:00 GMT', 'Thu, 16 Jan 2025 12:00:00 GMT',
  'Wednesday, 15-Jan-25 12:01:00 GMT', 'Sunday, 06-Nov-94 08:49:37 GMT', 'Wed Jan 15 12:02:00 2025', 'Wed Jan  5 12:02:00 2025',
  'Wed, 30 Feb 2025 12:00:00 GMT', 'Wed, 15 Jan 2025 24:00:00 GMT', 'wed, 15 jan 2025 12:00:30 gmt', 'Wed, 15 Jan 2025 12:00:30 UTC',
  'Wed, 15 Jan 2025 12:00:59 GMT', 'Wed, 15 Jan 2025 12:00:60 GMT',
];

const HEADER_NAMES = [
  'Authorization', 'Proxy-Authorization', 'Cookie', 'Set-Cookie', 'X-Api-Key', 'apikey', 'X-Auth-Token', 'Token', 'Client-Secret',
  'X-Password', 'Session-Id', 'Stripe-Signature', 'X-Credentials', 'Idempotency-Key', 'idempotency-key', 'Webhook-Id',
  'Webhook-Timestamp', 'Webhook-Signature', 'Accept', 'Content-Type', 'X-Request-Id', 'User-Agent', 'X-Partition-Key', 'Passwd',
];

/** The whole file, as core computes it. */
export function buildClientVectors(): Record<string, unknown> {
  return {
    about:
      'Generated from @retryd/core by packages/core/test/client-vectors.test.ts (RETRYD_WRITE_CLIENT_VECTORS=1 writes it; ' +
      'npm run generate:client-vectors). Every client of another language checks itself against it.',
    idempotencyKeys: KEY_CASES.map((c) => ({ ...c, key: deriveIdempotencyKey({ method: c.method, url: c.url, body: bodyOf(c.body) }) })),
    invalidIdempotencyKeys: INVALID_KEY_CASES.map((c) => {
      try {
        deriveIdempotencyKey({ method: c.method, url: c.url });
      } catch (error) {
        if (error instanceof TypeError) return { ...c, error: error.message };
        throw error;
      }
      throw new Error(`core derived a key for "${c.name}", listed as invalid`);
    }),
    delays: DELAY_SCHEDULES.flatMap((s) =>
      RETRY_NUMBERS.flatMap((n) =>
        PREVIOUS_DELAYS.flatMap((previousDelayMs) =>
          // DECORRELATED alone reads the previous delay: the others need one previous delay only.
          s.jitterType !== 'DECORRELATED' && previousDelayMs !== 0
            ? []
            : RANDOMS.map((random) => ({ schedule: s, n, previousDelayMs, random, delayMs: computeDelay(s, n, previousDelayMs, () => random) })),
        ),
      ),
    ),
    retryAfter: { nowMs: NOW_MS, cases: RETRY_AFTER_VALUES.map((value) => ({ value, delayMs: parseRetryAfter(value, NOW_MS) ?? null })) },
    defaultPolicy: { ...DEFAULT_POLICY },
    defaultRetryableStatusCodes: [...DEFAULT_RETRYABLE_STATUS_CODES],
    credentialHeaders: {
      words: [...CREDENTIAL_HEADER_WORDS],
      retrydOwn: [...RETRYD_OWN_HEADERS],
      cases: HEADER_NAMES.map((name) => ({ name, credential: isCredentialHeader(name) })),
    },
  };
}
