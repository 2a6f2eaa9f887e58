import { describe, expect, it } from 'vitest';
import { clusterOptions } from '../src/backends/redis/cluster-connection.js';
import { clientOptions, parseRedisUrl } from '../src/backends/redis/connection.js';
import { RedisUnavailableError, translateError } from '../src/backends/redis/errors.js';
import { parseStoreUrl, StoreUrlError } from '../src/service/open-store.js';

// The `redis+cluster://` store URL: seed nodes, credentials, prefix, and the errors that name `--store` and the rule.

describe('redis+cluster:// store URLs', () => {
  it('reads the seed nodes, the credentials and the prefix', () => {
    expect(parseRedisUrl('redis+cluster://10.0.0.1:7000,10.0.0.2:7001/?prefix=staging')).toEqual({
      url: 'redis+cluster://10.0.0.1:7000,10.0.0.2:7001/',
      prefix: 'staging',
      cluster: { nodes: [{ host: '10.0.0.1', port: 7000 }, { host: '10.0.0.2', port: 7001 }] },
    });
    expect(parseRedisUrl('redis+cluster://app:s%40cret@redis-a,[::1]:7002')).toEqual({
      url: 'redis+cluster://app:s%40cret@redis-a,[::1]:7002',
      cluster: { nodes: [{ host: 'redis-a', port: 6379 }, { host: '::1', port: 7002 }], username: 'app', password: 's@cret' },
    });
    expect(parseRedisUrl('REDIS+CLUSTER://h:7000?prefix=p').cluster?.nodes).toEqual([{ host: 'h', port: 7000 }]);
    expect(parseStoreUrl('redis+cluster://h:7000')).toEqual({ kind: 'redis', url: 'redis+cluster://h:7000' });
  });

  it('refuses malformed cluster URLs with a StoreUrlError naming --store and the rule', () => {
    for (const [url, rule] of [
      ['redis+cluster://', /seed nodes as host:port separated by commas; got ""/],
      ['redis+cluster://h:7000,,h:7001', /seed nodes as host:port separated by commas; got ""/],
      ['redis+cluster://h:7000,h:99999', /seed nodes as host:port.*got "h:99999" \(a port from 1 to 65535\)/],
      ['redis+cluster://h:7000,h:', /seed nodes as host:port separated by commas; got "h:"\./],
      ['redis+cluster://h:0', /got "h:0" \(a port from 1 to 65535\)/],
      ['redis+cluster://h:7000,h:x', /got "h:x"/],
      ['redis+cluster://h:7000/1', /no database \(Redis Cluster has only database 0\); got path \/1/],
      ['redis+cluster://h:7000?db=1', /only the `prefix` query parameter; got `db`/],
      ['redis+cluster://h:7000?prefix=a}b', /`--store` `prefix`.*letters, digits/],
      ['redis+cluster://h:7000#x', /redis\+cluster:\/\/ URL to have the form redis\+cluster:\/\/\[user:password@\]host:port/],
    ] as const) {
      expect(() => parseRedisUrl(url), url).toThrow(StoreUrlError);
      expect(() => parseRedisUrl(url), url).toThrow(rule);
      expect(() => parseRedisUrl(url), url).toThrow(/`--store`/);
    }
  });

  it('does not echo a password in its errors', () => {
    expect(() => parseRedisUrl('redis+cluster://u:hunter2@h:7000?x=1')).toThrow(/^((?!hunter2).)*$/);
    expect(() => parseRedisUrl('redis+cluster://u:hunter2@h:7000/3')).toThrow(/^((?!hunter2).)*$/);
  });

  it('gives every node connection the single-server settings, and fails fast on a lost connection', () => {
    const node = clientOptions({ connectTimeoutMs: 1_234, commandTimeoutMs: 5_678 }, 'retryd:p');
    const options = clusterOptions({ nodes: [{ host: 'h', port: 7000 }], password: 'pw' }, node) ?? {};
    expect(options.redisOptions).toMatchObject({
      connectTimeout: 1_234,
      commandTimeout: 5_678,
      connectionName: 'retryd:p',
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      password: 'pw',
    });
    expect(options.redisOptions).not.toHaveProperty('retryStrategy');
    expect(options).toMatchObject({ lazyConnect: true, enableOfflineQueue: false, retryDelayOnFailover: 0 });
    // The cluster reconnects with the service's jittered back-off: 0 to 50 ms before the first try, never above 5 s.
    const delays = Array.from({ length: 200 }, () => options.clusterRetryStrategy?.(1) as number);
    expect(Math.max(...delays)).toBeLessThanOrEqual(50);
    expect(options.clusterRetryStrategy?.(40)).toBeLessThanOrEqual(5_000);
  });
});

describe('Redis Cluster errors', () => {
  it('reports a cluster not ready, unreachable or failing over as STORE_UNAVAILABLE', () => {
    for (const message of [
      "Cluster isn't ready and enableOfflineQueue options is false",
      'None of startup nodes is available',
      'Too many Cluster redirections. Last error: ReplyError: CLUSTERDOWN The cluster is down',
      'CLUSTERDOWN Hash slot not served',
      // A pipeline out of redirections (a slot whose master is gone) hands back the last one as it came.
      'MOVED 5335 127.0.0.1:42347',
      'ASK 5335 127.0.0.1:42347',
      'TRYAGAIN Multiple keys request during rehashing of slot',
    ]) {
      expect(translateError(new Error(message)), message).toBeInstanceOf(RedisUnavailableError);
    }
    const refused = new Error('ERR unknown command');
    expect(translateError(refused)).toBe(refused);
  });
});
