import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetrydClient } from '../src/index.js';
import { startLoopbackServer, type LoopbackServer } from './loopback-server.js';
import { startService, type TestService } from './service-harness.js';

// @retryd/client in Debian's Chromium (playwright-core, no downloaded browser): a page enqueues calls to a loopback endpoint
// that fails, is reloaded, and the calls it kept in IndexedDB drain once the endpoint recovers; retryingFetch and the
// webhook verifier run there too. The page runs the built package (npm run build), bundled by Vite as an application
// would bundle it.

const CHROMIUM = process.env.RETRYD_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

let dir: string;
let bundle: string;
let server: LoopbackServer;
let healthy = false;
let flaky = 0;
let secure = 0;
let context: BrowserContext | undefined;
let retryd: TestService;
let retrydUp = false;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'retryd-client-browser-'));
  await build({
    configFile: false,
    logLevel: 'silent',
    build: {
      outDir: join(dir, 'bundle'),
      minify: false,
      lib: { entry: join(import.meta.dirname, 'fixtures', 'browser-page.js'), formats: ['es'], fileName: 'browser-page' },
    },
  });
  bundle = await readFile(join(dir, 'bundle', 'browser-page.js'), 'utf8');
  await writeFile(join(dir, 'secrets.json'), JSON.stringify({ ORDERS_TOKEN: 'Bearer from-secret' }));
  retryd = await startService({ secretsFile: join(dir, 'secrets.json') });
  server = await startLoopbackServer(async (request, _n, res) => {
    // The retryd service, same-origin for the page: down (the connection reset) until `retrydUp`.
    if (request.url.startsWith('/retryd/')) {
      if (!retrydUp) return void res.destroy();
      const answer = await fetch(`${retryd.url}${request.url.slice('/retryd'.length)}`, {
        method: request.method,
        headers: Object.fromEntries(['authorization', 'content-type', 'accept'].flatMap((h) => (request.headers[h] === undefined ? [] : [[h, String(request.headers[h])]]))),
        ...(request.body === '' ? {} : { body: request.body }),
      });
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(await answer.text());
    } else if (request.url === '/') res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><script type="module" src="/browser-page.js"></script>');
    else if (request.url === '/browser-page.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    else if (request.url === '/api/events') res.writeHead(healthy ? 200 : 503).end();
    else if (request.url === '/api/flaky') res.writeHead(flaky++ === 0 ? 503 : 200).end();
    else if (request.url === '/api/down') res.writeHead(503).end();
    else if (request.url === '/api/secure') res.writeHead(secure++ === 0 ? 503 : 200).end();
    else res.writeHead(404).end();
  });
  // Each test fails (none is skipped) without Chromium: CI must not pass without having run it.
  if (existsSync(CHROMIUM)) {
    context = await chromium.launchPersistentContext(join(dir, 'profile'), { executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }
}, 60_000);

afterAll(async () => {
  await context?.close();
  await server?.close();
  await retryd?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A new page of the test app, once it has defined the function `ready` (fails, naming Chromium, where there is none). */
async function openPage(ready: string): Promise<Page> {
  expect(context, `Chromium at ${CHROMIUM}`).toBeDefined();
  const page = await context!.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(server.url);
  await page.waitForFunction((name) => name in globalThis, ready);
  return page;
}

describe('@retryd/client in a browser', () => {
  it('keeps its calls in IndexedDB across a reload and drains them once the endpoint recovers', async () => {
    expect(context, `Chromium at ${CHROMIUM}`).toBeDefined();
    const page = await context!.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.setDefaultTimeout(20_000);
    await page.goto(server.url);
    await page.waitForFunction(() => 'enqueueEvents' in globalThis);
    await page.evaluate(() => (globalThis as unknown as { enqueueEvents(n: number): Promise<void> }).enqueueEvents(3));
    const events = () => server.requests.filter((r) => r.url === '/api/events');
    await expect.poll(() => events().length, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);

    await page.reload();
    await page.waitForFunction(() => 'storedCalls' in globalThis);
    const stored = await page.evaluate(() => (globalThis as unknown as { storedCalls(): Promise<{ id: string; attempts: number }[]> }).storedCalls());
    expect(stored).toHaveLength(3);
    const failedBefore = events().length;

    healthy = true;
    const drained = await page.evaluate(() => (globalThis as unknown as { drainStored(): Promise<string[]> }).drainStored());
    expect(drained).toEqual(stored.map((c) => c.id).sort());
    expect(await page.evaluate(() => (globalThis as unknown as { storedCalls(): Promise<unknown[]> }).storedCalls())).toEqual([]);

    // Every attempt of a call, before and after the reload, carried the call's id as its Idempotency-Key.
    const keys = new Set(events().map((r) => r.headers['idempotency-key']));
    expect([...keys].sort()).toEqual(drained);
    const succeeded = events().slice(failedBefore).filter((r) => r.headers['idempotency-key'] !== undefined);
    expect(succeeded.length).toBeGreaterThanOrEqual(3);
    expect(errors).toEqual([]);
  });

  it('keeps no credential in IndexedDB: the resolver gives them at each attempt, and a queue without one refuses them', async () => {
    const page = await openPage('enqueueSecure');
    const { stored, refused } = await page.evaluate(() =>
      (globalThis as unknown as { enqueueSecure(): Promise<{ stored: Record<string, string>[]; refused: string }> }).enqueueSecure(),
    );
    expect(stored).toEqual([{ 'content-type': 'text/plain', 'Idempotency-Key': expect.any(String) }]);
    expect(refused).toMatch(/^CredentialRuleError: headers\.Cookie carries a credential, which a RetryQueue does not store/);
    const sent = server.requests.filter((r) => r.url === '/api/secure');
    expect(sent.map((r) => r.headers.authorization)).toEqual(['Bearer from-resolver', 'Bearer from-resolver']);
  });

  it('spools hand-offs in IndexedDB while retryd is down, credentials as references and one entry per key, and forwards them after a reload', async () => {
    const page = await openPage('spoolWhileDown');
    const { outcomes, stored } = await page.evaluate((apiKey) =>
      (globalThis as unknown as { spoolWhileDown(k: string): Promise<{ outcomes: string[]; stored: { key: string; headers: Record<string, string> }[] }> }).spoolWhileDown(apiKey),
      retryd.apiKey,
    );
    // Derived by WebCrypto (no node:crypto in a page): the same call twice has one key, and is kept once.
    expect(outcomes[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(outcomes[1]).toBe(outcomes[0]);
    expect(stored).toEqual([{ key: outcomes[0], headers: { authorization: '{{secret:ORDERS_TOKEN}}', 'content-type': 'application/json' } }]);

    retrydUp = true;
    await page.reload();
    await page.waitForFunction(() => 'forwardSpool' in globalThis);
    const forwarded = await page.evaluate((apiKey) => (globalThis as unknown as { forwardSpool(k: string): Promise<[string, string][]> }).forwardSpool(apiKey), retryd.apiKey);
    expect(forwarded.map(([key]) => key)).toEqual([outcomes[0]]);
    const client = new RetrydClient({ url: retryd.url, apiKey: retryd.apiKey });
    const tasks = (await client.listTasks({ limit: 1000 })).items.filter((task) => task.idempotencyKey === outcomes[0]);
    expect(tasks.map((task) => task.taskId)).toEqual([forwarded[0]![1]]);
  });

  it('retries a fetch with one Idempotency-Key (a random one: no node:crypto here) and verifies a signature with WebCrypto', async () => {
    const page = await openPage('fetchFlaky');
    expect(await page.evaluate(() => (globalThis as unknown as { fetchFlaky(): Promise<number> }).fetchFlaky())).toBe(200);
    const keys = server.requests.filter((r) => r.url === '/api/flaky').map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(await page.evaluate(() => (globalThis as unknown as { verifyVector(): Promise<unknown> }).verifyVector())).toEqual({
      id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      timestamp: 1614265330,
    });
  });
});
