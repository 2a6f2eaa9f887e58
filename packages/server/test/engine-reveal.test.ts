import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileBlobStore } from '../src/blobs/file-blob-store.js';
import { decideAttemptOutcome } from '../src/engine/decide-outcome.js';
import { DEFAULT_RETENTION } from '../src/retention/retention-periods.js';
import { HttpDispatcher } from '../src/engine/http-dispatcher.js';
import { RevealingDispatcher } from '../src/engine/revealing-dispatcher.js';
import { parseKeyring } from '../src/secrets/encryption-keys.js';
import { sealSecret } from '../src/secrets/secret-cipher.js';
import { loopbackGuard } from './engine-helpers.js';
import { envSecretProvider } from '../src/secrets/secret-provider.js';
import { TaskSecrets } from '../src/secrets/task-secrets.js';
import { makeTask, T0 } from './fixtures/tasks.js';
import { FAST_POLICY, reply, startServer, type TestServer } from './engine-helpers.js';
import { TEST_KEYRING } from './api-harness.js';

const SIGNING_KEY = Buffer.alloc(32, 9);
const provider = envSecretProvider({
  RETRYD_SECRET_API: 'from-provider',
  RETRYD_SECRET_HOOK: `whsec_${SIGNING_KEY.toString('base64')}`,
  RETRYD_SECRET_PLAIN: 'not-a-signing-secret',
});
let server: TestServer;
let dir: string;
let blobs: FileBlobStore;
let http: HttpDispatcher;

beforeAll(async () => {
  server = await startServer((_req, res) => reply(res, 200, 'ok'));
  dir = await mkdtemp(join(tmpdir(), 'retryd-reveal-'));
  blobs = new FileBlobStore(dir);
  http = new HttpDispatcher({ loadBody: (ref) => blobs.get(ref), targetGuard: loopbackGuard() });
});

