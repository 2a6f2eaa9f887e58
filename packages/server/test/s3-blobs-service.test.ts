import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SHARED_SCHEMAS } from '../src/api/schemas.js';
import { serveCommand } from '../src/cli/serve-command.js';
import { createLogger } from '../src/service/logger.js';
import { DEFAULT_CONFIG } from '../src/service/retryd-config.js';
import { startRetryd, type RunningRetryd } from '../src/service/start-retryd.js';
import type { BlobStore } from '../src/blobs/blob-store.js';
import type { Store } from '../src/store/store.js';
import { ENQUEUE_FIELDS, ENQUEUE_LIMITS, parseEnqueueInput } from '../src/tasks/enqueue-input.js';
import { startApi } from './api-harness.js';
import { closedLoopbackPort, openTestS3BlobStore, startTestS3, type TestS3 } from './s3-blob-harness.js';
import { waitFor } from './wait-for.js';

/** What the loopback downstream received: one entry per request. */
interface Received {
  path: string;
  contentType: string | undefined;
  body: Buffer;
}

let s3: TestS3;
let dir: string;
let downstream: { url: string; received: Received[]; close(): Promise<void> };
let service: RunningRetryd;
const savedEnv = { key: process.env['AWS_ACCESS_KEY_ID'], secret: process.env['AWS_SECRET_ACCESS_KEY'] };
const PREFIX = 'bodies';

beforeAll(async () => {
  s3 = await startTestS3(['retryd-e2e', 'someone-elses']);
  dir = await mkdtemp(join(tmpdir(), 'retryd-s3-service-'));
  downstream = await startDownstream();
  // retryd takes its S3 credentials from the environment (the SDK's default chain), as an operator would give them.
  process.env['AWS_ACCESS_KEY_ID'] = 'S3RVER';
  process.env['AWS_SECRET_ACCESS_KEY'] = 'S3RVER';
  service = await startService(s3.blobsUrl(PREFIX));
});

afterAll(async () => {
  await service?.close();
  await downstream?.close();
  await s3?.close();
  await rm(dir, { recursive: true, force: true });
  restoreEnv('AWS_ACCESS_KEY_ID', savedEnv.key);
  restoreEnv('AWS_SECRET_ACCESS_KEY', savedEnv.secret);
});

