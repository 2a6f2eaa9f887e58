import { describe, expect, it, vi } from 'vitest';
import { InvalidAllowListError, TargetGuard, parseAllowList, type HostLookup } from '../src/security/target-guard.js';

const table: Record<string, string[]> = {
  'public.example': ['93.184.216.34', '2606:2800:220:1::1946'],
  'private.example': ['192.168.1.20'],
  'mixed.example': ['93.184.216.34', '10.0.0.7'],
  'metadata.example': ['169.254.169.254'],
};
const lookup: HostLookup = async (host) => {
  const found = table[host];
  if (found !== undefined) return found;
  if (host === 'flaky.example') throw Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' });
  throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
};

const guard = (allow?: string) => new TargetGuard({ allow: parseAllowList(allow), lookup });
const check = (url: string, allow?: string) => guard(allow).check(new URL(url));
const refusal = async (url: string, allow?: string) => {
  const verdict = await check(url, allow);
  if (verdict.ok) throw new Error(`${url} was allowed`);
  return verdict;
};

// Every range and IPv6 form is in target-ranges.test.ts; these are about spellings, names and the allow-list.
describe('TargetGuard: blocked ranges', () => {
  it.each(['http://2130706433/', 'http://0x7f.1/', 'http://127.1/', 'http://0177.0.0.1/', 'http://0/'])(
    'refuses %s, an unusual spelling of a blocked address',
    async (url) => {
      expect((await refusal(url)).kind).toBe('blocked');
    },
  );

  it.each(['http://localhost:3000/', 'http://LOCALHOST./', 'http://api.localhost/'])(
    'refuses %s as loopback without asking DNS',
    async (url) => {
      const spy = vi.fn(lookup);
      const verdict = await new TargetGuard({ lookup: spy }).check(new URL(url));
      expect(verdict).toMatchObject({ ok: false, kind: 'blocked' });
      expect(spy).not.toHaveBeenCalled();
    },
  );

  it.each([
    'http://93.184.216.34/',
    'https://8.8.8.8/',
    'http://172.32.0.1/',
    'http://100.128.0.1/',
    'http://169.255.0.1/',
    'http://[2606:4700:4700::1111]/',
    'http://[::ffff:8.8.8.8]/',
  ])('allows the public address %s', async (url) => {
    expect(await check(url)).toMatchObject({ ok: true });
  });

  it('judges a URL by its host as URL gives it, IPv6 in brackets and IPv4-mapped forms rewritten in hex', async () => {
    expect((await refusal('http://[::ffff:127.0.0.1]/')).detail).toBe(
      '::ffff:7f00:1 is the IPv4-mapped form of 127.0.0.1, loopback: blocked unless --allow-targets covers it',
    );
    expect((await refusal('http://169.254.169.254/latest/meta-data/')).detail).toBe(
      '169.254.169.254 is link-local (the cloud metadata service): blocked unless --allow-targets covers it',
    );
  });
});

describe('TargetGuard: host names', () => {
  it('allows a name whose every address is public', async () => {
    expect(await check('https://public.example/hook')).toEqual({
      ok: true,
      addresses: ['93.184.216.34', '2606:2800:220:1::1946'],
    });
  });

  it('refuses a name that resolves to a private or metadata address, saying so', async () => {
    expect((await refusal('https://private.example/')).detail).toBe(
      '192.168.1.20 (private.example resolves to it) is private (RFC 1918): blocked unless --allow-targets covers it',
    );
    expect((await refusal('https://metadata.example/')).detail).toContain('cloud metadata service');
  });

  it('refuses a name if any one of its addresses is blocked', async () => {
    expect((await refusal('https://mixed.example/')).detail).toContain('10.0.0.7');
  });

  it('tells a name that does not exist from a resolver that failed for now', async () => {
    expect(await refusal('https://nowhere.example/')).toMatchObject({ kind: 'unresolvable' });
    expect(await refusal('https://flaky.example/')).toMatchObject({ kind: 'lookup_failed' });
  });

  it('refuses a resolver answer that is not an IP address', async () => {
    const odd = new TargetGuard({ lookup: async () => ['not-an-ip'] });
    expect(await odd.checkHost('odd.example')).toEqual({
      ok: false,
      kind: 'blocked',
      detail: 'not-an-ip (odd.example resolves to it) is not an IP address: blocked unless --allow-targets covers it',
    });
  });

  it('shares one lookup among concurrent checks of the same host', async () => {
    const spy = vi.fn(lookup);
    const g = new TargetGuard({ lookup: spy });
    const verdicts = await Promise.all(Array.from({ length: 20 }, () => g.check(new URL('https://public.example/'))));
    expect(verdicts.every((v) => v.ok)).toBe(true);
    expect(spy).toHaveBeenCalledTimes(1);
  });
});

