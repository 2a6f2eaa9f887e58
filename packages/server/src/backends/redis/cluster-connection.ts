import { Cluster } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { StoreUrlError } from '../../store/store-url-error.js';
import { storeRetryDelay } from '../../store/store-retry-delay.js';
import type { RedisLocation } from './connection.js';
import { checkPrefix } from './store-prefix.js';

/** The scheme of a Redis Cluster `--store` URL. */
export const CLUSTER_SCHEME = 'redis+cluster:';

/** The seed nodes of a Redis Cluster, and the credentials every node takes. */
export interface ClusterSeeds {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
}

const FORM = 'redis+cluster://[user:password@]host:port[,host:port...][/][?prefix=name]';
const SHAPE = /^redis\+cluster:\/\/(?:([^@/?#]*)@)?([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?$/i;

/**
 * Parses `redis+cluster://[user:password@]host:port[,host:port...][/][?prefix=name]`: the seed nodes (any nodes of
 * the cluster, the client discovers the rest from them; the port defaults to 6379), the credentials every node
 * takes, and the key prefix. Cluster has only database 0, so the URL has no database path. Messages never repeat
 * the password.
 *
 * @example
 * ```ts
 * parseClusterUrl('redis+cluster://10.0.0.1:7000,10.0.0.2:7000/?prefix=retryd');
 * // { url: 'redis+cluster://10.0.0.1:7000,10.0.0.2:7000/', prefix: 'retryd', cluster: { nodes: [...] } }
 * ```
 */
export function parseClusterUrl(url: string): RedisLocation {
  const match = SHAPE.exec(url);
  if (match === null) throw new StoreUrlError(`Expected \`--store\` redis+cluster:// URL to have the form ${FORM}.`);
  const [, userinfo, seeds = '', path, query] = match;
  if (path !== undefined && path !== '/') {
    throw new StoreUrlError(
      `Expected \`--store\` redis+cluster:// URL to name no database (Redis Cluster has only database 0); got path ${path}.`,
    );
  }
  const cluster: ClusterSeeds = { nodes: seeds.split(',').map(parseSeed) };
  if (userinfo !== undefined && userinfo !== '') {
    const colon = userinfo.indexOf(':');
    const username = decodeURIComponent(colon < 0 ? userinfo : userinfo.slice(0, colon));
    if (username !== '') cluster.username = username;
    if (colon >= 0) cluster.password = decodeURIComponent(userinfo.slice(colon + 1));
  }
  const location: RedisLocation = { url: url.replace(/\?.*$/, ''), cluster };
  for (const [name, value] of new URLSearchParams(query ?? '')) {
    if (name !== 'prefix') {
      throw new StoreUrlError(`Expected \`--store\` redis+cluster:// URL to take only the \`prefix\` query parameter; got \`${name}\`.`);
    }
    location.prefix = checkPrefix(value);
  }
  return location;
}

/** One `host[:port]` of the seed list (IPv6 in brackets, as in any URL). */
function parseSeed(seed: string): { host: string; port: number } {
  const rule = `Expected \`--store\` redis+cluster:// URL to list seed nodes as host:port separated by commas; got ${JSON.stringify(seed)}`;
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]\s]+)(?::(\d+))?$/.exec(seed);
  if (match === null) throw new StoreUrlError(`${rule}.`);
  const port = match[2] === undefined ? 6379 : Number(match[2]);
  if (port < 1 || port > 65_535) throw new StoreUrlError(`${rule} (a port from 1 to 65535).`);
  return { host: (match[1] as string).replace(/^\[(.*)\]$/, '$1'), port };
}

/**
 * The cluster client's settings, for the same behaviour as one server's (`clientOptions` in connection.ts):
 *
 * - each node connection takes `node` (timeouts, keep-alive, name, no resend of commands lost with a connection),
 *   plus the URL's credentials;
 * - `enableOfflineQueue: false`: a command sent while the cluster is not connected fails at once;
 * - `retryDelayOnFailover: 0`: a command lost with a node's connection fails (STORE_UNAVAILABLE) instead of
 *   being sent again once the slots are refreshed, as on one server (it may have been applied; every write is
 *   safe to send again, but the caller decides);
 * - `MOVED`, `ASK`, `TRYAGAIN` and `CLUSTERDOWN` are refusals, not losses: they are followed as ioredis does by
 *   default (redirected, or tried again after 100 ms, at most 16 times), which rides through a resharding or the
 *   seconds of a failover where no master serves a slot;
 * - reconnecting to the cluster as a whole (every node lost) uses the service's jittered back-off.
 */
export function clusterOptions(seeds: ClusterSeeds, node: RedisOptions): ConstructorParameters<typeof Cluster>[1] {
  const { retryStrategy: _perNode, enableOfflineQueue: _queue, lazyConnect, ...perNode } = node;
  return {
    lazyConnect: lazyConnect ?? true,
    enableOfflineQueue: false,
    retryDelayOnFailover: 0,
    clusterRetryStrategy: (attempt) => storeRetryDelay(attempt, 0),
    redisOptions: {
      ...perNode,
      ...(seeds.username === undefined ? {} : { username: seeds.username }),
      ...(seeds.password === undefined ? {} : { password: seeds.password }),
    },
  };
}

/** Opens a cluster client on `seeds` with {@link clusterOptions}; it connects when `connect()` is called. */
export function createClusterClient(seeds: ClusterSeeds, node: RedisOptions): Cluster {
  return new Cluster(seeds.nodes, clusterOptions(seeds, node));
}
