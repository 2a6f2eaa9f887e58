import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import { Client, credentials, type ChannelCredentials, type ChannelOptions } from '@grpc/grpc-js';
import type { GrpcTarget } from '../domain/grpc-target.js';

/**
 * Most gRPC channels kept open at once, one per target origin and checked address. Past this many, the least recently
 * used one is closed (its calls in flight finish first) and made again if asked for later: an evicted channel costs a
 * reconnect, nothing else.
 */
export const MAX_GRPC_CHANNELS = 64;

/**
 * Channel options of every channel. retryd makes each retry itself, with its own backoff and a durable record, so
 * grpc-js's own retries are off (one attempt is one call). A target that went away is dialled again within about a
 * second of being asked (grpc-js otherwise backs off reconnecting for up to two minutes, failing every call meanwhile).
 */
const BASE_OPTIONS: ChannelOptions = {
  'grpc.enable_retries': 0,
  'grpc.initial_reconnect_backoff_ms': 250,
  'grpc.max_reconnect_backoff_ms': 1_000,
  'grpc.primary_user_agent': 'retryd',
};

/**
 * The grpc-js channels (`Client`s) of a dispatcher: one per target origin, checked address and TLS settings, reused
 * across attempts, least recently used closed first (see {@link MAX_GRPC_CHANNELS}).
 *
 * A channel dials the IP literal the target guard checked (`ipv4:` / `ipv6:` targets, so grpc-js resolves nothing
 * itself), while the call's `:authority`, the TLS server name and the certificate check use the URL's host name
 * (`grpc.default_authority`, `grpc.ssl_target_name_override`): DNS rebinding gains nothing, and TLS still proves the name.
 */
export class GrpcChannels {
  readonly #channels = new Map<string, Client>();
  readonly #tls: ChannelCredentials;
  readonly #plain = credentials.createInsecure();
  readonly #max: number;

  /**
   * @param extraCa - PEM certificates trusted for `grpcs://` targets besides Node's bundled roots (`--grpc-ca-file`);
   *   undefined: Node's defaults (which include `NODE_EXTRA_CA_CERTS`)
   */
  constructor(extraCa?: Buffer, max = MAX_GRPC_CHANNELS) {
    // grpc-js replaces the roots with what it is given: the bundled ones go first so public targets keep working.
    this.#tls = credentials.createSsl(extraCa === undefined ? null : Buffer.from(`${rootCertificates.join('\n')}\n${extraCa.toString('utf8')}`));
    this.#max = max;
  }

  /** The channel to `target` through `address` (an address the guard checked for its host). */
  channelFor(target: GrpcTarget, address: string): Client {
    const key = `${target.key}|${address}`;
    let channel = this.#channels.get(key);
    if (channel !== undefined) {
      // Most recently used last: the first entry is the one closed when another channel is needed.
      this.#channels.delete(key);
      this.#channels.set(key, channel);
      return channel;
    }
    if (this.#channels.size >= this.#max) {
      const [oldestKey, oldest] = this.#channels.entries().next().value as [string, Client];
      this.#channels.delete(oldestKey);
      // grpc-js lets the calls in flight on a closed channel finish; new ones go to the channel made next time.
      oldest.close();
    }
    const dial = isIP(address) === 6 ? `ipv6:[${address}]:${target.port}` : `ipv4:${address}:${target.port}`;
    const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
    const options: ChannelOptions = { ...BASE_OPTIONS, 'grpc.default_authority': `${target.hostname}:${target.port}` };
    if (target.tls) options['grpc.ssl_target_name_override'] = host;
    channel = new Client(dial, target.tls ? this.#tls : this.#plain, options);
    this.#channels.set(key, channel);
    return channel;
  }

  /** Closes every channel (calls in flight finish, or fail at their deadline). */
  close(): void {
    for (const channel of this.#channels.values()) channel.close();
    this.#channels.clear();
  }

  /** Channels open now. */
  get size(): number {
    return this.#channels.size;
  }
}
