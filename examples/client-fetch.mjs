import { createServer } from 'node:http';
import { createRetryingFetch } from '@retryd/client';

// A downstream that answers 503 twice, then 201, echoing the Idempotency-Key it received.
let attempts = 0;
const server = createServer((req, res) => {
  attempts += 1;
  res.writeHead(attempts < 3 ? 503 : 201).end(req.headers['idempotency-key']);
}).listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));

const fetchWithRetry = createRetryingFetch({ policy: { maxAttempts: 4, initialDelayMs: 50, totalBudgetMs: 5_000 } });
const res = await fetchWithRetry(`http://127.0.0.1:${server.address().port}/orders`, {
  method: 'POST', // a POST gets an Idempotency-Key derived from the request, the same on every attempt
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ sku: 'A-1', qty: 2 }),
});
console.log(`${res.status} after ${attempts} attempts, key ${await res.text()}`);
server.close();
