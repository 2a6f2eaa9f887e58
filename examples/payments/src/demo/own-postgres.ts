import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/** A PostgreSQL server of the demo's own: its own data directory and loopback port, started, crashed and removed by it. */
export interface OwnPostgres {
  /** `postgres://payments@127.0.0.1:<port>/payments` (trust authentication: it listens on loopback only). */
  readonly url: string;
  readonly port: number;
  /**
   * Kills the server the hard way: SIGKILL to the postmaster and to every process it started, with no shutdown
   * checkpoint. The next {@link start} replays the write-ahead log, as after a crash of the machine's database.
   */
  crash(): Promise<void>;
  /** Starts it again on the same directory and port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it (a fast shutdown) and removes its directory. */
  close(): Promise<void>;
}

/** A TCP port free on loopback now (another process may take it before the server binds it: start retries). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * The directory of `initdb` and `postgres`: POSTGRES_BIN, else the newest `/usr/lib/postgresql/<version>/bin` (Debian
 * and Ubuntu's layout, what CI installs), else none (found on PATH).
 */
function binDir(): string | undefined {
  if (process.env.POSTGRES_BIN !== undefined && process.env.POSTGRES_BIN !== '') return process.env.POSTGRES_BIN;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/**
 * Who the server runs as. PostgreSQL refuses to run as root, so a root process (a CI container) starts it as the
 * `postgres` account the distribution's package made (its uid and gid: Node sets them on the child, no sudo needed).
 */
function serverAccount(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch (error) {
    throw new Error('PostgreSQL does not run as root, and there is no postgres account to run it as: create one, or run the demo as another user', { cause: error });
  }
}

/** The processes whose parent is `pid` (Linux's /proc; elsewhere none, and a restart waits for them to go). */
function childrenOf(pid: number): number[] {
  if (!existsSync('/proc')) return [];
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so read after its last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return children;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Polls `check` every 50 ms until it is true, or throws `what` after `timeoutMs`. */
async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * Creates a PostgreSQL cluster in a temporary directory (`initdb`), starts `postgres` on a free loopback port and
 * creates the `payments` database. Durable as any: `fsync` and `synchronous_commit` keep their defaults (on), so a
 * commit is on disk before it is acknowledged and survives {@link OwnPostgres.crash}.
 *
 * It leaves the machine's own PostgreSQL alone (other programs use it), and is gone when the process exits.
 */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = binDir();
  const command = (name: string): string => (bin === undefined ? name : join(bin, name));
  const account = serverAccount();
  const dir = mkdtempSync(join(tmpdir(), 'retryd-payments-pg-'));
  if (account !== undefined) chownSync(dir, account.uid, account.gid);
  const data = join(dir, 'data');
  const log = join(dir, 'postgres.log');
  const asServer = { cwd: dir, ...(account ?? {}) };
  let child: ChildProcess | undefined;
  let port = 0;
  const removeAtExit = (): void => {
    if (child?.pid !== undefined && alive(child.pid)) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', removeAtExit);

  // The template is written without fsync (initdb's --no-sync): it is in the page cache long before any crash of a
  // process can touch it; what the demo commits later is fsynced.
  execFileSync(command('initdb'), ['-D', data, '-U', 'payments', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], { ...asServer, stdio: 'pipe' });

  const tail = (): string => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').slice(-3).join(' / ') : '');
  const accepts = async (database: string): Promise<boolean> => {
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'payments', database, connectionTimeoutMillis: 1_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const launch = async (): Promise<void> => {
    const out = openSync(log, 'a');
    if (account !== undefined) chownSync(log, account.uid, account.gid);
    const args = ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'shared_buffers=64MB', '-c', 'max_connections=200'];
    const started = spawn(command('postgres'), args, { ...asServer, stdio: ['ignore', out, out] });
    closeSync(out);
    child = started;
    const exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
    let gone = false;
    void exited.then(() => (gone = true));
    await until(`postgres on ${port} to accept connections (${log})`, async () => gone || (await accepts('postgres')), 60_000);
    if (gone) throw new Error(`postgres on ${port} exited: ${tail()}`);
  };

  // Once the server has run, its port is in every URL the demo handed out: a restart keeps it, however long it takes.
  let started = false;
  const start = async (): Promise<void> => {
    // Before the first start, a port taken between its choice and the bind is chosen again; after a crash, a child the
    // kill missed may still hold the old port or shared memory for a moment: the same port is tried again.
    for (let attempt = 1; ; attempt++) {
      try {
        await launch();
        started = true;
        return;
      } catch (error) {
        if (attempt === (started ? 30 : 5)) throw error;
        if (!started && /address already in use/i.test(tail())) port = await freePort();
        await sleep(Math.min(200 * attempt, 1_000));
      }
    }
  };

  try {
    port = await freePort();
    await start();
    const admin = new pg.Client({ host: '127.0.0.1', port, user: 'payments', database: 'postgres' });
    await admin.connect();
    await admin.query('CREATE DATABASE payments').finally(() => admin.end());
  } catch (error) {
    removeAtExit();
    process.off('exit', removeAtExit);
    throw error;
  }

  return {
    get url() {
      return `postgres://payments@127.0.0.1:${port}/payments`;
    },
    get port() {
      return port;
    },
    async crash() {
      const postmaster = child;
      if (postmaster?.pid === undefined || postmaster.exitCode !== null || postmaster.signalCode !== null) return;
      const exited = new Promise((resolve) => postmaster.once('exit', resolve));
      const children = childrenOf(postmaster.pid);
      postmaster.kill('SIGKILL');
      for (const pid of children) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      await exited;
      await until('the killed server processes to be gone', () => children.every((pid) => !alive(pid)), 10_000);
    },
    start,
    async close() {
      const running = child;
      if (running !== undefined && running.exitCode === null && running.signalCode === null) {
        const exited = new Promise((resolve) => running.once('exit', resolve));
        // SIGINT: a fast shutdown (clients are disconnected, a checkpoint written); SIGKILL if it hangs.
        running.kill('SIGINT');
        const stuck = setTimeout(() => running.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(stuck);
      }
      rmSync(dir, { recursive: true, force: true });
      process.off('exit', removeAtExit);
    },
  };
}
