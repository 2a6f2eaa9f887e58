import { randomUUID } from 'node:crypto';
import { createServer, connect } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { Redis } from 'ioredis';
import { RedisStore } from '../src/backends/redis/redis-store.js';
import type { RedisStoreOptions } from '../src/backends/redis/redis-store.js';

/** The shared test server (never restarted or reconfigured by these tests). */
export const REDIS_URL = process.env['RETRYD_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

const prefixes = new Set<string>();

/** A key prefix no other test or run uses; its keys are deleted by {@link dropPrefixes}. */
export function freshPrefix(): string {
  const prefix = `test-${randomUUID().slice(0, 13)}`;
  prefixes.add(prefix);
  return prefix;
}

/** A new, not yet initialised store on its own prefix. */
export function freshStore(options: RedisStoreOptions = {}): RedisStore {
  return new RedisStore({ url: REDIS_URL, prefix: freshPrefix(), ...options });
}

/** A plain client for looking at keys from outside the store. */
export function adminClient(): Redis {
  return new Redis(REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 1 });
}

/** Every key of a prefix (tests only: SCAN walks the whole key space). */
export async function keysOf(client: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for (const pattern of [`{${prefix}:*`, `{${prefix}}:*`]) {
    let cursor = '0';
    do {
      const [next, batch] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
  }
  return keys;
}

/** Deletes the keys of every prefix handed out by {@link freshPrefix} in this file. */
export async function dropPrefixes(): Promise<void> {
  const client = adminClient();
  try {
    for (const prefix of prefixes) {
      const keys = await keysOf(client, prefix);
      for (let i = 0; i < keys.length; i += 500) await client.unlink(...keys.slice(i, i + 500));
    }
    prefixes.clear();
  } finally {
    client.disconnect();
  }
}

/** CRC16/XMODEM, as Redis Cluster hashes keys (cluster spec, appendix A). */
export function crc16(data: Buffer): number {
  let crc = 0;
  for (const byte of data) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The cluster slot of a key: the CRC16 of its hash tag (the first non-empty `{…}`) or of the whole key, mod 16384. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) return crc16(Buffer.from(key.slice(open + 1, close))) % 16384;
  }
  return crc16(Buffer.from(key)) % 16384;
}

/**
 * A loopback TCP proxy in front of the shared Redis: stopping it is an outage for the clients behind it only.
 * `stop()` closes the listener and cuts every connection; `start()` listens again on the same port.
 */
export class TcpProxy {
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  port = 0;
  /** Connections accepted since the proxy was made. */
  connections = 0;

  constructor(
    private readonly targetHost = '127.0.0.1',
    private readonly targetPort = 6379,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = createServer((client) => {
      this.connections++;
      const upstream = connect(this.targetPort, this.targetHost);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
