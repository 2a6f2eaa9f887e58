import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/service/logger.js';
import { DEFAULT_CONFIG } from '../src/service/retryd-config.js';
import { startRetryd, type RunningRetryd } from '../src/service/start-retryd.js';
import { reply, startServer, type SeenRequest, type TestServer } from './engine-helpers.js';
import { waitFor } from './wait-for.js';

// Signed requests in the running service: a target's signing settings set through PUT /targets, each attempt to it
// checked by the receiving loopback server with its own HMAC, as a Standard Webhooks receiver would.

const NEW_KEY = Buffer.alloc(32, 1);
const OLD_KEY = Buffer.alloc(24, 2);
const SECRETS = {
  HOOK_NEW: `whsec_${NEW_KEY.toString('base64')}`,
  HOOK_OLD: `whsec_${OLD_KEY.toString('base64')}`,
  NOT_WHSEC: 'sk_live_not_a_signing_secret',
  // One key byte: shorter than the 24 the specification asks for.
  SHORT: 'whsec_AQ==',
};
const REFERENCE_RULE =
  "a reference {{secret:NAME}} to a secret of the target's tenant or a shared one; a literal secret is never stored";

let dir: string;
let service: RunningRetryd;
let signed: TestServer;
let unsigned: TestServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'retryd-signing-'));
  const secretsFile = join(dir, 'secrets.json');
  await writeFile(secretsFile, JSON.stringify(SECRETS));
  signed = await startServer((_req, res) => reply(res, 200, 'ok'));
  unsigned = await startServer((_req, res) => reply(res, 200, 'ok'));
  const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
  service = await startRetryd(
    { ...DEFAULT_CONFIG, port: 0, store: `sqlite:${join(dir, 'service.db')}`, allowTargets: ['127.0.0.1/32'], secretsFile, graceMs: 0 },
    createLogger('info', quiet),
  );
});

