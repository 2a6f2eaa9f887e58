import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import { createWebhookVerifier } from '@retryd/client';

// A receiver of calls that retryd signs (a target with signing secrets): it checks each before acting on it.
const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const verify = createWebhookVerifier({ secrets: secret });
const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  try {
    const { id } = await verify(Buffer.concat(chunks), req.headers); // the exact bytes received
    res.writeHead(200).end(`accepted ${id}`);
  } catch (error) {
    res.writeHead(401).end(`refused: ${error.code}`);
  }
}).listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));

// What retryd sends: webhook-id (the task's idempotency key), webhook-timestamp and webhook-signature.
const body = '{"order":42}';
const timestamp = Math.floor(Date.now() / 1000);
const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
const signature = `v1,${createHmac('sha256', key).update(`order-42.${timestamp}.${body}`).digest('base64')}`;
const url = `http://127.0.0.1:${server.address().port}/hooks`;
for (const sent of [body, '{"order":43}']) {
  const headers = { 'webhook-id': 'order-42', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
  const res = await fetch(url, { method: 'POST', headers, body: sent });
  console.log(res.status, await res.text());
}
server.close();
