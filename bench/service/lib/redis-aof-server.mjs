// A redis-server of the benchmark's own, with AOF on, as Redis is deployed for tasks that matter (docs/stores.md,
// "Durability depends on AOF"): the machine's Redis at 6379 runs without persistence, so W1's `--redis-aof` runs
// retryd and BullMQ a second time on this one. A free loopback port, its files in a temporary directory on the same
// disk as the SQLite figures' (os.tmpdir()), both gone when it stops, or when the process exits (Ctrl-C, an error).

import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { waitFor } from './report.mjs';
import { redisDurability } from './servers.mjs';

/** The `appendfsync` policies `--redis-aof` takes: Redis's default AOF policy, and the durable one. */
export const AOF_POLICIES = Object.freeze(['everysec', 'always']);

/** The redis-server binary: REDIS_SERVER, else the one on PATH. */
const REDIS_SERVER = process.env.REDIS_SERVER ?? 'redis-server';

/** A TCP port free on loopback now (the OS's choice; another process may take it before redis-server binds it). */
async function freePort() {
  const server = createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(undefined));
  });
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const running = (child) => child.exitCode === null && child.signalCode === null;

/** The server's log so far ('' before it writes one). */
const logOf = (file) => readFile(file, 'utf8').catch(() => '');

/**
 * Starts `redis-server --port P --bind 127.0.0.1 --save "" --appendonly yes --appendfsync <appendfsync> --dir <tmp>`
 * and resolves once it logs that it accepts connections, with its `url`, `pid`, `dir` and `durability` (read back
 * from it, as for every store: `redisDurability`). `stop()` shuts it down and removes its directory. A port taken
 * between the choice and the bind is chosen again (three tries).
 */
export async function startAofRedis({ appendfsync = 'everysec' } = {}) {
  if (!AOF_POLICIES.includes(appendfsync)) throw new Error(`--redis-aof must be one of ${AOF_POLICIES.join(', ')}, got ${appendfsync}`);
  const dir = await mkdtemp(join(tmpdir(), 'retryd-bench-redis-aof-'));
  let child;
  const removeAtExit = () => {
    if (child !== undefined && running(child)) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', removeAtExit);
  try {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const log = join(dir, `redis-${port}.log`);
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', appendfsync, '--dir', dir, '--logfile', log];
      child = spawn(REDIS_SERVER, args, { stdio: 'ignore' });
      await new Promise((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', (e) => reject(new Error(`--redis-aof: cannot start ${REDIS_SERVER} (${e.message}); install Redis or set REDIS_SERVER`)));
      });
      // Redis logs this line once it listens and has loaded its (empty) AOF.
      let exited = false;
      await waitFor(`redis-server on ${port} to accept connections (see ${log})`, async () => {
        exited = !running(child);
        return exited || /Ready to accept connections/.test(await logOf(log));
      }, { timeoutMs: 20_000, everyMs: 20 });
      if (!exited) {
        const url = `redis://127.0.0.1:${port}`;
        const client = new Redis(url, { maxRetriesPerRequest: null });
        const durability = await redisDurability(client).finally(() => client.quit());
        // A process that logged has a pid.
        return { url, port, pid: /** @type {number} */ (child.pid), dir, appendfsync, durability, stop: () => stop(child, dir, removeAtExit) };
      }
      const tail = (await logOf(log)).trim().split('\n').slice(-3).join(' / ');
      if (attempt === 3 || !/address already in use/i.test(tail)) throw new Error(`redis-server on ${port} exited (${child.exitCode ?? child.signalCode}): ${tail}`);
    }
  } catch (error) {
    removeAtExit();
    process.off('exit', removeAtExit);
    throw error;
  }
}

/** Ends the server (SIGTERM: Redis closes its AOF and exits; SIGKILL after 10 s) and removes its directory. */
async function stop(child, dir, removeAtExit) {
  if (running(child)) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const stuck = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(stuck);
  }
  await rm(dir, { recursive: true, force: true });
  process.off('exit', removeAtExit);
}
