import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { POSTGRES_URL, dropSchemas, freshSchema } from './postgres-harness.js';
import { REDIS_URL, TcpProxy, dropPrefixes, freshPrefix } from './redis-harness.js';
import { IdempotentDownstream, startServiceProcess, type ServiceProcess } from './service-harness.js';
import { waitFor } from './wait-for.js';

/**
 * `retryd serve` through a store outage (issue 4): the store sits behind a loopback TCP proxy, and closing the proxy
 * (listener closed, open connections cut) is the outage — for this process only; the shared PostgreSQL and Redis
 * servers are never touched. Reopening it on the same port is the store coming back.
 */

const TASKS = 40;
/** Tasks whose first attempt is answered while the store is away: its result cannot be written. */
const HELD = 5;
const LEASE_MS = 2_000;
// Each key is answered 503 once; the retry a second later falls due while the store is away.
const policy = { maxAttempts: 20, backoffType: 'FIXED', initialDelayMs: 1_000, multiplier: 1, maxDelayMs: 1_000, jitterType: 'NONE' };

interface StoreCase {
  name: string;
  /** Where the real server listens. */
  upstream: { host: string; port: number };
  /** A `--store` URL that reaches the server through a proxy on `port`, on a schema or key prefix of its own. */
  throughProxy: (port: number) => string;
  drop: () => Promise<void>;
}

const STORES: StoreCase[] = [
  {
    name: 'PostgreSQL',
    upstream: { host: new URL(POSTGRES_URL).hostname, port: Number(new URL(POSTGRES_URL).port || 5432) },
    throughProxy: (port) => {
      const url = new URL(POSTGRES_URL);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      url.searchParams.set('schema', freshSchema());
      return url.toString();
    },
    drop: dropSchemas,
  },
  {
    name: 'Redis',
    upstream: { host: new URL(REDIS_URL).hostname, port: Number(new URL(REDIS_URL).port || 6379) },
    throughProxy: (port) => {
      const url = new URL(REDIS_URL);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      url.searchParams.set('prefix', freshPrefix());
      return url.toString();
    },
    drop: dropPrefixes,
  },
];

/**
 * A downstream whose first request per key waits until {@link GatedDownstream.open}, then is processed and answered
 * 200; a later request for a processed key is a replay (answered 200, counted, not processed again).
 */
class GatedDownstream {
  readonly waiting = new Set<string>();
  readonly processed = new Map<string, number>();
  replays = 0;
  #open: () => void = () => undefined;
  readonly #gate = new Promise<void>((resolve) => (this.#open = resolve));
  #server: Server | undefined;

  async start(): Promise<string> {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const key = String(req.headers['idempotency-key'] ?? '');
        if (this.processed.has(key)) {
          this.replays++;
          res.writeHead(200, { 'idempotent-replayed': 'true' }).end('ok');
        } else if (this.waiting.has(key)) {
          // The same key while its first request is still being processed.
          res.writeHead(503).end('in progress');
        } else {
          this.waiting.add(key);
          void this.#gate.then(() => {
            this.processed.set(key, (this.processed.get(key) ?? 0) + 1);
            res.writeHead(200).end('ok');
          });
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.#server = server;
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    return `http://127.0.0.1:${address.port}`;
  }

  /** Lets the waiting requests (and every later first request) through. */
  open(): void {
    this.#open();
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server?.closeAllConnections();
      this.#server?.close(() => resolve());
    });
  }
}

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
}

