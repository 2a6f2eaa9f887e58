// Runs `retryd serve` (the built CLI) as a child process and talks to its HTTP API with undici.
// The load generator and the service never share an event loop.

import { spawn, spawnSync } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { inParallel, statusOf } from './report.mjs';

const ROOT = join(import.meta.dirname, '..', '..', '..');
/**
 * The built CLI. `RETRYD_CLI=/path/to/dist/cli/main.js` benchmarks another build (e.g. a patched copy, to measure
 * a fix before it lands) with the same harness.
 */
export const CLI = process.env.RETRYD_CLI ?? join(ROOT, 'packages', 'server', 'dist', 'cli', 'main.js');
const CLK_TCK = 100; // Linux USER_HZ; /proc/<pid>/stat reports utime and stime in these ticks.

/**
 * Whether a build's `retryd serve` takes a flag (from its `--help`): a benchmark runs the same configuration on builds
 * from before the flag existed (`--baseline`), where the flag's absence is the old behaviour.
 */
export function serveHasFlag(cli, flag) {
  const r = spawnSync(process.execPath, [cli, 'serve', '--help'], { encoding: 'utf8' });
  return r.stdout.includes(flag);
}

/** `/targets/{targetKey}`: the origin URL-encoded as one path segment. */
export const targetPath = (origin) => `/targets/${encodeURIComponent(origin)}`;

/**
 * Every per-target protection off, as a `PUT /targets/{targetKey}` body: for a target whose failures are by design
 * (W1's flaky downstream), so the figure is that of the retry path alone. Mirrors the service's `PROTECTIONS_OFF`.
 */
export const PROTECTIONS_OFF_PATCH = Object.freeze({
  breaker: { enabled: false },
  rateLimit: { ratePerSecond: null, burst: null },
  maxInFlight: null,
  adaptive: { enabled: false },
  retryBudget: { enabled: false },
  stormDetection: { enabled: false },
  retryAfterHoldsTarget: false,
});

