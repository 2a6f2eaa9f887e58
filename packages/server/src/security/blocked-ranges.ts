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
  /** What the network is, worded to follow "<address> is …", e.g. `loopback`, `private (RFC 1918)`. */
  reason: string;
}

/**
 * IPv4 networks a task may not target unless `--allow-targets` covers them: addresses that reach this host, its
 * private network or a cloud metadata service instead of the public service a caller meant, and addresses that are
 * never a public service (documentation, benchmarking, reserved). More specific entries come first so the reason
 * given is the most precise one (metadata before link-local).
 *
 * Checked against IANA's IPv4 Special-Purpose Address Registry: every entry it marks not globally reachable is here.
 * Its globally reachable anycast services are not (`192.31.196.0/24` and `192.175.48.0/24` AS112, `192.52.193.0/24`
 * AMT): public services like any other. `192.0.0.0/24` is blocked whole, its two anycast addresses with it.
 */
export const BLOCKED_IPV4_RANGES: readonly BlockedRange[] = Object.freeze([
  { cidr: '0.0.0.0/8', reason: 'unspecified ("this network")' },
  { cidr: '10.0.0.0/8', reason: 'private (RFC 1918)' },
  { cidr: '100.64.0.0/10', reason: 'carrier-grade NAT (RFC 6598)' },
  { cidr: '127.0.0.0/8', reason: 'loopback' },
  { cidr: '169.254.169.254/32', reason: 'link-local (the cloud metadata service)' },
  { cidr: '169.254.0.0/16', reason: 'link-local' },
  { cidr: '172.16.0.0/12', reason: 'private (RFC 1918)' },
  { cidr: '192.0.0.0/24', reason: 'reserved for IETF protocol assignments (RFC 6890)' },
  { cidr: '192.0.2.0/24', reason: 'documentation (RFC 5737)' },
  { cidr: '192.88.99.0/24', reason: 'the deprecated 6to4 relay anycast (RFC 7526)' },
  { cidr: '192.168.0.0/16', reason: 'private (RFC 1918)' },
  { cidr: '198.18.0.0/15', reason: 'benchmarking (RFC 2544)' },
  { cidr: '198.51.100.0/24', reason: 'documentation (RFC 5737)' },
  { cidr: '203.0.113.0/24', reason: 'documentation (RFC 5737)' },
  { cidr: '224.0.0.0/4', reason: 'multicast' },
  { cidr: '255.255.255.255/32', reason: 'broadcast' },
  { cidr: '240.0.0.0/4', reason: 'reserved (RFC 1112)' },
]);

/**
 * IPv6 networks refused as they are. The forms that carry an IPv4 address ({@link IPV4_EMBEDDINGS}) are judged as that
 * address instead; `::` and `::1` lie inside the IPv4-compatible `::/96` but are matched here first.
 *
 * Checked against IANA's IPv6 Special-Purpose Address Registry: every entry it marks not globally reachable is here
 * or among the embeddings. Left to reach: its globally reachable ones (the PCP, TURN and DNS-SD anycast addresses of
 * `2001:1::/48`, AMT `2001:3::/32`, AS112 `2001:4:112::/48` and `2620:4f:8000::/48`, ORCHIDv2 `2001:20::/28`, drone
 * tags `2001:30::/28`), and the rest of `2001::/23`, which holds nothing else yet (blocking it whole would refuse a
 * Teredo address that carries a public IPv4 address).
 */
export const BLOCKED_IPV6_RANGES: readonly BlockedRange[] = Object.freeze([
  { cidr: '::/128', reason: 'unspecified' },
  { cidr: '::1/128', reason: 'loopback' },
  { cidr: 'fd00:ec2::254/128', reason: 'unique local (the cloud metadata service)' },
  { cidr: 'fc00::/7', reason: 'unique local (RFC 4193)' },
  { cidr: 'fe80::/10', reason: 'link-local' },
  { cidr: 'fec0::/10', reason: 'site-local (deprecated private)' },
  { cidr: 'ff00::/8', reason: 'multicast' },
  { cidr: '2001:db8::/32', reason: 'documentation (RFC 3849)' },
  { cidr: '3fff::/20', reason: 'documentation (RFC 9637)' },
  { cidr: '100::/64', reason: 'discard-only (RFC 6666)' },
  { cidr: '100:0:0:1::/64', reason: 'the dummy prefix (RFC 9780)' },
  { cidr: '2001:2::/48', reason: 'benchmarking (RFC 5180)' },
  { cidr: '2001:10::/28', reason: 'ORCHID, deprecated (RFC 4843)' },
  { cidr: '5f00::/16', reason: 'segment routing SIDs (RFC 9602)' },
]);

/** Every refused network, IPv4 then IPv6, for documentation and tests. */
export const BLOCKED_RANGES: readonly BlockedRange[] = Object.freeze([...BLOCKED_IPV4_RANGES, ...BLOCKED_IPV6_RANGES]);

/** An IPv6 form that carries an IPv4 address, and where it keeps it. */
export interface Ipv4Embedding {
  cidr: string;
  /** The form's name, e.g. `NAT64`. */
  form: string;
  /**
   * The carried IPv4 address from the eight 16-bit words of the IPv6 address, or null when it cannot be read with
   * certainty (then the address is refused as a whole).
   */
  extract: (words: readonly number[]) => [number, number] | null;
}

const lastTwo = (w: readonly number[]): [number, number] => [w[6] ?? 0, w[7] ?? 0];

/**
 * IPv6 forms that reach an IPv4 address, each judged as the IPv4 address it carries: a translator or tunnel on the
 * path turns `[64:ff9b::a9fe:a9fe]` into a connection to 169.254.169.254.
 */
