import { spawn, execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, mkdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { PartitionKeys, subPartitionOf } from '../src/backends/redis/keys.js';
import { keySlot } from './redis-harness.js';
import { waitFor } from './wait-for.js';

// A real Redis Cluster on loopback for the tests that need one: 3 masters and 3 replicas, each a `redis-server`
// process on ports the OS chose (client and cluster bus), in a temporary directory, no persistence. One cluster per
// test file: start it in `beforeAll`, `stop()` it in `afterAll`. Slots left without a master stop only their own
// keys (`cluster-require-full-coverage no`), so a test can watch the rest of the cluster go on.

/**
 * `count` distinct ports the OS holds free at the moment they are asked: all are bound before any is released, so
 * none is handed out twice. Another process may still take one before it is used; `startNodeOnFreePorts` retries.
 */
async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  try {
    return await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolve, reject) => {
            server.once('error', reject);
            server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
          }),
      ),
    );
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}

/** One node of the cluster: its client port and process. */
export interface ClusterNode {
  port: number;
  process: ChildProcess;
  /** Resolves when the process has exited (killed or crashed). */
  exited: Promise<void>;
}

/** A node's role and slots, from `CLUSTER NODES` as the node asked sees them. */
export interface ClusterNodeView {
  port: number;
  role: 'master' | 'replica';
  /** The port of its master (replicas only). */
  masterPort?: number;
  /** Slot ranges it serves (masters only), `[first, last]`. */
  slots: [number, number][];
  failed: boolean;
}

/**
 * A 3-master, 3-replica Redis Cluster on loopback, built with `redis-cli --cluster create`.
 *
 * @example
 * ```ts
 * const cluster = await RedisCluster.start();
 * const store = new RedisStore({ url: cluster.url, prefix: freshPrefix() });
 * await cluster.stop();
 * ```
 */
export class RedisCluster {
  readonly #admins: Redis[] = [];

  private constructor(
    readonly dir: string,
    readonly nodes: ClusterNode[],
  ) {}

