import { createServer } from 'node:http';
import { retry, RetryExhaustedError } from '@retryd/core';

// A downstream that is briefly unavailable: 503 twice (Retry-After: 0, retry at once), then 200.
let requests = 0;
const server = createServer((req, res) => {
  requests += 1;
  if (requests <= 2) res.writeHead(503, { 'Retry-After': '0' }).end('busy');
  else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, key: req.headers['idempotency-key'] }));
}).listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const url = `http://127.0.0.1:${server.address().port}/charge`;

try {
  const response = await retry(
    ({ signal }) =>
      fetch(url, { method: 'POST', signal, headers: { 'Idempotency-Key': 'order-1042' }, body: '{"amount":100}' }),
    { maxAttempts: 5, initialDelayMs: 50, maxDelayMs: 1_000, jitterType: 'FULL', totalBudgetMs: 5_000 },
    {
      // fetch resolves on any HTTP status: retry 408, 425, 429 and 5xx (but 501), honouring Retry-After.
      retryOnResult: (res) => [408, 425, 429, 500, 502, 503, 504].includes(res.status),
      onAttempt: (e) => console.log(`attempt ${e.attempt}: ${e.outcome}${e.delayMs === undefined ? '' : `, next in ${e.delayMs} ms`}`),
    },
  );
  console.log(response.status, await response.json());
} catch (error) {
  if (error instanceof RetryExhaustedError) console.error(`gave up (${error.reason}) after ${error.attempts} attempts`);
  throw error;
} finally {
  server.close();
}
