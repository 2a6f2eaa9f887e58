import { describe, expect, it } from 'vitest';
import { BLOCKED_RANGES, IPV4_EMBEDDINGS, blockedReason, embeddedIpv4, inRange, ipaddr, parseAddress } from '../src/security/blocked-ranges.js';
import { TargetGuard, parseAllowList } from '../src/security/target-guard.js';

// Every blocked range and every IPv6 form that carries an IPv4 address, judged by the one function both checks use
// (`TargetGuard.checkHost`: at creation through `check`, at dispatch on every connection).

const guard = (allow?: string) => new TargetGuard({ allow: parseAllowList(allow), lookup: async () => ['93.184.215.14'] });

/** An address, the rule it breaks, and an allowance that covers it. */
const BLOCKED: [address: string, reason: string, allowance: string][] = [
  ['0.0.0.0', 'unspecified ("this network")', '0.0.0.0/8'],
  ['0.255.255.255', 'unspecified ("this network")', '0.0.0.0/8'],
  ['10.0.0.1', 'private (RFC 1918)', '10.0.0.0/8'],
  ['10.255.255.255', 'private (RFC 1918)', '10.0.0.0/8'],
  ['100.64.0.1', 'carrier-grade NAT (RFC 6598)', '100.64.0.0/10'],
  ['100.127.255.254', 'carrier-grade NAT (RFC 6598)', '100.64.0.0/10'],
  ['127.0.0.1', 'loopback', '127.0.0.1/32'],
  ['127.8.9.10', 'loopback', '127.0.0.0/8'],
  ['169.254.169.254', 'link-local (the cloud metadata service)', '169.254.169.254'],
  ['169.254.10.10', 'link-local', '169.254.0.0/16'],
  ['172.16.0.1', 'private (RFC 1918)', '172.16.0.0/12'],
  ['172.31.255.254', 'private (RFC 1918)', '172.16.0.0/12'],
  ['192.0.0.8', 'reserved for IETF protocol assignments (RFC 6890)', '192.0.0.0/24'],
  ['192.0.2.1', 'documentation (RFC 5737)', '192.0.2.0/24'],
  ['192.88.99.1', 'the deprecated 6to4 relay anycast (RFC 7526)', '192.88.99.0/24'],
  ['192.88.99.2', 'the deprecated 6to4 relay anycast (RFC 7526)', '192.88.99.2'],
  ['192.168.0.1', 'private (RFC 1918)', '192.168.0.0/16'],
  ['198.18.0.1', 'benchmarking (RFC 2544)', '198.18.0.0/15'],
  ['198.19.255.254', 'benchmarking (RFC 2544)', '198.18.0.0/15'],
  ['198.51.100.7', 'documentation (RFC 5737)', '198.51.100.0/24'],
  ['203.0.113.9', 'documentation (RFC 5737)', '203.0.113.0/24'],
  ['224.0.0.1', 'multicast', '224.0.0.0/4'],
  ['239.255.255.250', 'multicast', '224.0.0.0/4'],
  ['240.0.0.1', 'reserved (RFC 1112)', '240.0.0.0/4'],
  ['255.255.255.254', 'reserved (RFC 1112)', '240.0.0.0/4'],
  ['255.255.255.255', 'broadcast', '255.255.255.255'],
  ['::', 'unspecified', '::/128'],
  ['::1', 'loopback', '::1'],
  ['fd00:ec2::254', 'unique local (the cloud metadata service)', 'fd00:ec2::254'],
  ['fc00::1', 'unique local (RFC 4193)', 'fc00::/7'],
  ['fd12:3456:789a::1', 'unique local (RFC 4193)', 'fd00::/8'],
  ['fe80::1', 'link-local', 'fe80::/10'],
  ['fec0::1', 'site-local (deprecated private)', 'fec0::/10'],
  ['ff02::1', 'multicast', 'ff00::/8'],
  ['2001:db8::1', 'documentation (RFC 3849)', '2001:db8::/32'],
  ['3fff::1', 'documentation (RFC 9637)', '3fff::/20'],
  ['3fff:fff:ffff::1', 'documentation (RFC 9637)', '3fff::/20'],
  ['100::1', 'discard-only (RFC 6666)', '100::/64'],
  ['100::ffff:ffff:ffff:ffff', 'discard-only (RFC 6666)', '100::/64'],
  ['100:0:0:1::1', 'the dummy prefix (RFC 9780)', '100:0:0:1::/64'],
  ['2001:2::1', 'benchmarking (RFC 5180)', '2001:2::/48'],
  ['2001:2:0:ffff::1', 'benchmarking (RFC 5180)', '2001:2::/48'],
  ['2001:10::1', 'ORCHID, deprecated (RFC 4843)', '2001:10::/28'],
  ['2001:1f:ffff::1', 'ORCHID, deprecated (RFC 4843)', '2001:10::/28'],
  ['5f00::1', 'segment routing SIDs (RFC 9602)', '5f00::/16'],
  ['5f00:ffff::1', 'segment routing SIDs (RFC 9602)', '5f00::/16'],
];

