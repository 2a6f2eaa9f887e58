import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_POLICY_MS } from '@retryd/core';
import { startServiceProcess, type ServiceProcess } from './service-harness.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..', '..');
type Operation = { operationId?: string; responses: Record<string, { headers?: Record<string, unknown> }> };

// The document exactly as `retryd serve` publishes it, checked with tools that know nothing of retryd.
describe('the OpenAPI document at /openapi.json', () => {
  let service: ServiceProcess;
  let document: { servers?: unknown[]; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, object> } };
  let dir: string;

  beforeAll(async () => {
    service = await startServiceProcess(['--store', 'sqlite::memory:', '--allow-targets', '127.0.0.1/32', '--role', 'api']);
    document = (await (await fetch(`${service.url}/openapi.json`)).json()) as typeof document;
    dir = await mkdtemp(join(tmpdir(), 'retryd-openapi-'));
  }, 60_000);
  afterAll(async () => {
    service?.child.kill('SIGTERM');
    await service?.exited;
    await rm(dir, { recursive: true, force: true });
  });

  const operations = () => Object.entries(document.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));

  it('passes @redocly/cli lint with its recommended rules, without a warning', async () => {
    const file = join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(document));
    // Telemetry and the update check off: the lint reads the file and nothing else.
    const { stdout } = await run(join(ROOT, 'node_modules', '.bin', 'redocly'), ['lint', file, '--extends', 'recommended', '--format', 'json'], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: unknown[] };
    expect(report.problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  it('names every operation (operationId, unique) and has servers', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id !== '')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(['enqueueTask', 'enqueueTasks', 'listTasks', 'getTask', 'cancelTask', 'replayTask', 'listDeadLetters', 'replacePolicy']));
    expect(document.servers?.length).toBeGreaterThan(0);
  });

  it('names a relative server, so /docs "Try it out" calls the host that served the page, on whatever port', () => {
    const servers = document.servers as { url: string }[];
    expect(servers.map((s) => s.url)).toEqual(['/']);
    // Resolved as Swagger UI resolves it: against the document's own URL.
    expect(new URL(servers[0]!.url, `${service.url}/openapi.json`).origin).toBe(service.url);
    expect(service.url).not.toMatch(/:8080$/);
  });

  it('gives /docs (Swagger UI reads /docs/json) the same relative server', async () => {
    const served = (await (await fetch(`${service.url}/docs/json`)).json()) as { servers: { url: string }[] };
    expect(served.servers.map((s) => s.url)).toEqual(['/']);
  });

  it('documents the headers of its answers: Location on every 201, Idempotent-Replayed on a replayed enqueue', () => {
    for (const { path, method, op } of operations()) {
      if (op.responses['201'] !== undefined) expect(Object.keys(op.responses['201'].headers ?? {}), `${method} ${path}`).toContain('Location');
    }
    expect(Object.keys(document.paths['/retry-tasks']!.post!.responses['200']!.headers ?? {})).toContain('Idempotent-Replayed');
  });

  it('refuses exactly the enqueue bodies the service refuses, rules between fields included', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ ...document, $id: 'openapi' });
    const valid = ajv.compile({ $ref: 'openapi#/components/schemas/EnqueueRequest' });
    const policy = { maxAttempts: 3, backoffType: 'FIXED', initialDelayMs: 1000, multiplier: 1, maxDelayMs: 1000, jitterType: 'NONE' };
    const base = { targetUrl: 'http://127.0.0.1:9/orders', method: 'POST' };
    const bodies: Record<string, object> = {
      valid: base,
      'an inline policy': { ...base, policy },
      'policy and policyId': { ...base, policy, policyId: 'default' },
      'delayMs and notBefore': { ...base, delayMs: 10, notBefore: 0 },
      'body and bodyRef': { ...base, body: 'x', bodyRef: 's3://bucket/key' },
      'an idempotency key with a space': { ...base, idempotencyKey: 'a b' },
      'an idempotency key of visible characters': { ...base, idempotencyKey: 'order-1:#42' },
      'a header value with a line feed': { ...base, headers: { 'x-a': 'a\nb' } },
      'a header name with a space': { ...base, headers: { 'x a': 'b' } },
      'delayMs past its bound': { ...base, delayMs: MAX_POLICY_MS + 1 },
      'maxDelayMs past its bound': { ...base, policy: { ...policy, maxDelayMs: MAX_POLICY_MS + 1 } },
      'a 2xx as retryable': { ...base, policy: { ...policy, retryableStatusCodes: [503, 204] } },
      'totalBudgetMs past its bound': { ...base, policy: { ...policy, totalBudgetMs: MAX_POLICY_MS + 1 } },
    };
    const verdicts: Record<string, { document: boolean; service: boolean }> = {};
    for (const [name, body] of Object.entries(bodies)) {
      const response = await fetch(`${service.url}/retry-tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await response.body?.cancel();
      verdicts[name] = { document: valid(body), service: response.status === 201 };
    }
    for (const [name, verdict] of Object.entries(verdicts)) expect(verdict.document, name).toBe(verdict.service);
    expect(Object.values(verdicts).filter((v) => v.service)).toHaveLength(3);
  });

  it('does not ask a PUT of a policy for the policyId its path names', async () => {
    const fields = { maxAttempts: 2, backoffType: 'FIXED', initialDelayMs: 500, multiplier: 1, maxDelayMs: 500, jitterType: 'NONE' };
    const created = await fetch(`${service.url}/retry-policies`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...fields, policyId: 'put-me' }) });
    expect(created.status).toBe(201);
    const replaced = await fetch(`${service.url}/retry-policies/put-me`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...fields, maxAttempts: 3 }) });
    expect(replaced.status).toBe(200);
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema({ ...document, $id: 'openapi' });
    expect(ajv.validate({ $ref: 'openapi#/components/schemas/PolicyReplaceRequest' }, { ...fields, maxAttempts: 3 })).toBe(true);
  });

  it('is what the types of @retryd/client were generated from (they cannot drift)', async () => {
    const { stdout } = await run(process.execPath, [join(ROOT, 'packages', 'server', 'scripts', 'generate-client-types.mjs'), '--check']);
    expect(stdout).toContain('client types match the OpenAPI document');
  }, 60_000);
});