describe('retryd with --blobs s3://… (s3rver on loopback)', () => {
  it('puts a body over 64 KiB in the bucket, keeps only its ref in the task, and sends it intact', async () => {
    const body = JSON.stringify({ items: Array.from({ length: 3_000 }, (_, i) => ({ i, name: `é-item-${i}` })) });
    expect(Buffer.byteLength(body)).toBeGreaterThan(64 * 1024);
    const created = await post('/retry-tasks', { targetUrl: `${downstream.url}/large`, method: 'POST', body });
    expect(created.status).toBe(201);
    const task = created.body;
    expect(task.bodyRef).toBe(`default/${task.taskId}`);
    expect(task.body).toBeNull();
    expect((await s3.objectAt(`${PREFIX}/default/${task.taskId}`))?.toString()).toBe(body);
    const received = await succeeded(task.taskId, '/large');
    expect(received.body.toString()).toBe(body);
    expect(existsSync(join(dir, 'retryd.db.blobs'))).toBe(false);
  });

  it('sends the object a caller uploaded and named by bodyRef, with the caller\'s content-type, and leaves it in place', async () => {
    const bytes = randomBytes(150 * 1024);
    const url = await s3.callerPuts(`${PREFIX}/default/uploads/${randomUUID()}.bin`, bytes);
    const request = {
      targetUrl: `${downstream.url}/by-ref`,
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      bodyRef: url,
      idempotencyKey: `by-ref-${randomUUID()}`,
    };
    const created = await post('/retry-tasks', request);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ bodyRef: url, body: null });
    const received = await succeeded(created.body.taskId, '/by-ref');
    expect(received.body.equals(bytes)).toBe(true);
    expect(received.contentType).toBe('application/octet-stream');

    // The same request again is a replay; another object under the same key is another request.
    const replayed = await post('/retry-tasks', request);
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.taskId).toBe(created.body.taskId);
    const other = await s3.callerPuts(`${PREFIX}/default/uploads/other.bin`, 'other');
    expect((await post('/retry-tasks', { ...request, bodyRef: other })).status).toBe(422);
    // Neither the replay nor the conflict dropped a caller's object.
    expect((await s3.objectAt(url.slice(`s3://${s3.bucket}/`.length)))?.equals(bytes)).toBe(true);
    expect((await s3.objectAt(`${PREFIX}/default/uploads/other.bin`))?.toString()).toBe('other');
  });

  it('refuses a bodyRef that breaks a rule with a 400 naming bodyRef and the rule', async () => {
    const inside = await s3.callerPuts(`${PREFIX}/default/ok.json`, '{}');
    await s3.callerPuts(`${PREFIX}/acme/theirs.json`, '{}');
    await s3.callerPuts(`${PREFIX}/default/ok.json`, '{}', 'someone-elses');
    const base = { targetUrl: `${downstream.url}/refused`, method: 'POST' };
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ body: { a: 1 }, bodyRef: inside }, /bodyRef must be absent when body is given \(send the body inline in body, or name an object holding it in bodyRef, not both\)/],
      [{ bodyRef: `s3://someone-elses/${PREFIX}/default/ok.json` }, /bodyRef must be the URL of an object in the configured bucket, s3:\/\/retryd-e2e\/bodies\/default\/<key> \(the bucket --blobs names\), got bucket "someone-elses"/],
      [{ bodyRef: `s3://retryd-e2e/${PREFIX}/acme/theirs.json` }, /bodyRef must be .*bodies\/default\/<key> \(this tenant's part of the bucket\)/],
      [{ bodyRef: `s3://retryd-e2e/elsewhere/default/ok.json` }, /this tenant's part of the bucket/],
      [{ bodyRef: `s3://retryd-e2e/${PREFIX}/default/../acme/theirs.json` }, /'\.' or '\.\.' segments/],
      [{ bodyRef: `s3://retryd-e2e/${PREFIX}/default/missing.json` }, /bodyRef must be the URL of an existing object, got no object at s3:\/\/retryd-e2e\/bodies\/default\/missing\.json/],
      [{ bodyRef: `https://retryd-e2e.s3.amazonaws.com/${PREFIX}/default/ok.json` }, /bodyRef must be an object URL, s3:\/\/<bucket>\/<key>/],
      [{ bodyRef: 42 }, /bodyRef must be an object URL/],
      [{ method: 'GET', bodyRef: inside }, /bodyRef must be absent for GET/],
    ];
    for (const [fields, message] of cases) {
      const answer = await post('/retry-tasks', { ...base, ...fields });
      expect(answer.status, JSON.stringify(fields)).toBe(400);
      expect(answer.body.code).toBe('VALIDATION_FAILED');
      expect(answer.body.errors).toEqual([expect.objectContaining({ field: 'bodyRef', message: expect.stringMatching(message) })]);
    }
    expect(downstream.received.filter((r) => r.path === '/refused')).toHaveLength(0);
  });

  it('checks each entry of a batch on its own, naming the entry', async () => {
    const url = await s3.callerPuts(`${PREFIX}/default/batch.json`, '{"batch":true}');
    const answer = await post('/retry-tasks/batch', {
      tasks: [
        { targetUrl: `${downstream.url}/batch`, method: 'POST', headers: { 'content-type': 'application/json' }, bodyRef: url },
        { targetUrl: `${downstream.url}/batch`, method: 'POST', bodyRef: `s3://retryd-e2e/${PREFIX}/default/nope.json` },
      ],
    });
    expect(answer.body.results.map((r: { status: number }) => r.status)).toEqual([201, 400]);
    expect(answer.body.results[1].error.errors[0].field).toBe('tasks[1].bodyRef');
    const received = await succeeded(answer.body.results[0].task.taskId, '/batch');
    expect(received.body.toString()).toBe('{"batch":true}');
  });

  it('answers 503 when S3 cannot be reached, for a large body and for a bodyRef', async () => {
    const port = await closedLoopbackPort();
    const down = s3.blobsUrl(PREFIX).replace(/endpoint=http:\/\/127\.0\.0\.1:\d+/, `endpoint=http://127.0.0.1:${port}`);
    const outage = await startService(down, 'outage.db');
    try {
      const byRef = await post('/retry-tasks', { targetUrl: `${downstream.url}/x`, method: 'POST', bodyRef: `s3://retryd-e2e/${PREFIX}/default/ok.json` }, outage.url);
      expect(byRef.status).toBe(503);
      expect(byRef.body).toMatchObject({ code: 'STORE_UNAVAILABLE', detail: expect.stringMatching(/The S3 blob store could not check bodyRef .*ECONNREFUSED/) });
      const large = await post('/retry-tasks', { targetUrl: `${downstream.url}/x`, method: 'POST', body: 'x'.repeat(70_000) }, outage.url);
      expect(large.status).toBe(503);
      expect(large.body.code).toBe('STORE_UNAVAILABLE');
    } finally {
      await outage.close();
    }
  });
});

