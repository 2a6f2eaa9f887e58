import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { GRPC_PROTOCOLS } from '../domain/grpc-target.js';
import { blockedReason, inRange, parseAddress, type IpAddress } from './blocked-ranges.js';

/** A network exempt from the block, as given to `--allow-targets`. */
export interface AllowedRange {
  /** The entry as written, e.g. `127.0.0.1/32`. */
  cidr: string;
  range: [IpAddress, number];
}

/** Thrown by {@link parseAllowList}; the message names `--allow-targets` and the bad entry. */
export class InvalidAllowListError extends Error {
  override readonly name = 'InvalidAllowListError';
  readonly code = 'INVALID_ALLOW_TARGETS';
  constructor(readonly entry: string) {
    super(
      `--allow-targets: ${JSON.stringify(entry)} is not a CIDR; expected a comma-separated list such as ` +
        '127.0.0.1/32,10.0.0.0/8,::1/128 (a bare address means that address alone)',
    );
  }
}

/**
 * Parses the allow-list of `--allow-targets` / `RETRYD_ALLOW_TARGETS`: CIDRs separated by commas (or given as
 * an array); a bare address stands for itself (`/32` or `/128`). Empty entries are ignored.
 *
 * @throws InvalidAllowListError naming the first bad entry
 * @example
 * ```ts
 * parseAllowList('127.0.0.1/32, ::1'); // two ranges
 * parseAllowList('10.0.0.0/33');       // throws: --allow-targets: "10.0.0.0/33" is not a CIDR; ...
 * ```
 */
export function parseAllowList(value: string | readonly string[] | undefined): AllowedRange[] {
  if (value === undefined) return [];
  const entries = (typeof value === 'string' ? value.split(',') : value.flatMap((v) => v.split(',')))
    .map((e) => e.trim())
    .filter((e) => e !== '');
  return entries.map((entry) => {
    const [address, bits, ...rest] = entry.split('/');
    if (address === undefined || rest.length > 0 || isIP(address) === 0) throw new InvalidAllowListError(entry);
    const max = isIP(address) === 4 ? 32 : 128;
    const prefix = bits === undefined ? max : Number(bits);
    if (bits !== undefined && !/^\d{1,3}$/.test(bits)) throw new InvalidAllowListError(entry);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) throw new InvalidAllowListError(entry);
    return { cidr: entry, range: [parseAddress(address), prefix] };
  });
}

/** Resolves a host name to every address it has (A and AAAA). */
export type HostLookup = (hostname: string) => Promise<string[]>;

/** The system resolver (`dns.lookup` with `all: true`), the one undici connects through. */
export const systemLookup: HostLookup = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** The verdict on a target: allowed, or refused with a sentence that says why. */
export type TargetVerdict =
  | { ok: true; addresses: string[] }
  /** `blocked`: an address is in a blocked range, or the scheme is not http or https. */
  | { ok: false; kind: 'blocked'; detail: string }
  /** The name does not exist (`code`: the resolver's, e.g. ENOTFOUND). */
  | { ok: false; kind: 'unresolvable'; detail: string; code: string }
  /** The resolver failed for now (EAI_AGAIN, timeout): the target may be fine, try again later. */
  | { ok: false; kind: 'lookup_failed'; detail: string; code: string };

/** Options of {@link TargetGuard}. */
export interface TargetGuardOptions {
  /** Networks exempt from the block (`--allow-targets`). Default none. */
  allow?: readonly AllowedRange[];
  /** Default {@link systemLookup}; tests inject a fixed table. */
  lookup?: HostLookup;
}

const LOCALHOST = /^(?:.+\.)?localhost\.?$/i;
const NOT_FOUND_CODES = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_NODATA']);

/** Most address verdicts a guard remembers before it starts again (each is a short string). */
const MAX_REMEMBERED_ADDRESSES = 4_096;

/** An IPv6 host as a URL writes it (`[::1]`) without its brackets; any other host as it is. */
const unbracketed = (hostname: string): string => (hostname.startsWith('[') ? hostname.slice(1, -1) : hostname);

/**
 * Refuses targets that would make retryd call into its own host, private network or a cloud metadata service
 * (server-side request forgery): loopback, private, unique-local, site-local, link-local, metadata, unspecified,
 * CGNAT, documentation, benchmarking, multicast, broadcast and reserved addresses, and every IPv6 form that carries
 * one of them as an IPv4 address (mapped, translated, compatible, NAT64, 6to4, Teredo; see `blockedReason`), unless
 * the allow-list covers the address. Only `http:`, `https:`, `grpc:` and `grpcs:` URLs pass (a gRPC URL's host is
 * normalised at enqueue, see `grpcTargetOf`).
 *
 * A host name is resolved and refused if any of its addresses is blocked; `localhost` and `*.localhost` are
 * loopback (127.0.0.1 and ::1) without asking DNS (RFC 6761).
 *
 * One guard makes both checks, so they cannot disagree: {@link TargetGuard.check} when a task is created (a fast 400),
 * and {@link TargetGuard.checkHost} on every connection the dispatcher opens (see `guardedConnector`), which then
 * connects to the addresses it checked, so a name that resolves elsewhere later (DNS rebinding) gains nothing.
 *
 * @example
 * ```ts
 * const guard = new TargetGuard({ allow: parseAllowList('127.0.0.1/32') });
 * await guard.check(new URL('http://127.0.0.1:8080/hook')); // { ok: true, addresses: ['127.0.0.1'] }
 * await guard.checkHost('169.254.169.254');
 * // { ok: false, kind: 'blocked', detail: '169.254.169.254 is link-local (the cloud metadata service): blocked unless --allow-targets covers it' }
 * ```
 */
