import { Redis } from 'ioredis';
import type { Cluster, RedisOptions } from 'ioredis';
import { StoreUrlError } from '../../store/store-url-error.js';
import { storeRetryDelay } from '../../store/store-retry-delay.js';
import { CLUSTER_SCHEME, createClusterClient, parseClusterUrl } from './cluster-connection.js';
import type { ClusterSeeds } from './cluster-connection.js';
import { checkPrefix } from './store-prefix.js';
import { DEFAULT_REDIS_PREFIX } from './keys.js';

/**
 * A connection of the store: one server (`Redis`) or a Redis Cluster (`Cluster`, which routes each command to the
 * master of its keys' slot). Both have the same commands; what differs is that a pipeline or MULTI on a cluster may
 * only hold keys of one node, so work that spans partitions goes through `fanOut` (fan-out.ts).
 */
export type RedisClient = Redis | Cluster;

/** Where a `redis://`, `rediss://` or `redis+cluster://` `--store` URL points, once parsed. */
export interface RedisLocation {
  /** The URL for ioredis, without retryd's own query parameters (for a cluster: the URL as given, without them). */
  url: string;
  /** Key prefix (`?prefix=`), default `retryd`. */
  prefix?: string;
  /** The seed nodes of a Redis Cluster (`redis+cluster://`); absent for one server. */
  cluster?: ClusterSeeds;
}

/**
 * Parses a `--store` Redis URL: `redis://[user:password@]host[:port][/db][?prefix=name]`, or `rediss://` for TLS,
 * or `redis+cluster://[user:password@]host:port[,host:port...][/][?prefix=name]` for Redis Cluster (seed nodes:
 * the client learns the others from them). `prefix` names the key space, so several retryd deployments can share
 * one Redis.
 *
 * @example
 * ```ts
 * parseRedisUrl('redis://127.0.0.1:6379/0?prefix=staging'); // { url: 'redis://127.0.0.1:6379/0', prefix: 'staging' }
 * parseRedisUrl('redis+cluster://10.0.0.1:7000,10.0.0.2:7000'); // { url: ..., cluster: { nodes: [...] } }
 * ```
 */
export function parseRedisUrl(url: string): RedisLocation {
  if (url.toLowerCase().startsWith(`${CLUSTER_SCHEME}//`)) return parseClusterUrl(url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StoreUrlError('Expected `--store` to be a URL such as `redis://127.0.0.1:6379?prefix=retryd`.');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new StoreUrlError(`Expected \`--store\` to start with redis://, rediss:// or redis+cluster://; got ${parsed.protocol}//.`);
  }
  if (parsed.hostname === '') throw new StoreUrlError('Expected `--store` redis:// URL to name a host.');
  if (parsed.pathname !== '' && parsed.pathname !== '/' && !/^\/\d+$/.test(parsed.pathname)) {
    throw new StoreUrlError(`Expected \`--store\` redis:// URL path to be a database number such as /0; got ${parsed.pathname}.`);
  }
  const location: RedisLocation = { url: '' };
  for (const [name, value] of parsed.searchParams) {
    if (name !== 'prefix') {
      throw new StoreUrlError(`Expected \`--store\` redis:// URL to take only the \`prefix\` query parameter; got \`${name}\`.`);
    }
    location.prefix = checkPrefix(value);
  }
  parsed.search = '';
  location.url = parsed.toString();
  return location;
}

export { checkPrefix };

/** The default prefix, for callers that want to show it. */
export { DEFAULT_REDIS_PREFIX };

/** Connection settings of {@link RedisStore}. */
export interface RedisConnectionOptions {
  /** How long a connection attempt may take, in ms. Default 5000. */
  connectTimeoutMs?: number;
  /**
   * How long a command may wait for its reply, in ms, before it fails (an unreachable host that does not refuse
   * the connection). Default 10000. A write that timed out may still have been applied; every write of the store
   * is safe to send again (enqueue by idempotency key, completions by fencing token).
   */
  commandTimeoutMs?: number;
}

/**
 * Client settings that make an outage visible at once instead of hiding it in a queue:
 *
 * - `enableOfflineQueue: false`: a command sent while disconnected fails at once ("Stream isn't writeable"),
 *   which the API answers with 503, instead of waiting in memory for a server that may not come back;
 * - `maxRetriesPerRequest: 0` with `autoResendUnfulfilledCommands: false`: commands in flight when the connection
 *   drops fail at once rather than being sent again later (a resent claim could lease tasks nobody runs);
 * - a retry strategy that keeps reconnecting for ever, with the service's jittered back-off (`storeRetryDelay`: 50 ms
 *   up to 5 s), so the store recovers by itself and instances do not reconnect in lockstep;
 * - `lazyConnect`, so `init()` can wait for the first connection and report it failing.
 */
export function clientOptions(options: RedisConnectionOptions, connectionName: string): RedisOptions {
  return {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: options.connectTimeoutMs ?? 5_000,
    commandTimeout: options.commandTimeoutMs ?? 10_000,
    keepAlive: 10_000,
    connectionName,
    // ioredis counts `attempt` from 1 and starts again after a connection succeeds; full jitter needs nothing else.
    retryStrategy: (attempt) => storeRetryDelay(attempt, 0),
  };
}

/**
 * Opens a client on `location` with {@link clientOptions}: one server, or a cluster whose node connections take
 * them (see `clusterOptions`). It connects when `connect()` is called.
 */
export function createClient(location: RedisLocation, options: RedisConnectionOptions, connectionName: string): RedisClient {
  const settings = clientOptions(options, connectionName);
  if (location.cluster !== undefined) return createClusterClient(location.cluster, settings);
  return new Redis(location.url, settings);
}

/** QUIT once pending replies are in, or drop a connection that is not up (QUIT would fail without the offline queue). */
export async function quit(client: RedisClient): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'ready') {
    try {
      await client.quit();
      return;
    } catch {
      // Lost meanwhile: fall through.
    }
  }
  client.disconnect();
}
