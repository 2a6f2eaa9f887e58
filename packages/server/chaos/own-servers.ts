import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, mkdir, readdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { POSTGRES_URL } from '../test/postgres-harness.js';
import { waitFor } from '../test/wait-for.js';

// Servers of the suite's own, for the faults that may not touch the shared ones (colleagues' runs use them):
// a PostgreSQL instance and a redis-server to restart, a database to cut connections in, a tmpfs to fill.

const run = promisify(execFile);

/** A TCP port free on loopback now (the OS's choice). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no address');
  return address.port;
}

/** A database of its own on the shared PostgreSQL server; `terminateBackends` cuts only its connections. */
export class OwnDatabase {
  readonly name = `retryd_chaos_${randomBytes(6).toString('hex')}`;

  get url(): string {
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${this.name}`;
    return url.toString();
  }

  async create(): Promise<void> {
    await this.admin((client) => client.query(`CREATE DATABASE ${this.name}`));
  }

  /** `pg_terminate_backend` of every connection to this database; resolves with how many were cut. */
  terminateBackends(): Promise<number> {
    return this.admin(async (client) => {
      const { rows } = await client.query<{ cut: boolean }>(
        'SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [this.name],
      );
      return rows.filter((row) => row.cut).length;
    });
  }

  async drop(): Promise<void> {
    await this.admin((client) => client.query(`DROP DATABASE IF EXISTS ${this.name} WITH (FORCE)`));
  }

  private async admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  }
}

/** The newest PostgreSQL server binaries of the machine (Debian's /usr/lib/postgresql/<major>/bin). */
async function postgresBin(): Promise<string> {
  const majors = (await readdir('/usr/lib/postgresql')).map(Number).filter(Number.isFinite).sort((a, b) => b - a);
  if (majors[0] === undefined) throw new Error('no PostgreSQL server in /usr/lib/postgresql');
  return `/usr/lib/postgresql/${majors[0]}/bin`;
}

/** Runs a PostgreSQL tool as the `postgres` user when we are root (initdb and the server refuse root). */
function asPostgres(command: string, args: string[]): Promise<unknown> {
  return process.getuid?.() === 0 ? run('runuser', ['-u', 'postgres', '--', command, ...args]) : run(command, args);
}

/** A throwaway PostgreSQL instance (initdb in `dir`, trust auth, a free port), to restart at will. */
export class OwnPostgres {
  port = 0;
  private bin = '';
  private readonly data: string;

  constructor(private readonly dir: string) {
    this.data = join(dir, 'data');
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  async start(): Promise<void> {
    this.bin = await postgresBin();
    this.port = await freePort();
    await mkdir(this.data, { recursive: true });
    if (process.getuid?.() === 0) {
      const ids = await run('id', ['-u', 'postgres']).then((r) => Number(r.stdout), () => NaN);
      const gid = await run('id', ['-g', 'postgres']).then((r) => Number(r.stdout), () => NaN);
      for (const path of [this.dir, this.data]) await chown(path, ids, gid);
    }
    // -N: a throwaway cluster needs no fsync at creation; the server itself runs with fsync on, as in production.
    await asPostgres(`${this.bin}/initdb`, ['-D', this.data, '-U', 'postgres', '-A', 'trust', '-N', '--no-instructions']);
    await this.ctl('start');
  }

  /** `pg_ctl restart -m fast`: every connection is cut, the server is down for a moment, then back on the same port. */
  async restart(): Promise<void> {
    await this.ctl('restart');
  }

  async stop(): Promise<void> {
    await this.ctl('stop').catch(() => undefined);
  }

  private ctl(action: 'start' | 'restart' | 'stop'): Promise<unknown> {
    const options = `-p ${this.port} -c listen_addresses=127.0.0.1 -k ${this.dir} -c fsync=on`;
    return asPostgres(`${this.bin}/pg_ctl`, [action, '-D', this.data, '-m', 'fast', '-w', '-l', join(this.dir, 'log'), '-o', options]);
  }
}

/** A redis-server of its own on a free port, with the durable AOF setting (`appendfsync always`). */
export class OwnRedis {
  port = 0;
  private child: ChildProcess | undefined;

  constructor(private readonly dir: string) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', ''],
      { stdio: 'ignore' },
    );
    this.child = child;
    await waitFor('redis-server to answer', () => run('redis-cli', ['-p', String(this.port), 'ping']).then((r) => r.stdout.trim() === 'PONG', () => false), 20_000);
  }

  /** `kill -9` of the server, then a new one on the same port and AOF: what was acknowledged must come back. */
  async restart(): Promise<void> {
    await this.kill();
    await this.start();
  }

  async stop(): Promise<void> {
    await this.kill();
  }

  private async kill(): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}

/** A tmpfs of `sizeMb` mounted on `dir` (we run as root), to fill up. */
export async function mountTmpfs(dir: string, sizeMb: number): Promise<() => Promise<void>> {
  await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir]);
  return async () => {
    await run('umount', ['-l', dir]);
  };
}