  /** Starts six nodes, joins them into a cluster, and resolves once every node reports `cluster_state:ok`. */
  static async start(): Promise<RedisCluster> {
    const dir = await mkdtemp(join(tmpdir(), 'retryd-cluster-'));
    const cluster = new RedisCluster(dir, []);
    try {
      for (let i = 0; i < 6; i++) cluster.nodes.push(await startNodeOnFreePorts(dir));
      const addresses = cluster.nodes.map((node) => `127.0.0.1:${node.port}`);
      await promisify(execFile)('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes'], {
        timeout: 60_000,
      });
      await cluster.waitSettled();
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** The `--store` URL of the cluster, naming every node as a seed, with `prefix`. */
  url(prefix: string): string {
    return `redis+cluster://${this.nodes.map((node) => `127.0.0.1:${node.port}`).join(',')}/?prefix=${prefix}`;
  }

  /** A plain client on one node (no redirections), disconnected by `stop()`. */
  admin(port: number): Redis {
    const client = new Redis({ host: '127.0.0.1', port, lazyConnect: false, maxRetriesPerRequest: 1, retryStrategy: () => null });
    client.on('error', () => undefined);
    this.#admins.push(client);
    return client;
  }

  /** The nodes still running. */
  live(): ClusterNode[] {
    return this.nodes.filter((node) => node.process.exitCode === null && node.process.signalCode === null);
  }

  /** Every node's role and slots, as a running node sees them. */
  async view(): Promise<ClusterNodeView[]> {
    const [asked] = this.live();
    if (asked === undefined) throw new Error('no node of the cluster is running');
    const text = (await this.admin(asked.port).call('CLUSTER', 'NODES')) as string;
    const lines = text.trim().split('\n').map((line) => line.split(' '));
    const portOf = new Map(lines.map((f) => [f[0] as string, Number(/:(\d+)@/.exec(f[1] ?? '')?.[1])]));
    return lines.map((f): ClusterNodeView => {
      const flags = (f[2] ?? '').split(',');
      const view: ClusterNodeView = {
        port: portOf.get(f[0] as string) as number,
        role: flags.includes('master') ? 'master' : 'replica',
        slots: f.slice(8).filter((s) => /^\d+(-\d+)?$/.test(s)).map((s) => {
          const [first, last] = s.split('-').map(Number) as [number, number?];
          return [first, last ?? first];
        }),
        failed: flags.includes('fail') || flags.includes('fail?'),
      };
      if (view.role === 'replica') view.masterPort = portOf.get(f[3] as string) as number;
      return view;
    });
  }

  /** The port of the master serving `key`'s slot. */
  async masterOf(key: string): Promise<number> {
    const slot = keySlot(key);
    const master = (await this.view()).find((n) => n.role === 'master' && !n.failed && n.slots.some(([a, b]) => slot >= a && slot <= b));
    if (master === undefined) throw new Error(`no master serves slot ${slot}`);
    return master.port;
  }

  /**
   * The first tenant id `w0`, `w1`, ... whose 3 sub-partitions under `prefix` fall on 3 different masters (its
   * home's slot clear of the masters' range ends: the parts sit a third of the slot space apart).
   */
  async tenantOverMasters(prefix: string): Promise<string> {
    for (let i = 0; ; i++) {
      const parts = [0, 1, 2].map((p) => new PartitionKeys(prefix, subPartitionOf(`w${i}`, p, 3)).base);
      if (new Set(await Promise.all(parts.map((base) => this.masterOf(base)))).size === 3) return `w${i}`;
    }
  }

  /** A replica of the master on `port`, in sync with it. */
  async replicaOf(port: number): Promise<number> {
    const replica = (await this.view()).find((n) => n.role === 'replica' && n.masterPort === port && !n.failed);
    if (replica === undefined) throw new Error(`the master on ${port} has no replica`);
    return replica.port;
  }

  /**
   * Waits until every running node reports `cluster_state:ok`, sees three masters none of them failed, and every
   * replica's link to its master is up (so a failover finds an up-to-date replica).
   */
  async waitSettled(timeoutMs = 60_000): Promise<void> {
    await waitFor(
      'the cluster to settle',
      async () => {
        try {
          for (const node of this.live()) {
            const client = this.admin(node.port);
            if (!((await client.call('CLUSTER', 'INFO')) as string).includes('cluster_state:ok')) return false;
            const replication = await client.info('replication');
            if (replication.includes('role:slave') && !replication.includes('master_link_status:up')) return false;
          }
          const view = await this.view();
          return view.filter((n) => n.role === 'master' && !n.failed && n.slots.length > 0).length === 3;
        } catch {
          return false;
        } finally {
          this.#closeAdmins();
        }
      },
      timeoutMs,
    );
  }

  /** SIGKILLs the node on `port` and waits for its exit. */
  async kill(port: number): Promise<void> {
    const node = this.nodes.find((n) => n.port === port);
    if (node === undefined) throw new Error(`no node on ${port}`);
    node.process.kill('SIGKILL');
    await node.exited;
  }

  /** Kills every node, disconnects the admin clients and removes the directory. */
  async stop(): Promise<void> {
    this.#closeAdmins();
    for (const node of this.live()) node.process.kill('SIGKILL');
    await Promise.all(this.nodes.map((node) => node.exited));
    await rm(this.dir, { recursive: true, force: true });
  }

  #closeAdmins(): void {
    for (const client of this.#admins.splice(0)) client.disconnect();
  }
}

/** Thrown when a node's process exits before it accepts connections; `log` is the tail of its log. */
class NodeExitedEarly extends Error {
  constructor(
    port: number,
    code: number | null,
    readonly log: string,
  ) {
    super(`redis-server on ${port} exited with ${code} before it accepted connections; its log ends:\n${log}`);
  }
}

/** The most attempts at a node whose ports another process took between `freePorts()` and the node's bind. */
const PORT_RACE_ATTEMPTS = 5;

/**
 * Starts one node on ports the OS holds free. Other test files run beside this one and bind ports too, so a port
 * freed by `freePorts()` can be taken before `redis-server` binds it: the node then exits with "Address already in
 * use", and is started again on fresh ports. Any other early exit fails at once, with the node's log.
 */
async function startNodeOnFreePorts(dir: string): Promise<ClusterNode> {
  for (let attempt = 1; ; attempt++) {
    try {
      const [port, busPort] = (await freePorts(2)) as [number, number];
      return await startNode(dir, port, busPort);
    } catch (error) {
      const portTaken = error instanceof NodeExitedEarly && /address already in use/i.test(error.log);
      if (!portTaken || attempt >= PORT_RACE_ATTEMPTS) throw error;
    }
  }
}

/** Starts one cluster-enabled `redis-server` in its own directory and resolves once it accepts connections. */
async function startNode(dir: string, port: number, busPort: number): Promise<ClusterNode> {
  const home = join(dir, String(port));
  await mkdir(home, { recursive: true });
  const args = [
    '--port', String(port),
    '--cluster-port', String(busPort),
    '--bind', '127.0.0.1',
    '--cluster-announce-ip', '127.0.0.1',
    '--cluster-enabled', 'yes',
    '--cluster-config-file', 'nodes.conf',
    '--cluster-node-timeout', '2000',
    // A slot left without any master stops only its own keys, so a test can watch the other masters go on.
    '--cluster-require-full-coverage', 'no',
    '--save', '',
    '--appendonly', 'no',
    '--dir', home,
    '--logfile', join(home, 'redis.log'),
  ];
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const node: ClusterNode = { port, process: child, exited };
  await waitFor(
    `redis-server on ${port} to accept connections`,
    async () => {
      if (child.exitCode !== null) {
        const log = await readFile(join(home, 'redis.log'), 'utf8').catch(() => '(no log)');
        throw new NodeExitedEarly(port, child.exitCode, log.split('\n').slice(-8).join('\n'));
      }
      const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on('error', () => undefined);
      try {
        await client.connect();
        return (await client.ping()) === 'PONG';
      } catch {
        return false;
      } finally {
        client.disconnect();
      }
    },
    20_000,
  );
  return node;
}

/**
 * One cluster for the calling test file: started before its tests, stopped after them. Returns its accessor, which
 * throws outside a test (before the cluster started).
 */
export function clusterForFile(): () => RedisCluster {
  let cluster: RedisCluster | undefined;
  beforeAll(async () => {
    cluster = await RedisCluster.start();
  }, 90_000);
  afterAll(async () => cluster?.stop());
  return () => {
    if (cluster === undefined) throw new Error('The cluster is only available inside a test.');
    return cluster;
  };
}