/** Services started by this process: killed if the benchmark exits early (Ctrl-C, a timeout, an error). */
const children = new Set();
process.once('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(130));

/**
 * Starts `retryd serve --port 0 --store <store> --allow-targets 127.0.0.1/32 [...]` and resolves once its
 * `"event":"start"` line is printed. `nodeArgs` go before the script (e.g. `--cpu-prof`); `cli` is the built
 * `dist/cli/main.js` to run (default {@link CLI}; the benchmarks' `--baseline` runs an older build beside it); `env`
 * is added to this process's environment for the service.
 *
 * @param {{ cli?: string | undefined, store: string, sync?: string | undefined, concurrency?: number | undefined,
 *   extraArgs?: string[] | undefined, nodeArgs?: string[] | undefined, env?: Record<string, string> | undefined }} options
 */
export async function startRetryd({ cli = CLI, store, sync = 'full', concurrency, extraArgs = [], nodeArgs = [], env = {} }) {
  const args = [...nodeArgs, cli, 'serve', '--port', '0', '--store', store, '--allow-targets', '127.0.0.1/32', '--sync', sync];
  if (concurrency !== undefined) args.push('--concurrency', String(concurrency));
  args.push(...extraArgs);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const logs = [];
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d.toString()));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  /** @type {Record<string, any>} The service's `"event":"start"` log line. */
  let startLine = {};
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        entry = { raw: line };
      }
      // Keep the log small: a W2 run must not hold a line per task in the bench process.
      if (logs.length < 10_000) logs.push(entry);
      if (entry.event === 'start') {
        startLine = entry;
        // Every build so far prints its address on the start line; say so plainly if one stops doing it.
        if (typeof entry.url === 'string') resolve(entry.url);
        else reject(new Error(`retryd (${cli}) printed a start line without a url: ${line}`));
      }
    });
    void exited.then((code) => reject(new Error(`retryd (${cli}) exited with ${code} before starting: ${stderr}`)));
  });
  // A durability figure is only worth its label if the service ran with it: builds before 4d3f0ad ignored --sync.
  let syncConfirmed = false;
  if (store.startsWith('sqlite:') && startLine.sqliteSync !== undefined) {
    if (startLine.sqliteSync !== sync) {
      child.kill('SIGKILL');
      throw new Error(`retryd ran with sqliteSync=${startLine.sqliteSync} although --sync ${sync} was given`);
    }
    syncConfirmed = true;
  }
  const api = new Pool(url, { connections: 8, keepAliveTimeout: 120_000 });
  const pid = child.pid;

  async function call(method, path, body, extraHeaders = {}) {
    const res = await api.request({
      method,
      path,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...extraHeaders },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.body.text();
    const json = text === '' ? undefined : JSON.parse(text);
    if (res.statusCode >= 400) {
      const err = /** @type {Error & { statusCode?: number }} */ (new Error(`${method} ${path} → ${res.statusCode}: ${text.slice(0, 500)}`));
      err.statusCode = res.statusCode;
      throw err;
    }
    return json;
  }

  async function enqueueBatch(tasks, { minimal = false } = {}) {
    const { results } = await call('POST', '/retry-tasks/batch', { tasks }, minimal ? { prefer: 'return=minimal' } : {});
    const bad = results.filter((r) => r.status !== 201 && r.status !== 200);
    if (bad.length > 0) throw new Error(`batch: ${bad.length} entries refused, first: ${JSON.stringify(bad[0])}`);
    return minimal ? results.map((r) => r.taskId ?? r.task.taskId) : results.map((r) => r.task);
  }

  async function* pagesWithStatus(status) {
    let cursor;
    do {
      const q = `/retry-tasks?status=${status}&limit=1000${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const page = await call('GET', q);
      yield page.items;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }

  return {
    url,
    pid,
    child,
    logs,
    /** The `"event":"start"` log line (effective settings). */
    startLine,
    /** The service's start line confirmed the SQLite synchronous mode asked for (false: it did not say). */
    syncConfirmed,
    stderr: () => stderr,
    call,
    /**
     * `POST /retry-tasks/batch`; throws unless every entry was created (201) or replayed (200). Returns the tasks, or
     * with `{ minimal: true }` (`Prefer: return=minimal`, as a caller loading a backlog sends it) their ids: a build
     * that ignores the preference answers whole tasks, whose ids are taken from them.
     */
    enqueueBatch,
    /**
     * Enqueues `count` tasks, `taskAt(i)` making the i-th, with {@link enqueueBatch} (`options` as there): 1,000 a
     * batch, 4 batches at a time, as a caller loading a backlog would.
     *
     * @example
     * await service.enqueueAll(5000, (i) => ({ targetUrl, method: 'POST', idempotencyKey: `k-${i}`, notBefore: dueAt }));
     */
    async enqueueAll(count, taskAt, options) {
      await inParallel(Math.ceil(count / 1000), 4, (b) =>
        enqueueBatch(
          Array.from({ length: Math.min(1000, count - b * 1000) }, (_, k) => taskAt(b * 1000 + k)),
          options,
        ),
      );
    },
    /** Counts tasks of one status by paging `GET /retry-tasks?status=` (1,000 a page). */
    async countStatus(status) {
      let n = 0;
      for await (const items of pagesWithStatus(status)) n += items.length;
      return n;
    },
    /** The tasks of one status (their API views), a page of up to 1,000 at a time, from `GET /retry-tasks?status=`. */
    pagesWithStatus,
    /** Whether this build serves `/targets` (per-target protection, issue 9): builds before it answer 404. */
    async hasTargets() {
      try {
        await call('GET', '/targets?limit=1');
        return true;
      } catch (error) {
        if (statusOf(error) === 404 || statusOf(error) === 503) return false;
        throw error;
      }
    },
    /** True when at least one task has this status (one cheap page of 1). */
    async anyWithStatus(status) {
      const page = await call('GET', `/retry-tasks?status=${status}&limit=1`);
      return page.items.length > 0;
    },
    cpuMs: () => cpuMsOf(pid),
    memory: () => memoryOf(pid),
    /** SIGTERM, then waits for the exit (graceful stop). */
    async stop() {
      await api.close();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** utime + stime of a process, in ms (from /proc/<pid>/stat). */
export async function cpuMsOf(pid) {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: fields are counted after its closing parenthesis.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  return ((utime + stime) * 1000) / CLK_TCK;
}

/** VmRSS and VmHWM (peak RSS) of a process, in MiB (from /proc/<pid>/status). */
export async function memoryOf(pid) {
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { rssMiB: kib('VmRSS') / 1024, hwmMiB: kib('VmHWM') / 1024 };
}

/** Bytes on disk of a SQLite store: the database, its -wal and -shm files, and the blob directory. */
export async function sqliteStoreSize(dbPath) {
  const size = async (p) => {
    try {
      const s = await stat(p);
      if (!s.isDirectory()) return s.blocks * 512;
      let total = 0;
      for (const e of await readdir(p)) total += await size(join(p, e));
      return total;
    } catch {
      return 0;
    }
  };
  const parts = {
    db: await size(dbPath),
    wal: await size(`${dbPath}-wal`),
    shm: await size(`${dbPath}-shm`),
    blobs: await size(`${dbPath}.blobs`),
  };
  return { ...parts, total: parts.db + parts.wal + parts.shm + parts.blobs };
}
