import { createServer } from 'node:http';
import { RetryQueue } from '@retryd/client';

// A collector that is down for its first three requests. In a browser, add
// `persistence: indexedDbPersistence()` from '@retryd/client/indexeddb' so queued calls survive a reload.
let requests = 0;
const server = createServer((req, res) => res.writeHead(++requests <= 3 ? 503 : 204).end()).listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));

const queue = await RetryQueue.open({
  policy: { initialDelayMs: 20, maxAttempts: 5 },
  concurrency: 2,
  onSuccess: (call) => console.log(`delivered ${call.request.body} after ${call.attempts} attempts`),
  onDeadLetter: ({ call, reason }) => console.log(`gave up on ${call.request.body}: ${reason}`),
});
for (const name of ['signup', 'checkout']) {
  await queue.enqueue({ url: `http://127.0.0.1:${server.address().port}/events`, method: 'POST', body: name });
}
await queue.drained();
server.close();
