// The machine and the software a report's figures were measured on, read from the machine, the installed packages
// and the running servers, never typed in.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { release, type } from 'node:os';
import { dirname, join } from 'node:path';
import { Redis } from 'ioredis';
import { diskSyncLatency, machine, messageOf } from '../service/lib/report.mjs';
import { POSTGRES_URL, REDIS_URL, postgresDurability, redisDurability, withPostgres } from '../service/lib/servers.mjs';

/** The repository's root. */
export const ROOT = join(import.meta.dirname, '..', '..');

/** The version of an installed package (hoisted by the workspaces into the root's node_modules), or `missing`. */
export function installedVersion(name) {
  for (const dir of [join(ROOT, 'node_modules', name), join(ROOT, 'bench', 'node_modules', name), join(ROOT, 'packages', 'server', 'node_modules', name)]) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, 'utf8')).version;
  }
  return 'missing';
}

/** The SQLite library inside the better-sqlite3 that the service loads. */
function sqliteVersion() {
  try {
    const Database = createRequire(join(ROOT, 'packages', 'server', 'package.json'))('better-sqlite3');
    const db = new Database(':memory:');
    try {
      return db.prepare('SELECT sqlite_version() AS v').get().v;
    } finally {
      db.close();
    }
  } catch (error) {
    return `unknown (${messageOf(error)})`;
  }
}

/** A server's answer, or why there is none: an unreachable server must not stop a report of the other stores. */
async function ask(what, fn) {
  try {
    return await fn();
  } catch (error) {
    return { error: `${what}: ${messageOf(error)}` };
  }
}

async function redisFacts() {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    const version = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? 'unknown';
    return { version, durability: await redisDurability(redis) };
  } finally {
    redis.disconnect();
  }
}

async function postgresFacts() {
  const version = await withPostgres(async (c) => (await c.query('SHOW server_version')).rows[0].server_version);
  return { version, durability: await postgresDurability(POSTGRES_URL) };
}

/** The commit of the checkout at `cwd` (the repository's by default), and whether its work tree had changes on it. */
function gitState(cwd = ROOT) {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd, encoding: 'utf8' }).trim() !== '';
    return { commit, dirty };
  } catch {
    return { commit: 'unknown', dirty: false };
  }
}

/**
 * The service the scripts run when it is not this checkout's (`RETRYD_CLI`, see bench/service/lib/retryd-service.mjs):
 * its path and the commit of the checkout it was built in, e.g. a clean clone while others work in this one.
 */
function serviceBuild() {
  const cli = process.env.RETRYD_CLI;
  return cli === undefined ? undefined : { cli, ...gitState(dirname(cli)) };
}

/**
 * Everything a report states about where it was measured: CPU, cores, memory, kernel, Node, the versions of retryd,
 * its peers and its stores' servers, the stores' durability settings as the servers report them, the disk's durable
 * commit latency (the floor under every durable figure), the commit, and the service's build when it is another's.
 */
export async function collectEnvironment() {
  const m = machine();
  const redis = await ask('Redis', redisFacts);
  const postgres = await ask('PostgreSQL', postgresFacts);
  const disk = await diskSyncLatency();
  return {
    machine: { cpu: m.cpu, cores: m.nproc, memGiB: m.memGiB, kernel: `${type()} ${release()}`, node: m.node, load: m.load },
    git: gitState(),
    ...(serviceBuild() === undefined ? {} : { service: serviceBuild() }),
    versions: {
      retryd: installedVersion('@retryd/server'),
      bullmq: installedVersion('bullmq'),
      'pg-boss': installedVersion('pg-boss'),
      'better-sqlite3': installedVersion('better-sqlite3'),
      sqlite: sqliteVersion(),
      postgres: postgres.version ?? postgres.error,
      redis: redis.version ?? redis.error,
      undici: installedVersion('undici'),
    },
    durability: {
      sqlite: 'retryd serve --sync full (the default): synchronous=FULL, the WAL fsynced at every commit',
      postgres: postgres.durability?.label ?? postgres.error,
      redis: redis.durability?.label ?? redis.error,
    },
    diskSync: { p50: disk.p50, p99: disk.p99, max: disk.max, n: disk.n },
  };
}