describe('bodyRef without --blobs s3://…, and caller objects on a failed write', () => {
  it('refuses bodyRef when bodies stay in the store, naming --blobs', async () => {
    const api = await startApi({ allowTargets: '127.0.0.1/32' });
    try {
      const answer = await api.call('POST', '/retry-tasks', { targetUrl: `${downstream.url}/x`, method: 'POST', bodyRef: 's3://retryd-e2e/bodies/default/ok.json' });
      expect(answer.status).toBe(400);
      expect(answer.body.errors).toEqual([
        expect.objectContaining({ field: 'bodyRef', message: expect.stringMatching(/bodyRef must be absent: .* needs --blobs s3:\/\//) }),
      ]);
    } finally {
      await api.close();
    }
  });

  it("never deletes a caller's object when the task write fails, while a body retryd wrote is dropped", async () => {
    const s3Blobs = await openTestS3BlobStore(s3, PREFIX);
    // Records what the enqueuer asks to delete: the S3 store would refuse to delete a caller's object anyway.
    const deleted: string[] = [];
    const blobs: BlobStore = {
      put: (tenantId, key, data) => s3Blobs.put(tenantId, key, data),
      get: (ref) => s3Blobs.get(ref),
      delete: (ref) => (deleted.push(ref), s3Blobs.delete(ref)),
      adopt: (tenantId, url) => s3Blobs.adopt(tenantId, url),
    };
    const failing = (store: Store): Store =>
      Object.assign(store, {
        insertTasks: () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
      });
    const api = await startApi({ allowTargets: '127.0.0.1/32', wrapStore: failing, service: { blobs, newId: () => 'fixed-task-id' } });
    try {
      const url = await s3.callerPuts(`${PREFIX}/default/kept.json`, 'kept');
      const byRef = await api.call('POST', '/retry-tasks', { targetUrl: `${downstream.url}/x`, method: 'POST', bodyRef: url });
      expect(byRef.status).toBe(503);
      expect((await s3.objectAt(`${PREFIX}/default/kept.json`))?.toString()).toBe('kept');

      const large = await api.call('POST', '/retry-tasks', { targetUrl: `${downstream.url}/x`, method: 'POST', body: 'y'.repeat(70_000) });
      expect(large.status).toBe(503);
      expect(await s3.objectAt(`${PREFIX}/default/fixed-task-id`)).toBeUndefined();
      expect(deleted).toEqual(['default/fixed-task-id']);
    } finally {
      await api.close();
      await s3Blobs.close();
    }
  });
});

describe('bodyRef in the request: schema and hash', () => {
  it('is documented by the EnqueueRequest schema, which names exactly the fields the parser takes', () => {
    const schema = SHARED_SCHEMAS.find((entry) => entry.$id === 'EnqueueRequest');
    expect(Object.keys(schema?.properties ?? {}).sort()).toEqual([...ENQUEUE_FIELDS].sort());
    expect(schema?.properties).toMatchObject({ bodyRef: { type: 'string', maxLength: ENQUEUE_LIMITS.bodyRefLength } });
  });

  const hashOf = (input: Record<string, unknown>) => {
    const parsed = parseEnqueueInput({ targetUrl: 'https://api.example.com/orders', method: 'POST', ...input });
    if (!parsed.ok) throw new Error(parsed.errors[0]?.message);
    return parsed.value.requestHash;
  };

  it('leaves the hash of a request without bodyRef as it was before bodyRef existed', () => {
    // Hashes stored by earlier versions: a replay after an upgrade must still be a replay, not a 422.
    expect(hashOf({ headers: { 'X-A': '1' }, body: { order: 1 }, idempotencyKey: 'k-1' })).toBe(
      'e002db0957ad1e532203540e7fa8b8558bee6da2b9e98235141b338a91e3bc92',
    );
    expect(hashOf({ method: 'PUT', body: 'text', delayMs: 5 })).toBe('ca822a93462b152895166a0544046b61bfc8bcd2b19ec3decc848909cfac93d8');
  });

  it('tells requests with the same bodyRef alike, and with another ref (or none) apart', () => {
    const ref = 's3://retryd/bodies/default/a.json';
    expect(hashOf({ bodyRef: ref })).toBe(hashOf({ bodyRef: ref }));
    expect(hashOf({ bodyRef: ref })).not.toBe(hashOf({ bodyRef: 's3://retryd/bodies/default/b.json' }));
    expect(hashOf({ bodyRef: ref })).not.toBe(hashOf({}));
    expect(hashOf({ bodyRef: ref })).not.toBe(hashOf({ body: ref }));
  });
});

describe('retryd serve --blobs', () => {
  it('explains the flag, its variable and where credentials come from in --help', () => {
    const help = serveCommand().helpInformation();
    expect(help).toContain('--blobs <url>');
    expect(help).toContain('RETRYD_BLOBS');
    expect(help).toMatch(/AWS_ACCESS_KEY_ID/);
  });

  it('stops the start on a bad value with one line naming --blobs and the rule, exit code 2', async () => {
    const errors: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((line: string) => void errors.push(line));
    const before = process.exitCode;
    try {
      const store = `sqlite:${join(dir, 'never-opened.db')}`;
      await serveCommand().parseAsync(['--store', store, '--log-level', 'silent', '--blobs', 's3://Not_A_Bucket/x'], { from: 'user' });
      expect(process.exitCode).toBe(2);
      expect(errors).toEqual([expect.stringMatching(/^retryd: Expected `--blobs` to name an S3 bucket \(3 to 63 lower-case/)]);
      expect(existsSync(join(dir, 'never-opened.db'))).toBe(false);
    } finally {
      spy.mockRestore();
      process.exitCode = before;
    }
  });
});

async function startService(blobsUrl: string, db = 'retryd.db'): Promise<RunningRetryd> {
  return startRetryd(
    {
      ...DEFAULT_CONFIG,
      port: 0,
      store: `sqlite:${join(dir, db)}`,
      blobs: blobsUrl,
      allowTargets: ['127.0.0.1/32'],
      attemptTimeoutMs: 5_000,
      graceMs: 500,
      sqliteSync: 'normal',
    },
    createLogger('silent'),
  );
}

async function post(path: string, body: unknown, base = service.url) {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}

/** Waits for the task to succeed and returns what the downstream received for it. */
async function succeeded(taskId: string, path: string): Promise<Received> {
  await waitFor(
    `task ${taskId} to succeed`,
    async () => {
      const task = (await (await fetch(`${service.url}/retry-tasks/${taskId}`)).json()) as { status: string };
      return task.status === 'SUCCEEDED';
    },
  );
  const received = downstream.received.filter((r) => r.path === path);
  expect(received).toHaveLength(1);
  return received[0]!;
}



/** A loopback target that answers 200 and keeps every request's path, content-type and bytes. */
async function startDownstream(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', contentType: req.headers['content-type'], body: Buffer.concat(chunks) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}


function restoreEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

