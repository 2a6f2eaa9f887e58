import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_CONTENT_SECURITY_POLICY, PAGE_CONTENT_SECURITY_POLICY } from '../src/api/page-headers.js';
import { startApi, type ApiHarness } from './api-harness.js';

// The API docs at /docs (Swagger UI) carry the console's security headers: a content security policy that allows
// only the page's own files and forbids framing, X-Frame-Options for older browsers, and nosniff.

/** Debian's Chromium, as console.test.ts drives it (importing that file would run its tests here). */
const CHROMIUM = process.env.RETRYD_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];

describe('security headers of /docs', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api.close());

  it('sends the console’s CSP, X-Frame-Options and nosniff on the page, its files and its document', async () => {
    const paths = ['/docs', '/docs/', '/docs/static/swagger-ui.css', '/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-initializer.js', '/docs/json'];
    for (const path of paths) {
      const res = await api.call('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.headers['content-security-policy'], path).toBe(DOCS_CONTENT_SECURITY_POLICY);
      expect(res.headers['content-security-policy'], path).toContain(PAGE_CONTENT_SECURITY_POLICY);
      expect(res.headers['content-security-policy'], path).toContain("frame-ancestors 'none'");
      expect(res.headers['x-frame-options'], path).toBe('DENY');
      expect(res.headers['x-content-type-options'], path).toBe('nosniff');
    }
    // The console's page has the same ones; the API's answers are not pages and go without.
    const consolePage = await api.call('GET', '/');
    if (consolePage.status === 200) {
      expect(consolePage.headers['content-security-policy']).toBe(PAGE_CONTENT_SECURITY_POLICY);
      expect(consolePage.headers['x-frame-options']).toBe('DENY');
    }
    expect((await api.call('GET', '/healthz')).headers['content-security-policy']).toBeUndefined();
  });

  it.skipIf(!existsSync(CHROMIUM))('still renders every operation in Chromium under that policy, with no violation', async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage();
      const refused: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
      });
      await page.goto(`${api.url}/docs`);
      await page.locator('.opblock').first().waitFor({ timeout: 20_000 });
      expect(await page.locator('.opblock').count()).toBeGreaterThan(10);
      expect(refused).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
