import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, DEFAULT_CONFIG, startRetryd, webhookKey, webhookSignature } from '@retryd/server';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createWebhookVerifier,
  DEFAULT_WEBHOOK_MAX_BODY_BYTES,
  MAX_WEBHOOK_SIGNATURE_HEADER_LENGTH,
  MAX_WEBHOOK_SIGNATURES,
  WebhookRefusal,
  WebhookVerificationError,
} from '../src/index.js';
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
    expect(() => createWebhookVerifier({ secrets: [VECTOR.secret, 'whsec_not base64!'] })).toThrow(
      'secrets[1] must be whsec_ followed by standard base64 (the secret is not shown)',
    );
    expect(() => createWebhookVerifier({ secrets: [] })).toThrow('secrets must be a secret or a non-empty list of secrets');
    expect(() => createWebhookVerifier({ secrets: VECTOR.secret, maxBodyBytes: -1 })).toThrow('maxBodyBytes must be an integer >= 0, got -1');
  });

  it('refuses a secret of fewer than 24 key bytes, the smallest the specification allows', () => {
    const rule = 'must hold at least 24 key bytes (whsec_ followed by the base64 of 24 to 64 random bytes)';
    expect(() => createWebhookVerifier({ secrets: 'whsec_AQ==' })).toThrow(`secrets ${rule}, got 1 (the secret is not shown)`);
    const short = `whsec_${Buffer.alloc(23, 5).toString('base64')}`;
    expect(() => createWebhookVerifier({ secrets: [VECTOR.secret, short] })).toThrow(`secrets[1] ${rule}, got 23 (the secret is not shown)`);
    expect(() => createWebhookVerifier({ secrets: `whsec_${Buffer.alloc(24, 5).toString('base64')}` })).not.toThrow();
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
    const specification = new Webhook(secret);
    const verdicts: string[] = [];
    const receiver = await startLoopbackServer((request, _n, res) => {
      verify(request.body, request.headers).then(
        ({ id }) => verdicts.push(`ok ${id}`),
        (error: unknown) => verdicts.push(`refused ${String(error)}`),
      );
      // The specification's own library accepts what the service sends, too.
      try {
        specification.verify(request.body, request.headers as Record<string, string>);
        verdicts.push('standardwebhooks ok');
      } catch (error) {
        verdicts.push(`standardwebhooks refused ${String(error)}`);
      }
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
      await expect.poll(() => [...verdicts].sort(), { timeout: 20_000 }).toEqual(['ok paid-7', 'standardwebhooks ok']);
    } finally {
      await service.close();
      await receiver.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('what one request may cost the verifier', () => {
  const secret = `whsec_${Buffer.alloc(32, 11).toString('base64')}`;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const at = 1_700_000_000;
  const sign = (id: string, body: string | Uint8Array) =>
    `v1,${createHmac('sha256', key).update(`${id}.${at}.`).update(body).digest('base64')}`;
  const headersOf = (signature: string) => ({ 'webhook-id': 'msg-1', 'webhook-timestamp': String(at), 'webhook-signature': signature });
  const verifier = (options: { maxBodyBytes?: number; secrets?: string | string[] } = {}) =>
    createWebhookVerifier({ secrets: secret, now: () => at * 1000, ...options });
  const wrong = (i: number) => `v1,${Buffer.alloc(32, i).toString('base64')}`;

  afterEach(() => vi.restoreAllMocks());

  it('computes the MAC once per secret, however many signatures the header holds, and compares each', async () => {
    const macs = vi.spyOn(crypto.subtle, 'sign');
    const verifications = vi.spyOn(crypto.subtle, 'verify');
    const body = '{"order":1}';
    const eight = [...Array.from({ length: MAX_WEBHOOK_SIGNATURES - 1 }, (_, i) => wrong(i)), sign('msg-1', body)].join(' ');
    expect(await verifier()(body, headersOf(eight))).toEqual({ id: 'msg-1', timestamp: at });
    expect(macs).toHaveBeenCalledTimes(1);
    const other = `whsec_${Buffer.alloc(24, 12).toString('base64')}`;
    const none = Array.from({ length: MAX_WEBHOOK_SIGNATURES }, (_, i) => wrong(i)).join(' ');
    expect(await refusal(verifier({ secrets: [other, secret] })(body, headersOf(none)))).toBe(WebhookRefusal.NO_MATCHING_SIGNATURE);
    expect(macs).toHaveBeenCalledTimes(3);
    expect(verifications).not.toHaveBeenCalled();
  });

  it('refuses more than 8 v1 signatures, or a header past 2,048 characters, before computing any MAC', async () => {
    const macs = vi.spyOn(crypto.subtle, 'sign');
    const body = '{"order":1}';
    const nine = [...Array.from({ length: MAX_WEBHOOK_SIGNATURES }, (_, i) => wrong(i)), sign('msg-1', body)].join(' ');
    const tooMany = await verifier()(body, headersOf(nine)).catch((e: unknown) => e as WebhookVerificationError);
    expect(tooMany).toMatchObject({ code: WebhookRefusal.SIGNATURE_HEADER_TOO_LARGE, message: 'webhook-signature must hold at most 8 v1 signatures, got 9' });
    // The probe that cost 32.5 s of CPU: 2,000 short candidates over a 10 MiB body.
    const flood = Array.from({ length: 2_000 }, () => 'v1,AAAA').join(' ');
    const long = await verifier()(new Uint8Array(10 * 1024 * 1024), headersOf(flood)).catch((e: unknown) => e as WebhookVerificationError);
    expect(long).toMatchObject({
      code: WebhookRefusal.SIGNATURE_HEADER_TOO_LARGE,
      message: `webhook-signature must be at most ${MAX_WEBHOOK_SIGNATURE_HEADER_LENGTH} characters, got ${flood.length}`,
    });
    expect(macs).not.toHaveBeenCalled();
    // Other versions beside the v1 ones are no candidates: a rotation's header with v1a signatures still passes.
    const mixed = [`v1a,${'A'.repeat(86)}==`, wrong(1), sign('msg-1', body), `v1a,${'B'.repeat(86)}==`].join(' ');
    expect(await verifier()(body, headersOf(mixed))).toMatchObject({ id: 'msg-1' });
  });

  it('refuses a body over maxBodyBytes (1 MiB by default) before computing any MAC, as text or bytes', async () => {
    const macs = vi.spyOn(crypto.subtle, 'sign');
    const limit = new Uint8Array(DEFAULT_WEBHOOK_MAX_BODY_BYTES).fill(0x61);
    const over = new Uint8Array(DEFAULT_WEBHOOK_MAX_BODY_BYTES + 1).fill(0x61);
    const overText = 'a'.repeat(DEFAULT_WEBHOOK_MAX_BODY_BYTES + 1);
    for (const body of [over, overText]) {
      const error = await verifier()(body, headersOf(sign('msg-1', body))).catch((e: unknown) => e as WebhookVerificationError);
      expect(error).toMatchObject({ code: WebhookRefusal.BODY_TOO_LARGE });
    }
    expect(macs).not.toHaveBeenCalled();
    expect(await verifier()(limit, headersOf(sign('msg-1', limit)))).toMatchObject({ id: 'msg-1' });
    // Counted in UTF-8 bytes: 6 characters of 2 bytes each are 12 bytes, over a limit of 10.
    const accented = 'éééééé';
    const small = await verifier({ maxBodyBytes: 10 })(accented, headersOf(sign('msg-1', accented))).catch((e: unknown) => e as WebhookVerificationError);
    expect(small).toMatchObject({ code: WebhookRefusal.BODY_TOO_LARGE, message: 'the body must be at most 10 bytes (maxBodyBytes), got 12' });
    const large = new Uint8Array(3 * 1024 * 1024).fill(0x62);
    expect(await verifier({ maxBodyBytes: large.length })(large, headersOf(sign('msg-1', large)))).toMatchObject({ id: 'msg-1' });
  });
});

describe('the standardwebhooks package (the specification\'s own library)', () => {
  const secret = `whsec_${Buffer.alloc(32, 21).toString('base64')}`;
  const body = '{"order":42,"note":"é ✓"}';

  it('signs what this verifier accepts, and nothing else', async () => {
    const at = new Date(1_700_000_000_000);
    const signature = new Webhook(secret).sign('msg_2Lq', at, body);
    const headers = { 'webhook-id': 'msg_2Lq', 'webhook-timestamp': String(at.getTime() / 1000), 'webhook-signature': signature };
    const verify = createWebhookVerifier({ secrets: secret, now: () => at.getTime() });
    expect(await verify(body, headers)).toEqual({ id: 'msg_2Lq', timestamp: 1_700_000_000 });
    expect(await verify(new TextEncoder().encode(body), new Headers(headers))).toMatchObject({ id: 'msg_2Lq' });
    expect(await refusal(verify(`${body} `, headers))).toBe(WebhookRefusal.NO_MATCHING_SIGNATURE);
    const other = createWebhookVerifier({ secrets: `whsec_${Buffer.alloc(32, 22).toString('base64')}`, now: () => at.getTime() });
    expect(await refusal(other(body, headers))).toBe(WebhookRefusal.NO_MATCHING_SIGNATURE);
  });

  it("verifies what the retryd service's signer produces, during a rotation too, and refuses a changed body", () => {
    // standardwebhooks checks the timestamp against the real clock: sign with the current second.
    const timestamp = Math.floor(Date.now() / 1000);
    const old = `whsec_${Buffer.alloc(24, 23).toString('base64')}`;
    const signature = webhookSignature([webhookKey(secret)!, webhookKey(old)!], 'order-42', timestamp, new TextEncoder().encode(body));
    const headers = { 'webhook-id': 'order-42', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
    for (const held of [secret, old]) expect(new Webhook(held).verify(body, headers)).toEqual({ order: 42, note: 'é ✓' });
    expect(() => new Webhook(secret).verify('{"order":43}', headers)).toThrow('No matching signature found');
  });
});
