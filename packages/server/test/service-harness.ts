import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach } from 'vitest';

const CLI = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js');
/** The test-only entry that reads RETRYD_FAULT_PAUSE_AT and RETRYD_CLOCK_OFFSET_MS (src/service/test-faults-entry.ts). */
export const TEST_FAULTS_ENTRY = join(import.meta.dirname, '..', 'dist', 'service', 'test-faults-entry.js');

/** What a run of the built CLI printed, and its exit code. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built `retryd` CLI with `args` (and `env` over this process's) to its end; a non-zero exit is a result, not a throw. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return promisify(execFile)(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, timeout: 20_000 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

/** A `retryd serve` child process and the URL its API listens on. */
export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** Every log line it printed, parsed. */
  logs: Record<string, unknown>[];
  exited: Promise<number | null>;
}

/**
 * Starts `retryd serve` (the built CLI) on a free port and resolves once its start line is logged. With
 * `testSwitches`, through the test-only entry that honours RETRYD_FAULT_PAUSE_AT and RETRYD_CLOCK_OFFSET_MS.
 */
export async function startServiceProcess(args: string[], env: NodeJS.ProcessEnv = {}, options: { testSwitches?: boolean } = {}): Promise<ServiceProcess> {
  const entry = options.testSwitches === true ? ['--import', pathToFileURL(TEST_FAULTS_ENTRY).href] : [];
  const child = spawn(process.execPath, [...entry, CLI, 'serve', '--port', '0', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (entry.event === 'start') resolve(entry.url as string);
      } catch {
        logs.push({ raw: line });
      }
    });
    void exited.then((code) => reject(new Error(`retryd exited with ${code} before starting: ${stderr}`)));
  });
  return { url, child, logs, exited };
}

/** SIGTERM (after SIGCONT, in case it is frozen) and the exit code; SIGKILL if it does not stop within 15 s. */
export async function stopService(service: ServiceProcess): Promise<number | null> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return service.exited;
  service.child.kill('SIGCONT');
  service.child.kill('SIGTERM');
  const timer = setTimeout(() => service.child.kill('SIGKILL'), 15_000);
  try {
    return await service.exited;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Clean-ups a test registers as it goes (`cleanup.push(() => service.close())`), run after each test of the enclosing
 * `describe` (or file), the last registered first, whether the test passed or not.
 */
export function cleanupAfterEach(): (() => Promise<unknown>)[] {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });
  return cleanup;
}

/**
 * A downstream that implements idempotency the way a payment API does: the first request with a key that is
 * answered 200 is processed; later requests with that key get the stored answer and are counted as replays.
 * `failFirst` requests per key are answered 503 first; every request is answered `delayMs` after it arrived.
 */
export class IdempotentDownstream {
  readonly requests = new Map<string, number>();
  readonly processed = new Map<string, number>();
  replays = 0;
  private server: Server | undefined;

  constructor(
    private readonly failFirst = 1,
    private readonly delayMs = 0,
  ) {}

  async start(): Promise<string> {
    this.server = createServer((req: IncomingMessage, res) => {
      req.resume();
      req.on('end', () => (this.delayMs > 0 ? setTimeout(answer, this.delayMs) : answer()));
      const answer = () => {
        if (res.destroyed) return;
        const key = String(req.headers['idempotency-key'] ?? '');
        const n = (this.requests.get(key) ?? 0) + 1;
        this.requests.set(key, n);
        if (this.processed.has(key)) {
          this.replays += 1;
          res.writeHead(200, { 'idempotent-replayed': 'true' }).end('ok');
        } else if (n <= this.failFirst) {
          res.writeHead(503).end('busy');
        } else {
          this.processed.set(key, (this.processed.get(key) ?? 0) + 1);
          res.writeHead(200).end('ok');
        }
      };
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    return `http://127.0.0.1:${address.port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server?.closeAllConnections();
      this.server?.close(() => resolve());
    });
  }
}
