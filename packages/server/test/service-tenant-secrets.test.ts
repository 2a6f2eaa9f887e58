import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeys } from '../src/access/api-keys.js';
import { openStore } from '../src/service/open-store.js';
import { DEFAULT_CONFIG } from '../src/service/retryd-config.js';
import { startRetryd, type RunningRetryd } from '../src/service/start-retryd.js';
import { TEST_ENCRYPTION_KEY } from './api-harness.js';
import { quietLogger } from './captured-logger.js';
import { reply, startServer, type TestServer } from './engine-helpers.js';
import { waitFor } from './wait-for.js';

// Secrets belong to a tenant, in the running service as `retryd serve` runs it: two tenants with keys of their own,
// one secrets file with a section for each and a shared one, and a target that echoes what it receives.

const SECRETS = {
  A_STRIPE_KEY: 'sk_live_acme_0123456789abcdef',
  A_HOOK: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
  SHARED_HOOK: `whsec_${Buffer.alloc(32, 9).toString('base64')}`,
  SHARED_RELAY: 'relay-token-shared-4242',
};
const LITERAL = { apiKey: 'literal-api-key-5555aaaa', password: 'hunter2-password-zz', pin: '90210-pin-value', card: '4111-1111-1111-1111' };

let dir: string;
let service: RunningRetryd;
let echo: TestServer;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'retryd-tenant-secrets-'));
  const secretsFile = join(dir, 'secrets.json');
  await writeFile(
    secretsFile,
    JSON.stringify({
      tenants: { acme: { A_STRIPE_KEY: SECRETS.A_STRIPE_KEY, A_HOOK: SECRETS.A_HOOK } },
      shared: { SHARED_HOOK: SECRETS.SHARED_HOOK, SHARED_RELAY: SECRETS.SHARED_RELAY },
    }),
  );
  const store = `sqlite:${join(dir, 'service.db')}`;
  const opened = await openStore(store);
  const keys = new ApiKeys(opened.store);
  for (const tenantId of ['acme', 'globex']) {
    for (const scope of ['admin', 'write'] as const) tokens[`${tenantId}:${scope}`] = (await keys.create({ tenantId, scope, name: `${tenantId}-${scope}` })).token;
  }
  await opened.store.close();
  await opened.blobs.close?.();
  // Answers 422 (a permanent failure: one attempt) with everything it received, as an echoing endpoint would.
  echo = await startServer((req, res) => reply(res, 422, JSON.stringify({ youSent: { headers: req.headers, body: req.body } }), { 'content-type': 'application/json' }));
  service = await startRetryd(
    {
      ...DEFAULT_CONFIG,
      port: 0,
      store,
      allowTargets: ['127.0.0.1/32'],
      secretsFile,
      encryptionKey: TEST_ENCRYPTION_KEY,
      credentialHeaders: ['X-Partner-Pin'],
      graceMs: 0,
    },
    quietLogger(),
  );
});

afterAll(async () => {
  await service?.close();
  await echo?.close();
  await rm(dir, { recursive: true, force: true });
});

async function call(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${tokens[key]}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Record<string, unknown>, text };
}

const enqueue = (key: string, task: Record<string, unknown>) => call(key, 'POST', '/retry-tasks', { targetUrl: `${echo.url}/hook`, method: 'POST', ...task });
const putSigning = (key: string, secrets: string[]) =>
  call(key, 'PUT', `/targets/${encodeURIComponent(echo.url)}`, { signing: { enabled: true, secrets } });

/** The answer with `name` put where `as` stands, to compare a foreign name's answer with an unknown one's. */
const renamed = (answer: { status: number; body: Record<string, unknown> }, name: string, as: string) => ({
  status: answer.status,
  body: JSON.parse(JSON.stringify(answer.body).replaceAll(name, as)) as unknown,
});