export const IPV4_EMBEDDINGS: readonly Ipv4Embedding[] = Object.freeze([
  { cidr: '::ffff:0:0/96', form: 'IPv4-mapped', extract: lastTwo },
  // RFC 6145 (SIIT).
  { cidr: '::ffff:0:0:0/96', form: 'IPv4-translated', extract: lastTwo },
  { cidr: '64:ff9b::/96', form: 'NAT64', extract: lastTwo },
  // RFC 8215.
  {
    cidr: '64:ff9b:1::/48',
    form: 'local-use NAT64',
    // The operator picks the prefix length inside the /48 (RFC 6052 allows /48 to /96), and each puts the IPv4 address
    // elsewhere: only the /96 layout (bits 48–95 zero) can be read without knowing the network; any other is refused.
    extract: (w) => (w[3] === 0 && w[4] === 0 && w[5] === 0 ? lastTwo(w) : null),
  },
  { cidr: '2002::/16', form: '6to4', extract: (w) => [w[1] ?? 0, w[2] ?? 0] },
  // The client's address, obfuscated: the last 32 bits XOR 0xffffffff (RFC 4380).
  { cidr: '2001::/32', form: 'Teredo', extract: (w) => [(w[6] ?? 0) ^ 0xffff, (w[7] ?? 0) ^ 0xffff] },
  { cidr: '::/96', form: 'IPv4-compatible', extract: lastTwo },
]);

type Parsed<T> = T & { range: [IpAddress, number] };
const parse = <T extends { cidr: string }>(list: readonly T[]): Parsed<T>[] =>
  list.map((entry) => ({ ...entry, range: ipaddr.parseCIDR(entry.cidr) }));
const IPV4 = parse(BLOCKED_IPV4_RANGES);
const IPV6 = parse(BLOCKED_IPV6_RANGES);
const EMBEDDINGS = parse(IPV4_EMBEDDINGS);

const DOTTED_TAIL = /^(.*:)(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;

/**
 * Parses an IP address as `net.isIP` accepts it (an IPv6 zone such as `%eth0` is dropped). An IPv6 address whose last
 * 32 bits are written as a dotted quad is rewritten in hex first: ipaddr.js 2.5 reads any `::a.b.c.d` as IPv4-mapped
 * (`::ffff:a.b.c.d`), and Node's resolver prints IPv4-compatible addresses exactly so.
 */
export function parseAddress(text: string): IpAddress {
  const bare = text.split('%')[0] ?? text;
  const dotted = bare.includes(':') ? DOTTED_TAIL.exec(bare) : null;
  if (dotted === null) return ipaddr.parse(bare);
  const [a, b, c, d] = ipaddr.IPv4.parse(dotted[2] ?? '').octets as [number, number, number, number];
  const word = (high: number, low: number) => ((high << 8) | low).toString(16);
  return ipaddr.IPv6.parse(`${dotted[1] ?? ''}${word(a, b)}:${word(c, d)}`);
}

/** True when `address` lies in `range` (families must agree; ipaddr.js throws otherwise). */
export function inRange(address: IpAddress, range: [IpAddress, number]): boolean {
  return address.kind() === range[0].kind() && address.match(range);
}

/** The IPv4 address an IPv6 form carries: `ipv4` is null when the form is known but the address cannot be read. */
export interface EmbeddedIpv4 {
  form: string;
  ipv4: IPv4 | null;
}

/** The IPv4 address `address` carries ({@link IPV4_EMBEDDINGS}), or undefined for an IPv4 address or a plain IPv6 one. */
export function embeddedIpv4(address: IpAddress): EmbeddedIpv4 | undefined {
  if (address.kind() !== 'ipv6') return undefined;
  for (const embedding of EMBEDDINGS) {
    if (!address.match(embedding.range)) continue;
    const words = (address as IPv6).parts;
    const pair = embedding.extract(words);
    if (pair === null) return { form: embedding.form, ipv4: null };
    const [high, low] = pair;
    return { form: embedding.form, ipv4: new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]) };
  }
  return undefined;
}

/** Why an address is refused: the rule, and the IPv4 address it was judged as when an IPv6 form carries one. */
export interface Blocked {
  reason: string;
  embedded?: { form: string; ipv4: string };
}

function ipv4Reason(address: IpAddress): string | undefined {
  return IPV4.find((r) => inRange(address, r.range))?.reason;
}

/**
 * Why `address` is refused, or undefined for an ordinary public address. An IPv6 address is first matched against the
 * IPv6 networks; one that carries an IPv4 address (mapped, translated, compatible, NAT64, 6to4, Teredo) is then judged
 * as that IPv4 address.
 *
 * @example
 * ```ts
 * blockedReason(ipaddr.parse('64:ff9b::a9fe:a9fe'));
 * // { reason: 'link-local (the cloud metadata service)', embedded: { form: 'NAT64', ipv4: '169.254.169.254' } }
 * blockedReason(ipaddr.parse('8.8.8.8')); // undefined
 * ```
 */
export function blockedReason(address: IpAddress): Blocked | undefined {
  if (address.kind() === 'ipv4') {
    const reason = ipv4Reason(address);
    return reason === undefined ? undefined : { reason };
  }
  const own = IPV6.find((r) => inRange(address, r.range));
  if (own !== undefined) return { reason: own.reason };
  const embedded = embeddedIpv4(address);
  if (embedded === undefined) return undefined;
  if (embedded.ipv4 === null) return { reason: `${embedded.form} outside the /96 layout (its IPv4 address cannot be read)` };
  const reason = ipv4Reason(embedded.ipv4);
  return reason === undefined ? undefined : { reason, embedded: { form: embedded.form, ipv4: embedded.ipv4.toString() } };
}
