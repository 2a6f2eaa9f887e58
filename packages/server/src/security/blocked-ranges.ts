import { createRequire } from 'node:module';
import type * as IpAddr from 'ipaddr.js';
import type { IPv4, IPv6 } from 'ipaddr.js';

/**
 * ipaddr.js is CommonJS with `export =` and no named ESM exports, and the shared tsconfig has no
 * `allowSyntheticDefaultImports`: loading it through `require` keeps both the types and the runtime right.
 */
export const ipaddr = createRequire(import.meta.url)('ipaddr.js') as typeof IpAddr;

/** An address parsed by ipaddr.js. */
export type IpAddress = IPv4 | IPv6;

/** A network and the reason no task may call into it. */
export interface BlockedRange {
  cidr: string;
  /** Why it is refused, e.g. `loopback`, `private (RFC 1918)`. */
  reason: string;
}

/**
 * Networks a task may not target unless `--allow-targets` covers them: addresses that reach this host, its
 * private network or a cloud metadata service instead of the public service a caller meant. More specific
 * entries come first so the reason given is the most precise one (metadata before link-local).
 */
export const BLOCKED_RANGES: readonly BlockedRange[] = Object.freeze([
  { cidr: '0.0.0.0/8', reason: 'unspecified ("this network")' },
  { cidr: '10.0.0.0/8', reason: 'private (RFC 1918)' },
  { cidr: '100.64.0.0/10', reason: 'carrier-grade NAT (RFC 6598)' },
  { cidr: '127.0.0.0/8', reason: 'loopback' },
  { cidr: '169.254.169.254/32', reason: 'cloud metadata service' },
  { cidr: '169.254.0.0/16', reason: 'link-local' },
  { cidr: '172.16.0.0/12', reason: 'private (RFC 1918)' },
  { cidr: '192.168.0.0/16', reason: 'private (RFC 1918)' },
  { cidr: '224.0.0.0/4', reason: 'multicast' },
  { cidr: '255.255.255.255/32', reason: 'broadcast' },
  { cidr: '240.0.0.0/4', reason: 'reserved (RFC 1112)' },
  { cidr: '::/128', reason: 'unspecified' },
  { cidr: '::1/128', reason: 'loopback' },
  { cidr: 'fd00:ec2::254/128', reason: 'cloud metadata service' },
  { cidr: 'fc00::/7', reason: 'unique local (private, RFC 4193)' },
  { cidr: 'fe80::/10', reason: 'link-local' },
  { cidr: 'fec0::/10', reason: 'site-local (deprecated private)' },
  { cidr: 'ff00::/8', reason: 'multicast' },
]);

const PARSED: readonly { range: [IpAddress, number]; reason: string }[] = BLOCKED_RANGES.map((r) => ({
  range: ipaddr.parseCIDR(r.cidr),
  reason: r.reason,
}));

/** `::ffff:127.0.0.1` as 127.0.0.1, so a mapped address is judged by the IPv4 rules; others unchanged. */
export function unmapIpv4(address: IpAddress): IpAddress {
  return address.kind() === 'ipv6' && (address as IPv6).isIPv4MappedAddress()
    ? (address as IPv6).toIPv4Address()
    : address;
}

/** True when `address` lies in `range` (families must agree; ipaddr.js throws otherwise). */
export function inRange(address: IpAddress, range: [IpAddress, number]): boolean {
  return address.kind() === range[0].kind() && address.match(range);
}

/**
 * The reason `address` is blocked, or undefined for an ordinary public address. IPv4-mapped IPv6 addresses
 * (`::ffff:10.0.0.1`) are judged as the IPv4 address they carry.
 */
export function blockedReason(address: IpAddress): string | undefined {
  const plain = unmapIpv4(address);
  for (const { range, reason } of PARSED) {
    if (inRange(plain, range)) {
      return plain === address ? reason : `${reason}, as an IPv4-mapped IPv6 address`;
    }
  }
  return undefined;
}
