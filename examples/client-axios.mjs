import { createServer } from 'node:http';
import axios from 'axios';
import { attachRetry } from '@retryd/client/axios';

// A downstream that is rate limited once (429, Retry-After: 0 means "now"), then answers.
let attempts = 0;
const server = createServer((req, res) => {
  attempts += 1;
  if (attempts === 1) res.writeHead(429, { 'retry-after': '0' }).end();
  else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
}).listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));

const api = axios.create({ baseURL: `http://127.0.0.1:${server.address().port}` });
attachRetry(api, { policy: { maxAttempts: 3, totalBudgetMs: 5_000 }, maxConcurrentRetries: 8 });
const { status, data } = await api.post('/payments', { amount: 100 });
console.log(`${status} ${JSON.stringify(data)} after ${attempts} attempts`);
server.close();