describe('secrets scoped to their tenant', () => {
  it("refuses another tenant's secret in a header with the very answer an unknown name gets", async () => {
    const foreign = await enqueue('globex:write', { headers: { 'X-Exfil': '{{secret:A_STRIPE_KEY}}' } });
    const unknown = await enqueue('globex:write', { headers: { 'X-Exfil': '{{secret:NO_SUCH_KEY}}' } });
    expect(foreign.status).toBe(400);
    expect(renamed(foreign, 'A_STRIPE_KEY', 'NO_SUCH_KEY')).toEqual(renamed(unknown, 'NO_SUCH_KEY', 'NO_SUCH_KEY'));
    expect(foreign.body.errors).toEqual([
      {
        field: 'headers.X-Exfil',
        rule: '{{secret:A_STRIPE_KEY}} must name a secret of tenant globex or a shared one (--secrets-file, RETRYD_TENANT_SECRET_globex__A_STRIPE_KEY or RETRYD_SHARED_SECRET_A_STRIPE_KEY); it is unknown',
        message:
          'headers.X-Exfil: {{secret:A_STRIPE_KEY}} must name a secret of tenant globex or a shared one (--secrets-file, RETRYD_TENANT_SECRET_globex__A_STRIPE_KEY or RETRYD_SHARED_SECRET_A_STRIPE_KEY); it is unknown',
      },
    ]);
    expect(foreign.text).not.toContain(SECRETS.A_STRIPE_KEY);
    // The default tenant, which the top level of the file and RETRYD_SECRET_<NAME> serve, does not reach it either.
    expect(echo.requests).toHaveLength(0);
    // Its own tenant may name it, and any tenant a shared one.
    expect((await enqueue('acme:write', { headers: { 'X-Mine': '{{secret:A_STRIPE_KEY}}' } })).status).toBe(201);
    expect((await enqueue('globex:write', { headers: { 'X-Relay': '{{secret:SHARED_RELAY}}' } })).status).toBe(201);
  });

  it("refuses another tenant's signing secret with the very answer an unknown name gets, and takes a shared one", async () => {
    const foreign = await putSigning('globex:admin', ['{{secret:A_HOOK}}']);
    const unknown = await putSigning('globex:admin', ['{{secret:NO_HOOK}}']);
    expect(foreign.status).toBe(400);
    expect(renamed(foreign, 'A_HOOK', 'NO_HOOK')).toEqual(renamed(unknown, 'NO_HOOK', 'NO_HOOK'));
    expect(foreign.body.errors).toMatchObject([{ field: 'signing.secrets[0]', rule: expect.stringContaining('must name a secret of tenant globex or a shared one') as unknown }]);
    expect((await putSigning('acme:admin', ['{{secret:A_HOOK}}'])).status).toBe(200);
    expect((await putSigning('globex:admin', ['{{secret:SHARED_HOOK}}'])).status).toBe(200);
  });

  it('scrubs every secret the attempt sent out of the excerpt a target echoes it into, and out of every answer', async () => {
    const created = await enqueue('acme:write', {
      headers: {
        Authorization: 'Bearer {{secret:A_STRIPE_KEY}}',
        'X-Relay': 'relay={{secret:SHARED_RELAY}}',
        apikey: LITERAL.apiKey,
        'X-Password': LITERAL.password,
        'X-Partner-Pin': LITERAL.pin,
        'X-Plain': 'visible-value',
      },
      body: { card: LITERAL.card },
      sensitiveBody: true,
    });
    expect(created.status).toBe(201);
    const taskId = created.body.taskId as string;
    const failed = await waitFor(
      'the task to fail on the echo',
      async () => {
        const task = await call('acme:write', 'GET', `/retry-tasks/${taskId}`);
        return task.body.status === 'FAILED' ? task : undefined;
      },
    );
    // The target did receive them all: what follows is about what came back.
    const received = echo.requests.find((r) => r.headers['x-plain'] === 'visible-value');
    expect(received?.headers).toMatchObject({ authorization: `Bearer ${SECRETS.A_STRIPE_KEY}`, 'x-partner-pin': LITERAL.pin, apikey: LITERAL.apiKey });
    expect(received?.body).toBe(JSON.stringify({ card: LITERAL.card }));

    const attempts = await call('acme:write', 'GET', `/retry-tasks/${taskId}/attempts`);
    const [attempt] = attempts.body.items as { responseBodySnippet: string; responseStatus: number }[];
    expect(attempt?.responseStatus).toBe(422);
    expect(attempt?.responseBodySnippet).toContain('visible-value');
    expect(attempt?.responseBodySnippet).toContain('"authorization":"[REDACTED]"');
    expect(attempt?.responseBodySnippet).toContain('"body":"[REDACTED]"');
    for (const answer of [attempts.text, failed.text, (await call('acme:write', 'GET', '/dead-letters')).text]) {
      for (const secret of [SECRETS.A_STRIPE_KEY, SECRETS.SHARED_RELAY, ...Object.values(LITERAL)]) expect(answer).not.toContain(secret);
    }
  });
});