afterAll(async () => {
  await http.close();
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('revealing secrets at dispatch', () => {
  it('sends sealed headers, references and a sensitive body (inline or from the blob store) in clear, and only there', async () => {
    const dispatcher = new RevealingDispatcher(http, new TaskSecrets({ keyring: TEST_KEYRING, provider }), (ref) => blobs.get(ref));
    const base = makeTask({ targetUrl: `${server.url}/inline` });
    const seal = (value: string, purpose: string, taskId = base.taskId) =>
      sealSecret(TEST_KEYRING, value, { tenantId: 'default', taskId, purpose });
    const task = makeTask({
      ...base,
      headers: {
        Authorization: { enc: seal('Bearer {{secret:API}}', 'header:authorization') },
        'X-Ref': { ref: 'k={{secret:API}}' },
        'x-plain': 'p',
      },
      body: seal('{"card":"4111"}', 'body'),
      sensitiveBody: true,
    });
    expect(await dispatcher.dispatch(task, 1)).toMatchObject({ kind: 'response', status: 200 });
    const seen = server.requests.at(-1);
    expect(seen?.headers).toMatchObject({ authorization: 'Bearer from-provider', 'x-ref': 'k=from-provider', 'x-plain': 'p' });
    expect(seen?.body).toBe('{"card":"4111"}');
    // The stored task is left as it was.
    expect(task.headers['X-Ref']).toEqual({ ref: 'k={{secret:API}}' });

    const big = makeTask({ targetUrl: `${server.url}/blob`, body: null, sensitiveBody: true });
    const ref = await blobs.put('default', big.taskId, seal('large body', 'body', big.taskId));
    expect(await dispatcher.dispatch({ ...big, bodyRef: ref }, 1)).toMatchObject({ kind: 'response', status: 200 });
    expect(server.requests.at(-1)?.body).toBe('large body');
  });

  it('ends the attempt with secret_unavailable, sending nothing, when a secret cannot be revealed; the task then FAILS', async () => {
    const before = server.requests.length;
    const task = makeTask({ targetUrl: `${server.url}/x`, status: 'IN_FLIGHT', headers: { 'X-Api-Key': { ref: '{{secret:MISSING}}' } } });
    const withoutKey = new RevealingDispatcher(http, new TaskSecrets({ provider }));
    const missing = await withoutKey.dispatch(task, 1);
    expect(missing).toMatchObject({
      kind: 'error',
      deadLetterReason: 'secret_unavailable',
      message: 'header X-Api-Key refers to secret MISSING, which the secret provider does not know',
    });
    const otherTask = sealSecret(TEST_KEYRING, 'v', { tenantId: 'default', taskId: 'another', purpose: 'header:authorization' });
    const copied = makeTask({ targetUrl: `${server.url}/x`, headers: { Authorization: { enc: otherTask } } });
    expect(await new RevealingDispatcher(http, new TaskSecrets({ keyring: TEST_KEYRING })).dispatch(copied, 1)).toMatchObject({
      message: 'header Authorization: the header:authorization secret does not decrypt with key test for this task',
      deadLetterReason: 'secret_unavailable',
    });
    const rotatedAway = new TaskSecrets({ keyring: parseKeyring(`new:${Buffer.alloc(32, 7).toString('base64')}`) });
    const sealed = makeTask({ targetUrl: `${server.url}/x`, headers: { Authorization: { enc: sealSecret(TEST_KEYRING, 'v', { tenantId: 'default', taskId: copied.taskId, purpose: 'header:authorization' }) } } });
    expect(await new RevealingDispatcher(http, rotatedAway).dispatch({ ...sealed, taskId: copied.taskId }, 1)).toMatchObject({
      message: 'header Authorization: the header:authorization secret is sealed with key test, which RETRYD_ENCRYPTION_KEY does not list',
    });
    expect(server.requests.length).toBe(before);

    const completion = decideAttemptOutcome(task, { startedAt: T0, result: missing }, { policy: FAST_POLICY, now: T0 + 1, random: () => 0.5, workerId: 'w', retention: DEFAULT_RETENTION });
    expect(completion.next).toMatchObject({ status: 'FAILED', deadLetterReason: 'secret_unavailable', nextAttemptAt: null });
    expect(completion.attempt).toMatchObject({ outcome: 'failed', errorMessage: 'header X-Api-Key refers to secret MISSING, which the secret provider does not know' });
  });

  it('signs with the resolved signing secrets over the body as sent, a blob-store body included; an unusable secret sends nothing', async () => {
    const dispatcher = new RevealingDispatcher(http, new TaskSecrets({ provider }), (ref) => blobs.get(ref));
    const big = makeTask({ targetUrl: `${server.url}/signed`, body: null, idempotencyKey: 'evt-1' });
    const ref = await blobs.put('default', big.taskId, '{"large":"body"}');
    expect(await dispatcher.dispatch({ ...big, bodyRef: ref }, 1, ['{{secret:HOOK}}'])).toMatchObject({ kind: 'response', status: 200 });
    const seen = server.requests.at(-1);
    expect(seen?.body).toBe('{"large":"body"}');
    const signed = `evt-1.${String(seen?.headers['webhook-timestamp'])}.{"large":"body"}`;
    expect(seen?.headers['webhook-signature']).toBe(`v1,${createHmac('sha256', SIGNING_KEY).update(signed).digest('base64')}`);
    // The same dispatcher without secrets: not signed.
    expect(await dispatcher.dispatch(makeTask({ targetUrl: `${server.url}/plain` }), 1)).toMatchObject({ status: 200 });
    expect(server.requests.at(-1)?.headers['webhook-signature']).toBeUndefined();

    const before = server.requests.length;
    const task = makeTask({ targetUrl: `${server.url}/x` });
    expect(await dispatcher.dispatch(task, 1, ['{{secret:HOOK}}', '{{secret:GONE}}'])).toMatchObject({
      kind: 'error',
      deadLetterReason: 'secret_unavailable',
      message: "the target's signing secret GONE is unknown to the secret provider",
    });
    expect(await dispatcher.dispatch(task, 1, ['{{secret:PLAIN}}'])).toMatchObject({
      kind: 'error',
      deadLetterReason: 'secret_unavailable',
      message: 'a signing secret of the target is not a Standard Webhooks secret (whsec_ followed by the base64 of 24 to 64 key bytes)',
    });
    expect(server.requests.length).toBe(before);
  });

  it("reveals only the task's tenant's secrets and the shared ones: another tenant's name is unknown at dispatch too", async () => {
    const scoped = envSecretProvider({ RETRYD_SECRET_API: 'default-only', RETRYD_SHARED_SECRET_HOOK: `whsec_${SIGNING_KEY.toString('base64')}` });
    const dispatcher = new RevealingDispatcher(http, new TaskSecrets({ provider: scoped }));
    const before = server.requests.length;
    const foreign = makeTask({ tenantId: 'acme', targetUrl: `${server.url}/x`, headers: { 'X-Api-Key': { ref: '{{secret:API}}' } } });
    expect(await dispatcher.dispatch(foreign, 1)).toMatchObject({
      kind: 'error',
      deadLetterReason: 'secret_unavailable',
      message: 'header X-Api-Key refers to secret API, which the secret provider does not know',
    });
    expect(server.requests.length).toBe(before);
    // A shared signing secret signs any tenant's attempts.
    expect(await dispatcher.dispatch(makeTask({ tenantId: 'acme', targetUrl: `${server.url}/signed` }), 1, ['{{secret:HOOK}}'])).toMatchObject({ status: 200 });
    expect(server.requests.at(-1)?.headers['webhook-signature']).toMatch(/^v1,/);
  });

  it('scrubs what it revealed out of the excerpt of a target that echoes it, whole, escaped or cut off, and out of an error message', async () => {
    const echo = await startServer((req, res) => reply(res, 500, `${JSON.stringify(req.headers)}\n${encodeURIComponent(req.headers['x-ref'] as string)}\n${req.body}`));
    try {
      const dispatcher = new RevealingDispatcher(http, new TaskSecrets({ keyring: TEST_KEYRING, provider }), (ref) => blobs.get(ref));
      const base = makeTask({ targetUrl: `${echo.url}/echo`, body: null, sensitiveBody: true });
      // A body longer than the excerpt: the echo is cut at 4 KiB in the middle of it.
      const body = `{"card":"4111-1111-1111-1111","pad":"${'p'.repeat(6000)}"}`;
      const ref = await blobs.put('default', base.taskId, sealSecret(TEST_KEYRING, body, { tenantId: 'default', taskId: base.taskId, purpose: 'body' }));
      const task = makeTask({
        ...base,
        bodyRef: ref,
        headers: {
          Cookie: { enc: sealSecret(TEST_KEYRING, 'sid=cookie-value-123456; theme=dark', { tenantId: 'default', taskId: base.taskId, purpose: 'header:cookie' }) },
          'X-Ref': { ref: 'k={{secret:API}} "q"' },
          'x-plain': 'plain-value',
        },
      });
      const result = await dispatcher.dispatch(task, 1);
      expect(echo.requests[0]?.headers).toMatchObject({ cookie: 'sid=cookie-value-123456; theme=dark', 'x-ref': 'k=from-provider "q"' });
      if (result.kind !== 'response') throw new Error(`expected a response, got ${JSON.stringify(result)}`);
      const snippet = result.bodySnippet ?? '';
      expect(snippet).toContain('"x-plain":"plain-value"');
      expect(snippet).toContain('"cookie":"[REDACTED]"');
      expect(snippet).toContain('"x-ref":"[REDACTED]"');
      expect(snippet.endsWith('[REDACTED]')).toBe(true);
      for (const secret of ['cookie-value-123456', 'from-provider', encodeURIComponent('k=from-provider "q"'), '4111-1111', 'pppppppp']) {
        expect(snippet, secret).not.toContain(secret);
      }

      // An error whose message quotes what was sent (a substitute dispatcher's, say) is scrubbed too.
      const quoting = new RevealingDispatcher(
        {
          dispatch: async (sent) => ({ kind: 'error', error: new Error('x'), message: `refused header value ${String(sent.headers['X-Ref'])}` }),
          close: async () => undefined,
          destroy: async () => undefined,
        },
        new TaskSecrets({ provider }),
      );
      expect(await quoting.dispatch(makeTask({ headers: { 'X-Ref': { ref: 'k={{secret:API}}' } } }), 1)).toMatchObject({
        kind: 'error',
        message: 'refused header value [REDACTED]',
      });
    } finally {
      await echo.close();
    }
  });
});
