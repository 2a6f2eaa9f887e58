import { GRPC_PROTOCOLS, grpcTargetOf } from './grpc-target.js';

/**
 * The target of a URL: its origin (scheme, lower-case host, the port unless it is the scheme's default), e.g.
 * `https://api.example.com` or `http://[::1]:8080`; for a gRPC URL, `grpc://host:port` or `grpcs://host:port` (see
 * `grpcTargetOf`). It is the key by which claims share their slots among
 * downstreams and by which a downstream is held (see the store port), and where per-target settings attach.
 *
 * @throws TypeError when `url` is not an absolute URL
 * @example
 * ```ts
 * targetKeyOf('HTTPS://API.Example.com:443/charges?x=1'); // 'https://api.example.com'
 * ```
 */
export function targetKeyOf(url: string | URL): string {
  const parsed = typeof url === 'string' ? new URL(url) : url;
  if (GRPC_PROTOCOLS.has(parsed.protocol)) {
    // `URL.origin` is "null" for these schemes: the key is built from the host as an http: URL spells it.
    const target = grpcTargetOf(parsed);
    if ('key' in target) return target.key;
    const host = URL.parse(`http://${parsed.hostname}`)?.hostname ?? parsed.hostname;
    return `${parsed.protocol}//${host}${parsed.port === '' ? '' : `:${parsed.port}`}`;
  }
  return parsed.origin;
}

/** Where a URL's text goes on after its origin: a path, a query or a fragment begins. */
const AFTER_ORIGIN = new Set(['/', '?', '#']);

/**
 * A task's URL as the stores keep it beside its target key: the text after the key when the URL begins with it and
 * a path, query or fragment follows (`/charges?x=1` for `https://api.example.com/charges?x=1`), the whole URL
 * otherwise (one spelled with upper case, a default port or user info, which its origin does not begin). Every store
 * keeps the key anyway, so the origin is not kept twice: about 20 bytes a task. {@link targetUrlOfStored} reads it
 * back.
 *
 * @param column - the field's name in the store, for the error
 * @throws TypeError naming `column` when `url` begins with `/`, `?` or `#`: not an absolute URL, and it would read back
 *   joined to the key
 * @example
 * ```ts
 * storedTargetUrl('https://api.example.com/charges', 'https://api.example.com', 'target_url'); // '/charges'
 * ```
 */
export function storedTargetUrl(url: string, targetKey: string, column: string): string {
  if (AFTER_ORIGIN.has(url.charAt(0))) {
    throw new TypeError(`${column}: expected an absolute URL, got ${JSON.stringify(url.slice(0, 100))}`);
  }
  return url.length > targetKey.length && url.startsWith(targetKey) && AFTER_ORIGIN.has(url.charAt(targetKey.length))
    ? url.slice(targetKey.length)
    : url;
}

/**
 * A task's URL as {@link storedTargetUrl} kept it, whole again: joined to its target key when it begins with `/`, `?`
 * or `#` (which no absolute URL does), as it is otherwise (kept whole, or stored before the stores kept it short).
 */
export function targetUrlOfStored(stored: string, targetKey: string): string {
  return AFTER_ORIGIN.has(stored.charAt(0)) ? targetKey + stored : stored;
}
