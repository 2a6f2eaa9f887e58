import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetrydClient } from '../src/index.js';
import { Downstream, startService, type TestService } from './service-harness.js';
import { waitFor } from '../../server/test/wait-for.js';

const PACKAGE = join(import.meta.dirname, '..');
const README = readFileSync(join(PACKAGE, '..', '..', 'README.md'), 'utf8');
const ORDERS_API_KEY = 'sk_live_orders_123';

/** The code block right after `<!-- example: NAME … -->` in the README, as written. */
function example(name: string): string {
  const found = new RegExp(`<!-- example: ${name}\\b[^>]*-->\\n\`\`\`js\\n([\\s\\S]*?)\\n\`\`\``).exec(README);
  if (found?.[1] === undefined) throw new Error(`the README has no example ${name}`);
  return found[1];
}

/** Runs an example as an ES module from the package (so its imports resolve as an installed package's do). */
function runExample(name: string, env: Record<string, string>): { child: ChildProcess; lines: string[]; line: (match: RegExp) => Promise<string> } {
  const child = spawn(process.execPath, ['--input-type=module', '-e', example(name)], { cwd: PACKAGE, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const waiting: { match: RegExp; resolve: (line: string) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const w of waiting.filter((w) => w.match.test(line))) w.resolve(line);
  });
  const line = (match: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const seen = lines.find((l) => match.test(l));
      if (seen !== undefined) return resolve(seen);
      waiting.push({ match, resolve });
      child.once('exit', (code) => reject(new Error(`example ${name} exited with ${code} before printing ${match}`)));
    });
  return { child, lines, line };
}

describe('the README examples of @retryd/client, run as written', () => {
  let service: TestService;
  let downstream: Downstream;
  let orders: string;
  const secretsFile = join(tmpdir(), `retryd-readme-secrets-${process.pid}.json`);
  const seenKeys = new Set<string>();

  beforeAll(async () => {
    await writeFile(secretsFile, JSON.stringify({ ORDERS_TOKEN: `Bearer ${ORDERS_API_KEY}` }));
    service = await startService({ secretsFile });
    // The first request of each key fails with a 503.
    downstream = new Downstream((request) => {
      const key = String(request.headers['idempotency-key']);
      if (seenKeys.has(key)) return { status: 200, body: JSON.stringify({ accepted: true }) };
      seenKeys.add(key);
      return { status: 503 };
    });
    orders = await downstream.start();
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await downstream?.close();
    await rm(secretsFile, { force: true });
  });

  it('client: enqueues, lists dead letters and reads a typed 404', async () => {
    const run = runExample('client', { RETRYD_URL: service.url, RETRYD_API_KEY: service.apiKey, ORDERS_URL: orders });
    const code = await new Promise((resolve) => run.child.once('exit', resolve));
    expect(code).toBe(0);
    // IN_FLIGHT when the service's own workers take it at once (its target known and free), else PENDING.
    expect(run.lines[0]).toMatch(/^created [0-9a-f-]{36} (PENDING|IN_FLIGHT)$/);
    expect(run.lines.at(-1)).toBe('404 NOT_FOUND');
  }, 30_000);

  for (const name of ['express', 'fastify']) {
    it(`${name}: a failed call is answered 202 queued and delivered by the service with the secret resolved`, async () => {
      const run = runExample(name, { RETRYD_URL: service.url, RETRYD_API_KEY: service.apiKey, ORDERS_URL: orders, ORDERS_API_KEY, PORT: '0' });
      try {
        const port = /listening on (\d+)/.exec(await run.line(/listening on \d+/))?.[1];
        const response = await fetch(`http://127.0.0.1:${port}/checkout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cart: name }) });
        expect(response.status).toBe(202);
        const { status, taskId } = (await response.json()) as { status: string; taskId: string };
        expect(status).toBe('queued');
        const client = new RetrydClient({ url: service.url, apiKey: service.apiKey });
        await waitFor(`${name}'s task to succeed`, async () => (await client.getTask(taskId)).status === 'SUCCEEDED');
        const delivered = downstream.received.find((r) => r.status === 200 && r.body === JSON.stringify({ cart: name }));
        expect(delivered?.headers.authorization).toBe(`Bearer ${ORDERS_API_KEY}`);
      } finally {
        run.child.kill('SIGTERM');
      }
    }, 60_000);
  }
});
