// W6's requests (../shared/WORKLOADS.md, "bulk enqueue"): `POST /retry-tasks/batch`, 1,000 tasks a request, 4 requests
// in flight, each task due in an hour with its own idempotency key, two headers and a small JSON body, as W1's.

import { spawn } from 'node:child_process';

/** Tasks a request, and requests in flight. */
export const W6 = Object.freeze({ perRequest: 1000, inFlight: 4 });

/** W1's policy, given inline with every task. */
const POLICY = Object.freeze({ maxAttempts: 5, backoffType: 'EXPONENTIAL', initialDelayMs: 1, multiplier: 2, maxDelayMs: 10, jitterType: 'FULL' });

/**
 * W6's task number `n`: `POST /retry-tasks`'s body, due at `notBefore` (epoch ms), keyed `<keyPrefix>-<n>`, with two
 * headers, a small JSON body and W1's policy inline.
 */
export function w6Task(n, { keyPrefix, notBefore }) {
  return {
    // Never called (due in an hour); an address, so that no name is resolved at creation.
    targetUrl: `http://127.0.0.1:9/hooks/${n}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request': `r${n}` },
    body: { order: n, amount: 1299, currency: 'EUR' },
    idempotencyKey: `${keyPrefix}-${n}`,
    policy: POLICY,
    notBefore,
  };
}

/**
 * Sends `total` tasks to `url`'s `POST /retry-tasks/batch` as W6 does, and resolves with the seconds it took. The
 * bodies are built as the requests go (the load generator's work counts on the shared machine, as every client's
 * would). `prefer`: the `Prefer` header (`return=minimal`: ids back, as a caller loading a backlog asks), or none.
 * `keyPrefix` makes the idempotency keys of one run.
 */
export async function sendW6(url, total, { prefer, keyPrefix }) {
  const headers = { 'content-type': 'application/json', ...(prefer === undefined ? {} : { prefer }) };
  const notBefore = Date.now() + 3_600_000;
  let next = 0;
  const send = async () => {
    while (next < total) {
      const first = next;
      next += W6.perRequest;
      const tasks = Array.from({ length: Math.min(W6.perRequest, total - first) }, (_, i) => w6Task(first + i, { keyPrefix, notBefore }));
      const res = await fetch(`${url}/retry-tasks/batch`, { method: 'POST', headers, body: JSON.stringify({ tasks }) });
      if (res.status >= 300) throw new Error(`batch answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: W6.inFlight }, send));
  return (performance.now() - started) / 1000;
}

/**
 * Starts `node <args>` (a service that prints a JSON line with its `"url"` once it listens) and resolves with the
 * child, its URL and `stop()`, which kills it and waits for its exit. Rejects if it exits before printing the URL.
 */
export async function startUrlService(args) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const stop = async () => {
    child.removeAllListeners('exit');
    child.kill('SIGTERM');
    await new Promise((done) => (child.exitCode === null && child.signalCode === null ? child.on('exit', done) : done(undefined)));
  };
  try {
    const url = await new Promise((done, fail) => {
      let out = '';
      child.on('exit', (code) => fail(new Error(`${args.join(' ')} exited with ${code}: ${out}`)));
      child.stdout.on('data', (chunk) => {
        out += chunk;
        const found = out.match(/"url":"([^"]+)"/);
        if (found !== null) done(found[1]);
      });
    });
    return { child, url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