afterAll(async () => {
  await service.close();
  await signed.close();
  await unsigned.close();
  await rm(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const putSettings = (server: TestServer, patch: unknown) => call('PUT', `/targets/${encodeURIComponent(server.url)}`, patch);

/** Enqueues a task to `server` and waits for the request it receives. */
async function deliver(server: TestServer, task: Record<string, unknown>): Promise<SeenRequest> {
  const before = server.requests.length;
  const created = await call('POST', '/retry-tasks', { targetUrl: `${server.url}/hook`, method: 'POST', ...task });
  expect(created.status).toBe(201);
  return waitFor(`the request to ${server.url}`, () => server.requests[before]);
}

/** What a receiver computes: base64 HMAC-SHA256 of `id.timestamp.body` with the key the secret's base64 holds. */
const expected = (key: Buffer, seen: SeenRequest) =>
  `v1,${createHmac('sha256', key).update(`${seen.headers['webhook-id']}.${seen.headers['webhook-timestamp']}.${seen.body}`).digest('base64')}`;

describe('signed requests', () => {
  it('signs every attempt to a target that signs, with one signature per secret, over the exact body received', async () => {
    const put = await putSettings(signed, { signing: { enabled: true, secrets: ['{{secret:HOOK_NEW}}', '{{secret:HOOK_OLD}}'] } });
    expect(put.status).toBe(200);
    expect((put.body.settings as { signing: unknown }).signing).toEqual({ enabled: true, secrets: ['{{secret:HOOK_NEW}}', '{{secret:HOOK_OLD}}'] });

    const before = Math.floor(Date.now() / 1000);
    const seen = await deliver(signed, { idempotencyKey: 'order-42-paid', body: { order: 42, note: 'é ✓' } });
    const after = Math.floor(Date.now() / 1000);
    expect(seen.body).toBe('{"order":42,"note":"é ✓"}');
    expect(seen.headers['webhook-id']).toBe('order-42-paid');
    expect(seen.headers['idempotency-key']).toBe('order-42-paid');
    const timestamp = Number(seen.headers['webhook-timestamp']);
    expect(Number.isInteger(timestamp) && timestamp >= before && timestamp <= after).toBe(true);
    expect(seen.headers['webhook-signature']).toBe(`${expected(NEW_KEY, seen)} ${expected(OLD_KEY, seen)}`);

    // A task without a body is signed over the empty string; a task's own webhook-* header gives way.
    const empty = await deliver(signed, { idempotencyKey: 'ping-1', method: 'GET', headers: { 'Webhook-Signature': 'v1,forged' } });
    expect(empty.body).toBe('');
    expect(empty.headers['webhook-signature']).toBe(`${expected(NEW_KEY, empty)} ${expected(OLD_KEY, empty)}`);

    // Signing off: sent without the headers again.
    expect((await putSettings(signed, { signing: { enabled: false } })).status).toBe(200);
    const plain = await deliver(signed, { idempotencyKey: 'order-43' });
    expect(Object.keys(plain.headers).filter((h) => h.startsWith('webhook-'))).toEqual([]);
  });

  it('sends a target that does not sign none of the headers', async () => {
    const seen = await deliver(unsigned, { idempotencyKey: 'plain-1', body: { x: 1 } });
    expect(Object.keys(seen.headers).filter((h) => h.startsWith('webhook-'))).toEqual([]);
  });

  it('refuses a literal secret, an unknown reference and a secret that is not whsec_, naming the field and the rule', async () => {
    const literal = await putSettings(unsigned, { signing: { enabled: true, secrets: [SECRETS.HOOK_NEW] } });
    expect(literal.status).toBe(400);
    expect(literal.body.errors).toEqual([
      { field: 'signing.secrets[0]', rule: REFERENCE_RULE, message: `signing.secrets[0] must be ${REFERENCE_RULE}` },
    ]);
    expect(JSON.stringify(literal.body)).not.toContain(SECRETS.HOOK_NEW);

    const unknown = await putSettings(unsigned, { signing: { enabled: true, secrets: ['{{secret:HOOK_NEW}}', '{{secret:NOPE}}'] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([
      {
        field: 'signing.secrets[1]',
        rule: '{{secret:NOPE}} must name a secret of tenant default or a shared one (--secrets-file, RETRYD_SECRET_NOPE or RETRYD_SHARED_SECRET_NOPE); it is unknown',
        message: 'signing.secrets[1]: {{secret:NOPE}} must name a secret of tenant default or a shared one (--secrets-file, RETRYD_SECRET_NOPE or RETRYD_SHARED_SECRET_NOPE); it is unknown',
      },
    ]);

    const notWhsec = await putSettings(unsigned, { signing: { enabled: true, secrets: ['{{secret:NOT_WHSEC}}'] } });
    expect(notWhsec.status).toBe(400);
    expect(notWhsec.body.errors).toMatchObject([
      { field: 'signing.secrets[0]', rule: '{{secret:NOT_WHSEC}} must name a Standard Webhooks secret (whsec_ followed by the base64 of 24 to 64 key bytes); it is not one' },
    ]);
    expect(JSON.stringify(notWhsec.body)).not.toContain(SECRETS.NOT_WHSEC);

    const short = await putSettings(unsigned, { signing: { enabled: true, secrets: ['{{secret:SHORT}}'] } });
    expect(short.status).toBe(400);
    expect(short.body.errors).toMatchObject([{ field: 'signing.secrets[0]', rule: expect.stringContaining('the base64 of 24 to 64 key bytes') }]);

    // Nothing was stored: the target still does not sign.
    const view = await call('GET', `/targets/${encodeURIComponent(unsigned.url)}`);
    expect((view.body.settings as { signing: unknown }).signing).toEqual({ enabled: false, secrets: [] });
  });

  it('ends the attempt with secret_unavailable, sending nothing, when a signing secret is gone at dispatch', async () => {
    process.env.RETRYD_SECRET_HOOK_GONE = SECRETS.HOOK_NEW;
    const target = await startServer((_req, res) => reply(res, 200, 'ok'));
    try {
      expect((await putSettings(target, { signing: { enabled: true, secrets: ['{{secret:HOOK_GONE}}'] } })).status).toBe(200);
      delete process.env.RETRYD_SECRET_HOOK_GONE;
      const created = await call('POST', '/retry-tasks', { targetUrl: `${target.url}/hook`, method: 'POST' });
      const id = created.body.taskId as string;
      const failed = await waitFor(
        'the task to fail',
        async () => {
          const task = (await call('GET', `/retry-tasks/${id}`)).body;
          return task.status === 'FAILED' ? task : undefined;
        },
      );
      expect(failed).toMatchObject({ deadLetterReason: 'secret_unavailable', attemptNumber: 1 });
      expect(failed.lastError).toBe("the target's signing secret HOOK_GONE is unknown to the secret provider");
      expect(target.requests).toHaveLength(0);
    } finally {
      delete process.env.RETRYD_SECRET_HOOK_GONE;
      await target.close();
    }
  });
});
