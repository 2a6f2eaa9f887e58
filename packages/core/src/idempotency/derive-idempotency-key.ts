import type * as NodeCrypto from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

export { canonicalJson } from './canonical-json.js';

let nodeCrypto: typeof NodeCrypto | undefined;

/**
 * `node:crypto`, looked up on first use rather than imported: a static `import 'node:crypto'` would stop every
 * browser bundle of this package (and of `@retryd/client`) from building, though only this function needs it. Node
 * (20.16 and later), Deno and Bun have `process.getBuiltinModule`; elsewhere this throws.
 */
function loadNodeCrypto(): typeof NodeCrypto {
  if (nodeCrypto !== undefined) return nodeCrypto;
  const lookup = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule;
  const crypto = lookup?.('node:crypto') as typeof NodeCrypto | undefined;
  if (crypto === undefined) {
    throw new Error('deriveIdempotencyKey needs node:crypto (Node 20.16+, Deno, Bun); in a browser, send a key of your own');
  }
  return (nodeCrypto = crypto);
}

/** RFC 9110 §9.1: a method is a token, `1*tchar`. */
const METHOD_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** What {@link deriveIdempotencyKey} identifies a request by. */
export interface IdempotencyKeyInput {
  /** HTTP method, any case: `post` and `POST` give the same key. */
  method: string;
  /** Absolute http(s) URL. */
  url: string | URL;
  /**
   * The request body: a string (used as is), bytes (`Uint8Array`, `Buffer`, `ArrayBuffer`, any
   * `ArrayBufferView`), `URLSearchParams` (its serialisation) or JSON-serialisable data (see
   * {@link canonicalJson}). `undefined` and `null` mean no body.
   */
  body?: unknown;
}

function show(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/**
 * The URL with every difference that cannot change what the server sees removed: scheme and host
 * lower-cased and the default port dropped (the WHATWG parser does these), trailing slashes trimmed from
 * the path (the bare origin keeps its "/"), query parameters sorted by name then value, fragment dropped.
 */
function normaliseUrl(input: string | URL): string {
  // Parsed afresh from text: the caller's URL object is left alone, and one from another realm works too.
  const text: unknown = typeof input === 'string' ? input : (input as Partial<URL> | null)?.href;
  if (typeof text !== 'string') throw new TypeError(`url must be a string or a URL, got ${show(input)}`);
  const known = normalisedUrls.get(text);
  if (known !== undefined) return known;
  const normalised = normaliseUrlText(text, input);
  // Bounded: a caller with endlessly many URLs refills it rather than growing it.
  if (normalisedUrls.size >= NORMALISED_URL_CACHE_SIZE) normalisedUrls.clear();
  normalisedUrls.set(text, normalised);
  return normalised;
}

/**
 * Callers mostly key requests to a handful of URLs, and parsing, re-serialising and sorting one costs more than the
 * hash: the last few hundred are remembered (the function is pure, so a remembered answer is the same answer).
 */
const NORMALISED_URL_CACHE_SIZE = 512;
const normalisedUrls = new Map<string, string>();

function normaliseUrlText(text: string, input: string | URL): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TypeError(`url must be an absolute URL (WHATWG URL syntax), got ${show(input)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`url must use the http: or https: scheme, got ${show(url.href)}`);
  }
  url.hash = '';
  url.pathname = url.pathname.replace(/\/+$/, '') || '/';
  // Sorted by name, then by value, in UTF-16 code unit order. Re-serialising as
  // application/x-www-form-urlencoded also makes `a=b%20c` and `a=b+c` one key, as servers read them.
  const params = [...url.searchParams].sort(([an, av], [bn, bv]) =>
    an < bn ? -1 : an > bn ? 1 : av < bv ? -1 : av > bv ? 1 : 0,
  );
  url.search = new URLSearchParams(params).toString();
  return url.href;
}

/** The bytes the body stands for; strings are hashed as UTF-8, as `fetch` sends them. */
function bodyBytes(body: unknown): string | Uint8Array {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string') return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof URLSearchParams) return body.toString();
  return canonicalJson(body);
}

/**
 * A stable idempotency key for a request, for an `Idempotency-Key` header or a store's de-duplication:
 * the same request, however it is spelt, always gets the same key; a different method, normalised URL or
 * body gets a different one.
 *
 * The key is the first 32 hex characters (128 bits) of SHA-256 over `METHOD`, the normalised URL and the
 * body's bytes, separated by line feeds. The separator cannot be confused: a method is a token and a
 * serialised URL is percent-encoded, so neither contains a line feed, and the body, which may, comes last.
 *
 * - method: upper-cased;
 * - URL: host and scheme lower-cased, default port dropped, trailing slashes trimmed
 *   (`https://a.com` = `https://a.com/`), query sorted by name then value, fragment dropped;
 * - body: a string as is, bytes as bytes, anything else as {@link canonicalJson} (keys sorted), none as
 *   empty. A body is identified by the bytes it stands for, so the string `'{"a":1}'`, its UTF-8 bytes
 *   and the object `{ a: 1 }` give one key.
 *
 * @throws TypeError naming `method`, `url` or the body path when one breaks its rule; Error where `node:crypto` is
 *   not available (a browser)
 * @example
 * ```ts
 * const a = deriveIdempotencyKey({
 *   method: 'post', url: 'https://API.example.com:443/orders/?b=2&a=1#x', body: { n: 1, sku: 'A' },
 * });
 * const b = deriveIdempotencyKey({
 *   method: 'POST', url: 'https://api.example.com/orders?a=1&b=2', body: { sku: 'A', n: 1 },
 * });
 * a === b; // true; a is 32 lower-case hex characters
 * ```
 */
export function deriveIdempotencyKey({ method, url, body }: IdempotencyKeyInput): string {
  if (typeof method !== 'string' || !METHOD_TOKEN.test(method)) {
    throw new TypeError(`method must be an HTTP token (RFC 9110 §9.1), got ${show(method)}`);
  }
  const crypto = loadNodeCrypto();
  const head = `${method.toUpperCase()}\n${normaliseUrl(url)}\n`;
  const bytes = bodyBytes(body);
  // A text body (the usual JSON) is hashed in one call: the same UTF-8 bytes (the head is ASCII, so joining the texts
  // joins their encodings), at a third of the cost of a Hash object. `crypto.hash` is Node 20.12+ (not Deno, Bun).
  if (typeof bytes === 'string' && typeof crypto.hash === 'function') return crypto.hash('sha256', head + bytes, 'hex').slice(0, 32);
  return crypto.createHash('sha256').update(head).update(bytes).digest('hex').slice(0, 32);
}