function enqueue(service: ServiceProcess, target: string, key: string): Promise<Response> {
  return fetch(`${service.url}/retry-tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ targetUrl: `${target}/charge`, method: 'POST', idempotencyKey: key, body: { key }, policy }),
  });
}

/** Checks `res` is a 503 problem coded STORE_UNAVAILABLE and returns its body. */
async function expectStoreUnavailable(res: Response, what: string): Promise<Problem> {
  expect(res.status, what).toBe(503);
  expect(res.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
  expect(res.headers.get('retry-after'), what).toBe('1');
  const problem = (await res.json()) as Problem;
  expect(problem, what).toMatchObject({ status: 503, code: 'STORE_UNAVAILABLE', title: 'The task store is unavailable' });
  return problem;
}

function isAlive(service: ServiceProcess): boolean {
  return service.child.exitCode === null && service.child.signalCode === null;
}

async function status(url: string): Promise<number> {
  return (await fetch(url)).status;
}

const CASES = STORES.map((store) => [store.name, store] as const);

describe.each(CASES)('%s goes away under a running retryd', (_name, store) => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  it('answers 503 STORE_UNAVAILABLE while it is away, then carries on by itself without losing an acknowledged task', async () => {
    cleanup.push(store.drop);
    const proxy = new TcpProxy(store.upstream.host, store.upstream.port);
    await proxy.start();
    cleanup.push(() => proxy.stop());
    const downstream = new IdempotentDownstream(1);
    const target = await downstream.start();
    cleanup.push(() => downstream.close());
    const gated = new GatedDownstream();
    const gatedTarget = await gated.start();
    cleanup.push(() => gated.close());
    const service = await startServiceProcess([
      '--store', store.throughProxy(proxy.port),
      '--allow-targets', '127.0.0.1/32',
      '--attempt-timeout', '1000',
      '--visibility-timeout', String(LEASE_MS),
      '--concurrency', '16',
      '--grace', '1000',
      // The default protections: the first wave of this "not ready yet" downstream opens the breaker, whose probes
      // (retries, which it answers) close it before the outage; the tasks that failed before it opened retry a second
      // later, while the store is away.
    ]);
    cleanup.push(async () => {
      if (isAlive(service)) service.child.kill('SIGKILL');
      await service.exited;
    });

    // Acknowledged before the outage.
    const acknowledged = new Map<string, string>();
    for (let i = 0; i < TASKS; i++) {
      const res = await enqueue(service, target, `before-${i}`);
      expect(res.status).toBe(201);
      acknowledged.set(`before-${i}`, ((await res.json()) as { taskId: string }).taskId);
    }
    // Their first attempts are refused; the retries, a second later, fall due during the outage.
    await waitFor('the first attempt of every task', () => downstream.requests.size === TASKS);
    // These are answered only once the store is gone, so their results cannot be written (cut well within the
    // attempt timeout, hence enqueued last).
    for (let i = 0; i < HELD; i++) {
      const res = await enqueue(service, gatedTarget, `held-${i}`);
      expect(res.status).toBe(201);
      acknowledged.set(`held-${i}`, ((await res.json()) as { taskId: string }).taskId);
    }
    await waitFor('the held attempts to reach the downstream', () => gated.waiting.size === HELD);
    const logsBefore = service.logs.length;
    await proxy.stop();
    gated.open();
    expect(downstream.processed.size, 'retries left for the outage').toBeLessThan(TASKS);

    const refused = await expectStoreUnavailable(await enqueue(service, target, 'during-0'), 'POST /retry-tasks');
    // The enqueue itself, or (on a service with no API key yet) the check for keys before it: either way no task.
    expect(refused.detail).toMatch(/store could not (enqueue|check for API keys)/);
    expect(refused.detail).toMatch(/same idempotency key/);
    const notReady = await expectStoreUnavailable(await fetch(`${service.url}/readyz`), 'GET /readyz');
    expect(notReady.detail).toMatch(/store did not answer a ping/);
    await expectStoreUnavailable(await fetch(`${service.url}/retry-tasks/${acknowledged.get('before-0')}`), 'GET /retry-tasks/:id');
    // The workers meet the outage too: claims fail and are tried again with a back-off; the lost connections are
    // reported (not thrown) while the store keeps reconnecting.
    const since = () => service.logs.slice(logsBefore);
    await waitFor(
      'the engine to report a failed claim',
      () =>
      since().some((line) => line.event === 'engine_error' && (line.context as { operation?: string }).operation === 'claim'),
    );
    await waitFor('the store to report its lost connection', () => since().some((line) => line.event === 'store_error'));
    // Results are kept and written again while their lease holds; the outage outlasts it, so they are given up
    // (the attempts are not lost: they are recorded as lease_expired once the store is back).
    const heldIds = new Set([...acknowledged].filter(([key]) => key.startsWith('held-')).map(([, id]) => id));
    const abandoned = () =>
      new Set(
        since()
          .filter((line) => line.event === 'engine_error' && (line.err as { code?: string }).code === 'COMPLETION_ABANDONED')
          .map((line) => (line.context as { taskId?: string }).taskId),
      );
    await waitFor('the results held up by the outage to be given up', () => [...heldIds].every((id) => abandoned().has(id)), 20_000);
    expect(await status(`${service.url}/healthz`)).toBe(200);
    expect(isAlive(service)).toBe(true);

    await proxy.start();
    await waitFor('/readyz to answer 200 again', async () => (await status(`${service.url}/readyz`)) === 200, 20_000);
    expect(isAlive(service)).toBe(true);
    // The refused enqueue, sent again with its key, creates the task now (it was not half-written meanwhile).
    const retried = await enqueue(service, target, 'during-0');
    expect(retried.status).toBe(201);
    acknowledged.set('during-0', ((await retried.json()) as { taskId: string }).taskId);
    const after = await enqueue(service, target, 'after-0');
    expect(after.status).toBe(201);
    acknowledged.set('after-0', ((await after.json()) as { taskId: string }).taskId);

    // Nothing acknowledged is lost: every task reaches SUCCEEDED, and each key is processed downstream once.
    const pending = new Set(acknowledged.values());
    await waitFor(
      'every acknowledged task to reach SUCCEEDED',
      async () => {
        for (const taskId of pending) {
          const res = await fetch(`${service.url}/retry-tasks/${taskId}`);
          if (res.status === 200 && ((await res.json()) as { status: string }).status === 'SUCCEEDED') pending.delete(taskId);
        }
        return pending.size === 0;
      },
      30_000,
    );
    const processed = (key: string) => (key.startsWith('held-') ? gated : downstream).processed.get(key);
    expect([...acknowledged.keys()].filter((key) => processed(key) !== 1)).toEqual([]);
    // A held task's answered attempt was recorded as lease_expired, and its retry was a replay downstream.
    for (const taskId of heldIds) {
      const res = await fetch(`${service.url}/retry-tasks/${taskId}/attempts`);
      const { items } = (await res.json()) as { items: { attemptNumber: number; outcome: string }[] };
      expect(items.map((attempt) => [attempt.attemptNumber, attempt.outcome])).toEqual([
        [1, 'lease_expired'],
        [2, 'succeeded'],
      ]);
    }
    expect(gated.replays).toBe(HELD);

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  }, 60_000);
});
