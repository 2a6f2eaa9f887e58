import { isIP } from 'node:net';

/**
 * The names a service without API keys answers for besides those it is given: `localhost` and the loopback
 * addresses. A browser sends a page's own host name in `Host`, so a page on a name an attacker controls — even one
 * whose DNS answer they rebind to 127.0.0.1 — cannot read an open service's answers; an address cannot be rebound.
 */
export const LOOPBACK_HOST_NAMES: readonly string[] = Object.freeze(['localhost', '127.0.0.1', '[::1]']);

/** A name `--allowed-hosts` takes: a DNS name (letters, digits, hyphens, dots), an IPv4 address or a bracketed IPv6 one. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** `Host`'s name, lower-case, without its port or a final dot (`[::1]` keeps its brackets); undefined when malformed. */
export function hostNameOf(host: string): string | undefined {
  const value = host.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    const rest = value.slice(end + 1);
    if (end < 0 || (rest !== '' && !/^:\d{1,5}$/.test(rest))) return undefined;
    return isIP(value.slice(1, end)) === 6 ? value.slice(0, end + 1) : undefined;
  }
  const match = /^([^:]*)(?::\d{1,5})?$/.exec(value);
  const name = match?.[1]?.replace(/\.$/, '');
  return name === undefined || name === '' ? undefined : name;
}

/**
 * An `--allowed-hosts` entry as it is compared with a request's `Host` (lower-case, IPv6 in brackets), or undefined
 * when it is not a host name without a port or scheme.
 */
export function normaliseAllowedHost(entry: string): string | undefined {
  const value = entry.trim().toLowerCase().replace(/\.$/, '');
  if (isIP(value) === 6) return `[${value}]`;
  if (value.startsWith('[') && value.endsWith(']') && isIP(value.slice(1, -1)) === 6) return value;
  return HOST_NAME.test(value) ? value : undefined;
}

/**
 * Whether an open service (no API key yet) answers a request with this `Host`: `localhost`, `127.x.x.x`, `[::1]`
 * or one of `allowed` (normalised by {@link normaliseAllowedHost}), on any port.
 */
export function openHostAllowed(host: string | undefined, allowed: ReadonlySet<string>): boolean {
  const name = host === undefined ? undefined : hostNameOf(host);
  if (name === undefined) return false;
  return LOOPBACK_HOST_NAMES.includes(name) || (isIP(name) === 4 && name.startsWith('127.')) || allowed.has(name);
}