export class TargetGuard {
  readonly #allow: readonly AllowedRange[];
  readonly #lookup: HostLookup;
  /** Concurrent checks of one host (a batch of 1,000 tasks to one service, a pool opening connections) share one lookup. */
  readonly #inflight = new Map<string, Promise<string[]>>();
  /**
   * The verdict on each address seen (the allow-list never changes for a guard): a batch of tasks to one service
   * judges its address once instead of parsing and matching it against every range per task.
   */
  readonly #refusals = new Map<string, string | null>();

  constructor(options: TargetGuardOptions = {}) {
    this.#allow = options.allow ?? [];
    this.#lookup = options.lookup ?? systemLookup;
  }

  /** The allow-list in force, as written. */
  get allowList(): string[] {
    return this.#allow.map((a) => a.cidr);
  }

  /** Judges the scheme and the host of `url`. Never throws for a resolver failure: see the verdict. */
  async check(url: URL): Promise<TargetVerdict> {
    return this.checkNow(url) ?? this.checkHost(url.hostname);
  }

  /**
   * Judges a host: an IP address (IPv6 with or without brackets) is checked as it is, a name is resolved and every
   * address it has is checked. The addresses of an `ok` verdict are the ones to connect to. Never throws.
   */
  async checkHost(hostname: string): Promise<TargetVerdict> {
    const host = unbracketed(hostname);
    return this.#verdictNow(host) ?? this.#checkName(host);
  }

  /**
   * {@link check} without a promise when no lookup is needed (the scheme is refused, or the host is an address or
   * `localhost`): the verdict {@link check} would give; undefined when the host is a name to resolve. An enqueue of a
   * thousand tasks to addresses decides each one in place instead of through a promise per task.
   */
  checkNow(url: URL): TargetVerdict | undefined {
    if (url.protocol !== 'http:' && url.protocol !== 'https:' && !GRPC_PROTOCOLS.has(url.protocol)) {
      return { ok: false, kind: 'blocked', detail: `the scheme ${url.protocol} is not http:, https:, grpc: or grpcs:` };
    }
    return this.checkHostNow(url.hostname);
  }

  /** {@link checkHost} without a promise when the host is an address or `localhost`; else undefined. */
  checkHostNow(hostname: string): TargetVerdict | undefined {
    return this.#verdictNow(unbracketed(hostname));
  }

  /** The verdict on a host (without brackets) that needs no lookup: an address, or `localhost`; else undefined. */
  #verdictNow(host: string): TargetVerdict | undefined {
    if (isIP(host) !== 0) return this.#verdict(host, [host]);
    if (LOCALHOST.test(host)) return this.#verdict(host, ['127.0.0.1', '::1']);
    return undefined;
  }

  /** Resolves a name and judges every address it has. */
  async #checkName(host: string): Promise<TargetVerdict> {
    let addresses: string[];
    try {
      addresses = await this.#resolve(host);
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      return typeof code === 'string' && NOT_FOUND_CODES.has(code)
        ? { ok: false, kind: 'unresolvable', detail: `the host ${host} does not resolve (${code})`, code }
        : {
            ok: false,
            kind: 'lookup_failed',
            detail: `the host ${host} could not be resolved: ${String(code ?? error)}`,
            code: typeof code === 'string' ? code : 'EAI_AGAIN',
          };
    }
    if (addresses.length === 0) {
      return { ok: false, kind: 'unresolvable', detail: `the host ${host} has no address`, code: 'ENOTFOUND' };
    }
    return this.#verdict(host, addresses);
  }

  /** The verdict on `host`, given the addresses it has: refused if any of them is. */
  #verdict(host: string, addresses: string[]): TargetVerdict {
    for (const text of addresses) {
      const refusal = this.#refusal(text);
      if (refusal !== undefined) {
        const via = text === host ? '' : ` (${host} resolves to it)`;
        return { ok: false, kind: 'blocked', detail: `${text}${via} is ${refusal}: blocked unless --allow-targets covers it` };
      }
    }
    return { ok: true, addresses };
  }

  /** What makes an address refused (e.g. `loopback`, `the NAT64 form of 10.0.0.1, private (RFC 1918)`), or undefined. */
  #refusal(text: string): string | undefined {
    const known = this.#refusals.get(text);
    if (known !== undefined) return known ?? undefined;
    const refusal = this.#judge(text);
    if (this.#refusals.size >= MAX_REMEMBERED_ADDRESSES) this.#refusals.clear();
    this.#refusals.set(text, refusal ?? null);
    return refusal;
  }

  #judge(text: string): string | undefined {
    let address: IpAddress;
    try {
      address = parseAddress(text);
    } catch {
      // Only a resolver of one's own can answer so; the system's gives addresses.
      return 'not an IP address';
    }
    const blocked = blockedReason(address);
    if (blocked === undefined) return undefined;
    const { embedded } = blocked;
    // An IPv6 form is allowed by an entry for the form itself or for the IPv4 address it carries.
    const allowed = this.#allow.some(
      (a) => inRange(address, a.range) || (embedded !== undefined && inRange(parseAddress(embedded.ipv4), a.range)),
    );
    if (allowed) return undefined;
    return embedded === undefined ? blocked.reason : `the ${embedded.form} form of ${embedded.ipv4}, ${blocked.reason}`;
  }

  #resolve(host: string): Promise<string[]> {
    const key = host.toLowerCase();
    let pending = this.#inflight.get(key);
    if (pending === undefined) {
      pending = this.#lookup(host).finally(() => this.#inflight.delete(key));
      this.#inflight.set(key, pending);
    }
    return pending;
  }
}