/** An IPv6 form, the IPv4 address it carries, the form's name, and the rule that address breaks. */
const EMBEDDED: [address: string, ipv4: string, form: string, reason: string][] = [
  ['::ffff:127.0.0.1', '127.0.0.1', 'IPv4-mapped', 'loopback'],
  ['::ffff:10.1.2.3', '10.1.2.3', 'IPv4-mapped', 'private (RFC 1918)'],
  ['::ffff:a9fe:a9fe', '169.254.169.254', 'IPv4-mapped', 'link-local (the cloud metadata service)'],
  ['::ffff:0:7f00:1', '127.0.0.1', 'IPv4-translated', 'loopback'],
  ['::a00:1', '10.0.0.1', 'IPv4-compatible', 'private (RFC 1918)'],
  ['::127.0.0.1', '127.0.0.1', 'IPv4-compatible', 'loopback'],
  ['::c0a8:101', '192.168.1.1', 'IPv4-compatible', 'private (RFC 1918)'],
  ['64:ff9b::a9fe:a9fe', '169.254.169.254', 'NAT64', 'link-local (the cloud metadata service)'],
  ['64:ff9b::7f00:1', '127.0.0.1', 'NAT64', 'loopback'],
  ['64:ff9b::c612:1', '198.18.0.1', 'NAT64', 'benchmarking (RFC 2544)'],
  ['64:ff9b:1::a00:1', '10.0.0.1', 'local-use NAT64', 'private (RFC 1918)'],
  ['2002:a9fe:a9fe::1', '169.254.169.254', '6to4', 'link-local (the cloud metadata service)'],
  ['2002:7f00:1::', '127.0.0.1', '6to4', 'loopback'],
  ['2002:c000:201:1::1', '192.0.2.1', '6to4', 'documentation (RFC 5737)'],
  // Teredo: server 65.54.227.120, client 10.0.0.1 kept as its one's complement (f5ff:fffe).
  ['2001:0:4136:e378:8000:63bf:f5ff:fffe', '10.0.0.1', 'Teredo', 'private (RFC 1918)'],
  ['2001:0:4136:e378::8000:80ff:fffe', '127.0.0.1', 'Teredo', 'loopback'],
  ['2001:0:4136:e378:8000:63bf:5601:5601', '169.254.169.254', 'Teredo', 'link-local (the cloud metadata service)'],
];

describe('blocked ranges', () => {
  it.each(BLOCKED)('refuses %s: %s', async (address, reason) => {
    const verdict = await guard().checkHost(address);
    expect(verdict).toEqual({ ok: false, kind: 'blocked', detail: `${address} is ${reason}: blocked unless --allow-targets covers it` });
  });

  it.each(BLOCKED)('allows %s (%s) when --allow-targets has %s', async (address, _reason, allowance) => {
    expect(await guard(allowance).checkHost(address)).toEqual({ ok: true, addresses: [address] });
  });

  it('has a row above for every blocked network, and every network parses', () => {
    const tested = BLOCKED_RANGES.filter((r) => BLOCKED.some(([address]) => inRange(ipaddr.parse(address), ipaddr.parseCIDR(r.cidr))));
    expect(tested.map((r) => r.cidr)).toEqual(BLOCKED_RANGES.map((r) => r.cidr));
    const cidrs = BLOCKED_RANGES.map((r) => r.cidr);
    expect(new Set(cidrs).size).toBe(cidrs.length);
    expect(() => parseAllowList(cidrs)).not.toThrow();
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '169.255.0.1',
    '192.0.1.1',
    '198.20.0.1',
    '223.255.255.255',
    '2606:4700:4700::1111',
    // Next to the special-purpose networks, and the globally reachable entries of IANA's registries.
    '192.88.98.255',
    '192.88.100.1',
    '192.31.196.1',
    '192.175.48.6',
    '3fff:1000::1',
    '4000::1',
    '100:0:0:2::1',
    '2001:1::1',
    '2001:3::1',
    '2001:4:112::1',
    '2001:20::1',
    '5e00::1',
    '5f01::1',
  ])(
    'allows the public address %s',
    async (address) => {
      expect(await guard().checkHost(address)).toEqual({ ok: true, addresses: [address] });
    },
  );

  it('accepts IPv6 hosts with or without brackets, as URL.hostname and undici give them', async () => {
    expect(await guard().checkHost('[::1]')).toMatchObject({ ok: false, detail: '::1 is loopback: blocked unless --allow-targets covers it' });
    expect(await guard().check(new URL('http://[64:ff9b::a9fe:a9fe]:8080/x'))).toMatchObject({ ok: false, kind: 'blocked' });
  });
});

