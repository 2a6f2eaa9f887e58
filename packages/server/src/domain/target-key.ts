/**
 * The target of a URL: its origin (scheme, lower-case host, the port unless it is the scheme's default), e.g.
 * `https://api.example.com` or `http://[::1]:8080`. It is the key by which claims share their slots among
 * downstreams and by which a downstream is held (see the store port), and where per-target settings attach.
 *
 * @throws TypeError when `url` is not an absolute URL
 * @example
 * ```ts
 * targetKeyOf('HTTPS://API.Example.com:443/charges?x=1'); // 'https://api.example.com'
 * ```
 */
export function targetKeyOf(url: string | URL): string {
  return (typeof url === 'string' ? new URL(url) : url).origin;
}
