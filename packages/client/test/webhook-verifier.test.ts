import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, DEFAULT_CONFIG, startRetryd, webhookKey, webhookSignature } from '@retryd/server';
import { describe, expect, it } from 'vitest';
import { createWebhookVerifier, WebhookRefusal, WebhookVerificationError } from '../src/index.js';
import { startLoopbackServer } from './loopback-server.js';

// The test vector of the Standard Webhooks specification (its libraries' tests use the same one).
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const vectorHeaders = { 'webhook-id': VECTOR.id, 'webhook-timestamp': String(VECTOR.timestamp), 'webhook-signature': VECTOR.signature };
const atVector = () => VECTOR.timestamp * 1000;

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(WebhookVerificationError);
  return (error as WebhookVerificationError).code;
}

describe('createWebhookVerifier', () => {
  it("accepts the specification's test vector, as text, as bytes and among other signatures", async () => {
    const verify = createWebhookVerifier({ secrets: VECTOR.secret, now: atVector });
    expect(await verify(VECTOR.body, vectorHeaders)).toEqual({ id: VECTOR.id, timestamp: VECTOR.timestamp });
    expect(await verify(new TextEncoder().encode(VECTOR.body), new Headers(vectorHeaders))).toMatchObject({ id: VECTOR.id });
    const rotated = { ...vectorHeaders, 'webhook-signature': `v1,Zm9yZ2Vk v2,abc ${VECTOR.signature}` };
    expect(await verify(VECTOR.body, rotated)).toMatchObject({ id: VECTOR.id });
  });

  it('refuses a changed body, a wrong secret, a stale or future timestamp and missing headers, each with its code', async () => {
    const verify = createWebhookVerifier({ secrets: VECTOR.secret, now: atVector });
    expect(await refusal(verify('{"test": 2432232315}', vectorHeaders))).toBe(WebhookRefusal.NO_MATCHING_SIGNATURE);
    const other = createWebhookVerifier({ secrets: `whsec_${btoa('another key of 24 bytes!!')}`, now: atVector });
    expect(await refusal(other(VECTOR.body, vectorHeaders))).toBe(WebhookRefusal.NO_MATCHING_SIGNATURE);
    const late = createWebhookVerifier({ secrets: VECTOR.secret, now: () => atVector() + 301_000 });
    expect(await refusal(late(VECTOR.body, vectorHeaders))).toBe(WebhookRefusal.TIMESTAMP_OUT_OF_TOLERANCE);
    const early = createWebhookVerifier({ secrets: VECTOR.secret, now: () => atVector() - 301_000 });
    expect(await refusal(early(VECTOR.body, vectorHeaders))).toBe(WebhookRefusal.TIMESTAMP_OUT_OF_TOLERANCE);
    expect(await refusal(verify(VECTOR.body, { ...vectorHeaders, 'webhook-timestamp': '16e8' }))).toBe(WebhookRefusal.INVALID_TIMESTAMP);
    expect(await refusal(verify(VECTOR.body, { 'webhook-id': VECTOR.id }))).toBe(WebhookRefusal.MISSING_HEADER);
  });

  it('names the option and the rule for a bad secret, without quoting it', () => {
    expect(() => createWebhookVerifier({ secrets: ['whsec_ok+/', 'whsec_not base64!'] })).toThrow(
      'secrets[1] must be whsec_ followed by standard base64 (the secret is not shown)',
    );
    expect(() => createWebhookVerifier({ secrets: [] })).toThrow('secrets must be a secret or a non-empty list of secrets');
  });

  it("accepts what the server's signer produces, with one secret or during a rotation", async () => {
    const fresh = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const old = `whsec_${Buffer.alloc(24, 9).toString('base64')}`;
    const body = new TextEncoder().encode('{"order":42,"note":"é ✓"}');
    const signature = webhookSignature([webhookKey(fresh)!, webhookKey(old)!], 'order-42', 1_700_000_000, body);
    const headers = { 'webhook-id': 'order-42', 'webhook-timestamp': '1700000000', 'webhook-signature': signature };
    for (const secrets of [fresh, old, [old, fresh]]) {
      const verify = createWebhookVerifier({ secrets, now: () => 1_700_000_000_000 });
      expect(await verify(body, headers)).toEqual({ id: 'order-42', timestamp: 1_700_000_000 });
    }
  });

  it('verifies the attempts the running retryd service sends to a signing target', async () => {
    const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    const verify = createWebhookVerifier({ secrets: secret });
    const verdicts: string[] = [];
    const receiver = await startLoopbackServer((request, _n, res) => {
      verify(request.body, request.headers).then(
        ({ id }) => verdicts.push(`ok ${id}`),
        (error: unknown) => verdicts.push(`refused ${String(error)}`),
      );
      res.writeHead(200).end();
    });
    const dir = await mkdtemp(join(tmpdir(), 'retryd-client-signing-'));
    const secretsFile = join(dir, 'secrets.json');
    await writeFile(secretsFile, JSON.stringify({ HOOK: secret }));
    const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
    const service = await startRetryd(
      { ...DEFAULT_CONFIG, port: 0, store: `sqlite:${join(dir, 'service.db')}`, allowTargets: ['127.0.0.1/32'], secretsFile, graceMs: 0 },
      createLogger('info', quiet),
    );
    try {
      const api = (method: string, path: string, body: unknown) =>
        fetch(`${service.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const put = await api('PUT', `/targets/${encodeURIComponent(receiver.url)}`, { signing: { enabled: true, secrets: ['{{secret:HOOK}}'] } });
      expect(put.status).toBe(200);
      const created = await api('POST', '/retry-tasks', { targetUrl: `${receiver.url}/hook`, method: 'POST', idempotencyKey: 'paid-7', body: { order: 7, note: 'é' } });
      expect(created.status).toBe(201);
      await expect.poll(() => verdicts, { timeout: 20_000 }).toEqual(['ok paid-7']);
    } finally {
      await service.close();
      await receiver.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