describe('TargetGuard: the allow-list', () => {
  it('accepts 127.0.0.1 with 127.0.0.1/32 and nothing else of the loopback range', async () => {
    expect(await check('http://127.0.0.1:9000/', '127.0.0.1/32')).toMatchObject({ ok: true });
    expect(await check('http://[::ffff:127.0.0.1]/', '127.0.0.1/32')).toMatchObject({ ok: true });
    expect((await refusal('http://127.0.0.2/', '127.0.0.1/32')).kind).toBe('blocked');
    expect((await refusal('http://[::1]/', '127.0.0.1/32')).kind).toBe('blocked');
  });

  it('covers whole networks, of either family', async () => {
    expect(await check('https://private.example/', '192.168.0.0/16')).toMatchObject({ ok: true });
    expect(await check('http://[fd00::5]/', 'fd00::/8')).toMatchObject({ ok: true });
    expect(await check('http://localhost/', '127.0.0.0/8, ::1')).toMatchObject({ ok: true });
    expect((await refusal('http://localhost/', '127.0.0.0/8')).detail).toContain('::1');
    expect((await refusal('https://mixed.example/', '192.168.0.0/16')).detail).toContain('10.0.0.7');
  });

  it('parses comma-separated CIDRs, arrays and bare addresses', () => {
    expect(parseAllowList(' 127.0.0.1/32 , 10.0.0.0/8,,::1 ').map((a) => a.cidr)).toEqual([
      '127.0.0.1/32',
      '10.0.0.0/8',
      '::1',
    ]);
    expect(parseAllowList(['127.0.0.1/32,::1/128', '192.168.0.0/16'])).toHaveLength(3);
    expect(parseAllowList(undefined)).toEqual([]);
    expect(parseAllowList('')).toEqual([]);
    expect(guard('127.0.0.1/32, ::1/128').allowList).toEqual(['127.0.0.1/32', '::1/128']);
  });

  it.each(['10.0.0.0/33', '::1/129', 'localhost', '10.0.0.0/8/1', '/8', '10.0.0.0/', '10.0.0.0/-1', '10.0.0.0/8a', '999.1.1.1/32'])(
    'refuses the entry %s, naming --allow-targets and the entry',
    (entry) => {
      expect(() => parseAllowList(`127.0.0.1/32,${entry}`)).toThrow(InvalidAllowListError);
      expect(() => parseAllowList(`127.0.0.1/32,${entry}`)).toThrow(`--allow-targets: ${JSON.stringify(entry)} is not a CIDR`);
    },
  );
});

describe('TargetGuard: verdicts without a promise', () => {
  it.each([
    'http://93.184.216.34/x',
    'http://10.0.0.1/',
    'http://[::1]:8080/',
    'http://localhost/',
    'ftp://93.184.216.34/',
    'http://192.168.1.20/',
  ])('gives for %s (no lookup needed) the verdict check gives', async (url) => {
    const g = guard('192.168.0.0/16');
    expect(g.checkNow(new URL(url))).toEqual(await g.check(new URL(url)));
  });

  it('leaves a name to check, which resolves it', () => {
    expect(guard().checkNow(new URL('https://public.example/'))).toBeUndefined();
    expect(guard().checkHostNow('public.example')).toBeUndefined();
  });
});
