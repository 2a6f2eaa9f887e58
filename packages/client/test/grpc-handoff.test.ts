import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetrydClient } from '../src/index.js';
import { retryInterceptor, retrydTaskIdOf } from '../src/grpc/index.js';
import { ordersClient, place, serialize, startOrdersServer, type OrdersClient, type OrdersServer } from './grpc-server.js';
import { startService, type TestService } from './service-harness.js';

const FAST = { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 5, jitterType: 'NONE' } as const;

// The hand-off against the real retryd service (in process, on SQLite): the task it stores is what the interceptor sent.
describe('retryInterceptor: hand-off to retryd', () => {
  let service: TestService;
  let retryd: RetrydClient;
  let orders: OrdersServer;
  let client: OrdersClient;
  // The service holds the credential the calls send as the secret ORDERS_TOKEN.
  const secretsFile = join(tmpdir(), `retryd-grpc-secrets-${process.pid}-${Math.random().toString(36).slice(2)}.json`);

  beforeAll(async () => {
    await writeFile(secretsFile, JSON.stringify({ ORDERS_TOKEN: 'Bearer sk_live_1' }));
    service = await startService({ secretsFile });
    retryd = new RetrydClient({ url: service.url, apiKey: service.apiKey });
    orders = await startOrdersServer((seen) => (seen.request.sku === 'bad' ? { code: status.INVALID_ARGUMENT, details: 'no such sku' } : { code: status.UNAVAILABLE, details: 'down' }));
    const interceptor = retryInterceptor({
      target: orders.target,
      policy: FAST,
      breaker: false,
      handoff: { client: retryd, target: `grpc://${orders.target}`, secrets: { authorization: 'ORDERS_TOKEN' } },
    });
    client = ordersClient(orders.target, [interceptor]);
  }, 60_000);
  afterAll(async () => {
    client?.close();
    await orders?.close();
    await service?.close();
    await rm(secretsFile, { force: true });
  });

  it('enqueues a call that still fails, with its method, request, metadata and key, and fails it UNAVAILABLE with the task id', async () => {
    const metadata = new Metadata();
    metadata.set('x-tenant', 'acme');
    metadata.set('authorization', 'Bearer sk_live_1');
    metadata.set('trace-bin', Buffer.from([0, 1, 2, 255]));
    const error = await place(client, { sku: 'A-1', qty: 2 }, metadata).then(
      () => expect.fail('the call succeeded'),
      (e: unknown) => e as ServiceError,
    );
    expect(orders.seen).toHaveLength(2);
    const key = orders.seen[0]!.metadata.get('idempotency-key')[0];
    expect(error.code).toBe(status.UNAVAILABLE);
    const taskId = retrydTaskIdOf(error);
    expect(taskId).toBeDefined();
    expect(error.details).toBe(`handed to retryd as task ${taskId} after UNAVAILABLE: down`);

    const task = await retryd.getTask(taskId!);
    expect(task.targetUrl).toBe(`grpc://${orders.target}/test.Orders/Place`);
    expect(task.idempotencyKey).toBe(key);
    expect(Buffer.from(task.body!, 'base64')).toEqual(serialize({ sku: 'A-1', qty: 2 }));
    expect(task.headers).toMatchObject({ 'x-tenant': 'acme', 'trace-bin': Buffer.from([0, 1, 2, 255]).toString('base64') });
    // The credential went as a reference to the service's secret, never as its value.
    expect(JSON.stringify(task)).not.toContain('sk_live_1');
  });

  it('the same call handed over twice is one task', async () => {
    const first = await place(client, { sku: 'B-2' }).catch((e: unknown) => retrydTaskIdOf(e));
    const second = await place(client, { sku: 'B-2' }).catch((e: unknown) => retrydTaskIdOf(e));
    expect(first).toBeDefined();
    expect(second).toBe(first);
  });

  it('does not hand over a call that failed for good', async () => {
    const error = await place(client, { sku: 'bad' }).then(
      () => expect.fail('the call succeeded'),
      (e: unknown) => e as ServiceError,
    );
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(retrydTaskIdOf(error)).toBeUndefined();
  });
});
