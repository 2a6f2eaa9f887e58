#!/usr/bin/env node
// Screenshots of each page of the web console, for the README and docs/server.md: docs/console/*.png.
// Starts a real service (the built one: run `npm run build` first) on a temp SQLite file with a loopback target that
// fails now and then, gives it some work, and photographs each page in Debian's Chromium (playwright-core).
//   node scripts/console-screenshots.mjs            (RETRYD_CHROMIUM names another Chromium binary)
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { chromium } from 'playwright-core';
import { DEFAULT_CONFIG, createLogger, startRetryd } from '../packages/server/dist/index.js';

const CHROMIUM = process.env.RETRYD_CHROMIUM ?? '/usr/bin/chromium';
const OUT = join(import.meta.dirname, '..', 'docs', 'console');
if (!existsSync(CHROMIUM)) {
  console.error(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium)`);
  process.exit(1);
}

// A target that answers like a real one having a bad day: a few 503s, slow answers, and a 422 for one path.
let served = 0;
const seen = new Map();
const target = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    served++;
    const key = String(req.headers['idempotency-key']);
    seen.set(key, (seen.get(key) ?? 0) + 1);
    const delay = 5 + (served % 7) * 9;
    setTimeout(() => {
      if (req.url.startsWith('/invoices')) return res.writeHead(422, { 'content-type': 'application/json' }).end('{"error":"customer 4411 has no billing address"}');
      if (req.url.startsWith('/webhooks') && seen.get(key) <= 1 + (served % 2)) return res.writeHead(503).end('upstream busy');
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    }, delay);
  });
});
await new Promise((resolve) => target.listen(0, '127.0.0.1', resolve));
const targetUrl = `http://127.0.0.1:${target.address().port}`;
const second = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end('ok')));
await new Promise((resolve) => second.listen(0, '127.0.0.1', resolve));
const secondUrl = `http://127.0.0.1:${second.address().port}`;

const dir = await mkdtemp(join(tmpdir(), 'retryd-screenshots-'));
const quiet = createLogger('info', new Writable({ write: (_chunk, _encoding, done) => done() }));
const service = await startRetryd(
  { ...DEFAULT_CONFIG, port: 0, allowTargets: ['127.0.0.1/32'], sqliteSync: 'normal', graceMs: 0, store: `sqlite:${join(dir, 'retryd.db')}` },
  quiet,
);
const api = async (method, path, body) => {
  const response = await fetch(`${service.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return response.status === 204 ? undefined : response.json();
};

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
try {
  await api('POST', '/retry-policies', { policyId: 'webhooks', maxAttempts: 6, backoffType: 'EXPONENTIAL', initialDelayMs: 200, multiplier: 2, maxDelayMs: 5_000, jitterType: 'FULL' });
  await api('POST', '/retry-policies', { policyId: 'payments', maxAttempts: 8, backoffType: 'EXPONENTIAL', initialDelayMs: 500, multiplier: 2, maxDelayMs: 60_000, jitterType: 'DECORRELATED', totalBudgetMs: 3_600_000 });
  await api('POST', '/retry-policies', { policyId: 'invoices', maxAttempts: 3, backoffType: 'FIXED', initialDelayMs: 1_000, multiplier: 1, maxDelayMs: 1_000, jitterType: 'EQUAL' });
  const tasks = [];
  for (let i = 0; i < 12; i++) tasks.push({ targetUrl: `${targetUrl}/webhooks/order-${1000 + i}`, method: 'POST', policyId: 'webhooks', body: '{"event":"order.paid"}', headers: { 'content-type': 'application/json' } });
  for (let i = 0; i < 3; i++) tasks.push({ targetUrl: `${targetUrl}/invoices/${400 + i}`, method: 'POST', policyId: 'invoices' });
  for (let i = 0; i < 6; i++) tasks.push({ targetUrl: `${secondUrl}/ledger/entries`, method: 'PUT', policyId: 'payments' });
  const { results } = await api('POST', '/retry-tasks/batch', { tasks });
  const ids = results.map((r) => r.task.taskId);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const { items } = await api('GET', '/retry-tasks?limit=100');
    if (items.filter((t) => t.status === 'PENDING' || t.status === 'IN_FLIGHT').length <= 2) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // Keep attempts flowing while the overview is photographed, so its rates are not all zero.
  let n = 0;
  const more = setInterval(() => {
    n++;
    const url = n % 3 === 0 ? `${targetUrl}/webhooks/order-${2000 + n}` : `${secondUrl}/ledger/entries`;
    void api('POST', '/retry-tasks', { targetUrl: url, method: 'POST', policyId: n % 3 === 0 ? 'webhooks' : 'payments' });
  }, 100);

  const shoot = async (name, hash, { dark = false, before, width = 1280, height = 800 } = {}) => {
    const page = await browser.newPage({ viewport: { width, height }, colorScheme: dark ? 'dark' : 'light' });
    await page.goto(`${service.url}/${hash}`);
    await page.locator('main h1').waitFor();
    await page.waitForLoadState('networkidle').catch(() => {});
    if (before !== undefined) await before(page);
    await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: false });
    await page.close();
    console.log(`docs/console/${name}.png`);
  };
  const waitForRates = async (page) => {
    await page.waitForTimeout(4_500);
  };
  const flaky = ids[1];
  await shoot('overview', '#/overview', { before: waitForRates });
  await shoot('overview-dark', '#/overview', { dark: true, before: waitForRates });
  await shoot('overview-phone', '#/overview', { before: waitForRates, width: 390, height: 844 });
  clearInterval(more);
  await shoot('tasks', '#/tasks');
  // Taller: where the task stands, its request, the chart of its attempts and waits, and the first attempts.
  await shoot('task', `#/tasks/${flaky}`, { height: 1500, before: async (page) => {
      await page.locator('li.attempt').nth(1).waitFor();
      await page.locator('figure.chart canvas').waitFor();
      await page.locator('li.attempt summary').first().click();
    },
  });
  await shoot('dead-letters', '#/dead-letters', {
    before: async (page) => {
      await page.getByRole('button', { name: 'Replay all dead letters' }).click();
      await page.getByRole('dialog').waitFor();
    },
  });
  await shoot('policies', '#/policies');
  await shoot('policy-preview', '#/policies/payments', {
    before: async (page) => {
      await page.locator('figure.chart canvas').waitFor();
      await page.locator('#preview-title').scrollIntoViewIfNeeded();
    },
  });
  await shoot('policy-validation', '#/policies/payments', {
    before: async (page) => {
      await page.getByLabel('Max attempts').fill('0');
      await page.getByLabel('Multiplier').fill('0.5');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.locator('.field-error').first().waitFor();
    },
  });
  await api('POST', `/targets/${encodeURIComponent(targetUrl)}/breaker`, { action: 'open' });
  await shoot('targets', '#/targets');
  await shoot('target', `#/targets/${encodeURIComponent(targetUrl)}`, {
    before: async (page) => {
      await page.locator('figure.chart canvas').waitFor();
    },
  });
  await shoot('target-settings', `#/targets/${encodeURIComponent(targetUrl)}`, {
    before: async (page) => {
      await page.getByLabel('Rate limit (per second)').fill('-5');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.locator('.field-error').first().waitFor();
      await page.locator('#settings-title').scrollIntoViewIfNeeded();
    },
  });
} finally {
  await browser.close();
  await service.close();
  target.close();
  second.close();
  await rm(dir, { recursive: true, force: true });
}
