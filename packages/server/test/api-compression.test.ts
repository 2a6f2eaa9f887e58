import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceProcess, stopService, type ServiceProcess } from './service-harness.js';

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The bytes as they came over the wire, not decoded. */
  bytes: Buffer;
}

/** A GET with exactly these headers (fetch would add Accept-Encoding and decode the answer itself). */
function rawGet(url: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

// Compression of the API's answers, against a real `retryd serve` (the built CLI) on loopback.
describe('compressed answers', () => {
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await startServiceProcess(['--store', 'sqlite::memory:', '--role', 'api', '--allow-targets', '127.0.0.1/32']);
    // Tasks whose target is never called (an API-only instance): a listing of 200 of them is tens of kilobytes.
    const tasks = Array.from({ length: 200 }, (_, i) => ({ targetUrl: `http://127.0.0.1:9/orders/${i}`, method: 'POST', body: { order: i }, idempotencyKey: `order-${i}` }));
    const answer = await fetch(`${service.url}/retry-tasks/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tasks }) });
    expect(answer.status).toBe(200);
    const { results } = (await answer.json()) as { results: { status: number }[] };
    expect(results.map((r) => r.status)).toEqual(tasks.map(() => 201));
  }, 60_000);
  afterAll(() => (service === undefined ? undefined : stopService(service)));

  it('sends a long listing gzip-compressed when asked, and the same JSON uncompressed when not', async () => {
    const plain = await rawGet(`${service.url}/retry-tasks?limit=200`);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    const listing = JSON.parse(plain.bytes.toString('utf8')) as { items: unknown[] };
    expect(listing.items).toHaveLength(200);

    const gzip = await rawGet(`${service.url}/retry-tasks?limit=200`, { 'accept-encoding': 'gzip' });
    expect(gzip.status).toBe(200);
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.headers.vary).toMatch(/accept-encoding/i);
    expect(gzip.bytes.length).toBeLessThan(plain.bytes.length / 4);
    expect(JSON.parse(gunzipSync(gzip.bytes).toString('utf8'))).toEqual(listing);
  });

  it('prefers br for the OpenAPI document and the console, and leaves tiny answers alone', async () => {
    const both = { 'accept-encoding': 'gzip, deflate, br' };
    const document = await rawGet(`${service.url}/openapi.json`, both);
    expect(document.headers['content-encoding']).toBe('br');
    expect(JSON.parse(brotliDecompressSync(document.bytes).toString('utf8'))).toMatchObject({ openapi: '3.1.0' });

    // The console's page is under the threshold; its script is not.
    const page = await rawGet(`${service.url}/`, both);
    expect(page.status).toBe(200);
    expect(page.headers['content-encoding']).toBeUndefined();
    const script = /src="([^"]+\.js)"/.exec(page.bytes.toString('utf8'))?.[1];
    expect(script).toBeDefined();
    const asset = await rawGet(`${service.url}${script!}`, both);
    expect(asset.status).toBe(200);
    expect(asset.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(asset.bytes).length).toBeGreaterThan(asset.bytes.length);

    // Prometheus scrapes with Accept-Encoding: gzip.
    const metrics = await rawGet(`${service.url}/metrics`, { 'accept-encoding': 'gzip' });
    expect(metrics.status).toBe(200);
    expect(metrics.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(metrics.bytes).toString('utf8')).toMatch(/^# HELP retry_/m);

    const health = await rawGet(`${service.url}/healthz`, both);
    expect(health.status).toBe(200);
    expect(health.headers['content-encoding']).toBeUndefined();
    expect(health.bytes.length).toBeLessThan(1024);
  });

  it('answers a long poll and a problem as before', async () => {
    const listing = JSON.parse((await rawGet(`${service.url}/retry-tasks?limit=1`)).bytes.toString('utf8')) as { items: { taskId: string }[] };
    const taskId = listing.items[0]!.taskId;
    // An API-only instance never ends the task: the long poll answers when its wait is over, with the task.
    const started = Date.now();
    const polled = await rawGet(`${service.url}/retry-tasks/${taskId}?waitMs=300`, { 'accept-encoding': 'gzip' });
    expect(polled.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    const body = polled.headers['content-encoding'] === 'gzip' ? gunzipSync(polled.bytes) : polled.bytes;
    expect(JSON.parse(body.toString('utf8'))).toMatchObject({ taskId, status: 'PENDING' });

    const missing = await rawGet(`${service.url}/retry-tasks/not-a-task`, { 'accept-encoding': 'gzip' });
    expect(missing.status).toBeGreaterThanOrEqual(400);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});