describe('IPv6 forms that carry an IPv4 address', () => {
  it.each(EMBEDDED)('refuses %s as %s (%s form): %s', async (address, ipv4, form, reason) => {
    expect(await guard().checkHost(address)).toEqual({
      ok: false,
      kind: 'blocked',
      detail: `${address} is the ${form} form of ${ipv4}, ${reason}: blocked unless --allow-targets covers it`,
    });
    expect(embeddedIpv4(parseAddress(address))).toEqual({ form, ipv4: ipaddr.parse(ipv4) });
  });

  it.each(EMBEDDED)('allows %s when --allow-targets covers %s, the address it carries', async (address, ipv4) => {
    expect(await guard(`${ipv4}/32`).checkHost(address)).toEqual({ ok: true, addresses: [address] });
  });

  it.each([
    ['::ffff:8.8.8.8', 'IPv4-mapped'],
    ['::ffff:0:808:808', 'IPv4-translated'],
    ['::808:808', 'IPv4-compatible'],
    ['64:ff9b::808:808', 'NAT64'],
    ['64:ff9b:1::808:808', 'local-use NAT64'],
    ['2002:808:808::1', '6to4'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'Teredo'],
  ])('allows %s, the %s form of the public 8.8.8.8', async (address, form) => {
    expect(embeddedIpv4(parseAddress(address))).toEqual({ form, ipv4: ipaddr.parse('8.8.8.8') });
    expect(await guard().checkHost(address)).toEqual({ ok: true, addresses: [address] });
  });

  it('refuses a local-use NAT64 address outside the /96 layout, whose IPv4 address cannot be read, unless allowed as written', async () => {
    // The /48 layout of 169.254.169.254 (RFC 6052): its last 32 bits say 8.8.8.8.
    const address = '64:ff9b:1:a9fe:a9:fe00:808:808';
    expect(await guard().checkHost(address)).toEqual({
      ok: false,
      kind: 'blocked',
      detail: `${address} is local-use NAT64 outside the /96 layout (its IPv4 address cannot be read): blocked unless --allow-targets covers it`,
    });
    expect(await guard('8.8.8.8/32').checkHost(address)).toMatchObject({ ok: false });
    expect(await guard('64:ff9b:1::/48').checkHost(address)).toEqual({ ok: true, addresses: [address] });
  });

  it('matches the IPv6 ranges before the forms: :: and ::1 are not read as IPv4-compatible 0.0.0.0 and 0.0.0.1', () => {
    expect(blockedReason(ipaddr.parse('::'))).toEqual({ reason: 'unspecified' });
    expect(blockedReason(ipaddr.parse('::1'))).toEqual({ reason: 'loopback' });
  });

  it('reads a dotted tail as Node prints it: ::a.b.c.d is IPv4-compatible, ::ffff:a.b.c.d mapped', () => {
    expect(parseAddress('::127.0.0.1').toNormalizedString()).toBe('0:0:0:0:0:0:7f00:1');
    expect(parseAddress('::ffff:127.0.0.1').toNormalizedString()).toBe('0:0:0:0:0:ffff:7f00:1');
    expect(parseAddress('fe80::1%eth0').toNormalizedString()).toBe('fe80:0:0:0:0:0:0:1');
  });

  it('has a row above for every form', () => {
    const forms = new Set(EMBEDDED.map(([, , form]) => form));
    expect(IPV4_EMBEDDINGS.map((e) => e.form).filter((f) => !forms.has(f))).toEqual([]);
  });
});

describe('schemes', () => {
  it.each(['ftp://example.com/', 'file:///etc/passwd', 'gopher://127.0.0.1:6379/_INFO', 'ws://example.com/'])('refuses %s', async (url) => {
    expect(await guard().check(new URL(url))).toEqual({
      ok: false,
      kind: 'blocked',
      detail: `the scheme ${new URL(url).protocol} is not http:, https:, grpc: or grpcs:`,
    });
  });

  it('passes http:, https:, grpc: and grpcs:', async () => {
    expect(await guard().check(new URL('http://public.example/'))).toMatchObject({ ok: true });
    expect(await guard().check(new URL('https://public.example/'))).toMatchObject({ ok: true });
    expect(await guard().check(new URL('grpc://public.example:50051/a.B/C'))).toMatchObject({ ok: true });
    expect(await guard().check(new URL('grpcs://public.example:443/a.B/C'))).toMatchObject({ ok: true });
    expect(await guard().check(new URL('grpc://127.0.0.1:50051/a.B/C'))).toMatchObject({ ok: false, kind: 'blocked' });
  });
});
