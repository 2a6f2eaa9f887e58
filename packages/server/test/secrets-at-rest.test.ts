import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/service/logger.js';
import { DEFAULT_CONFIG } from '../src/service/retryd-config.js';
import { startRetryd, type RunningRetryd } from '../src/service/start-retryd.js';
import { TEST_ENCRYPTION_KEY } from './api-harness.js';
import { reply, startServer, type TestServer } from './engine-helpers.js';
import { dropSchemas, freshSchema, POSTGRES_URL, withClient } from './postgres-harness.js';
import { adminClient, dropPrefixes, freshPrefix, keysOf, REDIS_URL } from './redis-harness.js';
import { waitFor } from './wait-for.js';

// Known secrets go in through the real API on each store, are dispatched to a loopback server (which must get them in
// clear), and are then searched for in the store's raw bytes: the SQLite file, its WAL and its blob directory; a
// pg_dump of the PostgreSQL schema; every Redis key under the prefix, whatever its type.

const run = promisify(execFile);
const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

let dir: string;
let downstream: TestServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'retryd-secrets-at-rest-'));
  // A path under /fail/ answers 400, every other one 200.
  downstream = await startServer((req, res) => reply(res, req.url.startsWith('/fail/') ? 400 : 200, 'ok'));
});

afterAll(async () => {
  await downstream?.close();
  await rm(dir, { recursive: true, force: true });
  await dropSchemas();
  await dropPrefixes();
});

interface StoreUnderTest {
  kind: string;
  url: () => string;
  /** Everything the store holds, as text (bytes read as latin1, so any ASCII secret is found as is). */
  dump: () => Promise<string>;
}

const sqlitePath = () => join(dir, 'retryd.db');
const postgresSchema = freshSchema();
const redisPrefix = freshPrefix();

const STORES: StoreUnderTest[] = [
  {
    kind: 'sqlite',
    url: () => `sqlite:${sqlitePath()}`,
    dump: async () => {
      const files = [sqlitePath(), `${sqlitePath()}-wal`, `${sqlitePath()}-shm`].filter((f) => existsSync(f));
      const blobDir = `${sqlitePath()}.blobs`;
      if (existsSync(blobDir)) {
        for (const entry of await readdir(blobDir, { recursive: true, withFileTypes: true })) {
          if (entry.isFile()) files.push(join(entry.parentPath, entry.name));
        }
      }
      expect(files).toContain(`${sqlitePath()}-wal`);
      return (await Promise.all(files.map((f) => readFile(f)))).map((b) => b.toString('latin1')).join('\n');
    },
  },
  {
    kind: 'postgres',
    url: () => `${POSTGRES_URL}?schema=${postgresSchema}`,
    dump: async () => {
      try {
        const { stdout } = await run('pg_dump', ['--dbname', POSTGRES_URL, '--schema', postgresSchema], { maxBuffer: 256 * 1024 * 1024 });
        expect(stdout).toContain(`${postgresSchema}.tasks`);
        return stdout;
      } catch (error) {
        if ((error as { code?: string }).code !== 'ENOENT') throw error;
        // No pg_dump installed: every row of every table of the schema, as text.
        return withClient(postgresSchema, async (client) => {
          const tables = await client.query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [postgresSchema]);
          const rows = await Promise.all(tables.rows.map((t) => client.query(`SELECT t::text AS row FROM ${postgresSchema}."${t.table_name}" AS t`)));
          return rows.flatMap((r) => r.rows.map((row: { row: string }) => row.row)).join('\n');
        });
      }
    },
  },
  {
    kind: 'redis',
    url: () => `${REDIS_URL}?prefix=${redisPrefix}`,
    dump: async () => {
      const client = adminClient();
      try {
        const parts: string[] = [];
        const keys = await keysOf(client, redisPrefix);
        expect(keys.length).toBeGreaterThan(0);
        for (const key of keys) {
          const type = await client.type(key);
          const value =
            type === 'string' ? [await client.get(key)]
            : type === 'hash' ? Object.entries(await client.hgetall(key)).flat()
            : type === 'zset' ? await client.zrange(key, 0, -1, 'WITHSCORES')
            : type === 'set' ? await client.smembers(key)
            : type === 'list' ? await client.lrange(key, 0, -1)
            : type === 'stream' ? (await client.xrange(key, '-', '+')).flat(3)
            : [`unknown type ${type}`];
          parts.push(key, ...value.map(String));
        }
        expect(parts.join('\n')).not.toContain('unknown type');
        return parts.join('\n');
      } finally {
        client.disconnect();
      }
    },
  },
];

describe.each(STORES)('secrets at rest on $kind', (store) => {
  let service: RunningRetryd;
  const logs: string[] = [];
  const secrets = {
    authorization: secret('auth'),
    token: secret('token'),
    body: secret('card'),
    largeBody: secret('large'),
    reference: secret('ref'),
  };
  const pathSecret = secret('hookpath');
  const querySecret = secret('sig');
  const refName = `E2E_${randomBytes(6).toString('hex').toUpperCase()}`;

  beforeAll(async () => {
    process.env[`RETRYD_SECRET_${refName}`] = secrets.reference;
    service = await startRetryd(
      {
        ...DEFAULT_CONFIG,
        port: 0,
        store: store.url(),
        allowTargets: ['127.0.0.1/32'],
        attemptTimeoutMs: 5_000,
        graceMs: 500,
        sqliteSync: 'normal',
        encryptionKey: TEST_ENCRYPTION_KEY,
      },
      createLogger('info', { write: (line: string) => void logs.push(line) }),
    );
  });

  afterAll(async () => {
    delete process.env[`RETRYD_SECRET_${refName}`];
    await service?.close();
  });

  it('sends the real secrets, shows none in any answer or log, and leaves none in the store', async () => {
    const path = `/${store.kind}/ok`;
    const created = await post('/retry-tasks', {
      targetUrl: `${downstream.url}${path}?k=${querySecret}`,
      method: 'POST',
      headers: { Authorization: `Bearer ${secrets.authorization}`, 'X-Access-Token': secrets.token, 'X-Ref': `{{secret:${refName}}}` },
      body: { card: secrets.body },
      sensitiveBody: true,
    });
    expect(created.status).toBe(201);
    const large = await post('/retry-tasks', {
      targetUrl: `${downstream.url}${path}-large`,
      method: 'PUT',
      headers: { 'content-type': 'text/plain' },
      body: `${secrets.largeBody}\n`.repeat(3_000),
      sensitiveBody: true,
    });
    expect(large.status).toBe(201);
    const failing = await post('/retry-tasks', { targetUrl: `${downstream.url}/fail/${pathSecret}?sig=${querySecret}`, method: 'POST' });
    expect(failing.status).toBe(201);

    const ids = [created.body.taskId, large.body.taskId, failing.body.taskId] as string[];
    await waitFor(
      'the three tasks to end',
      async () => {
        const statuses = await Promise.all(ids.map(async (id) => (await get(`/retry-tasks/${id}`)).status));
        return statuses[0] === 'SUCCEEDED' && statuses[1] === 'SUCCEEDED' && statuses[2] === 'FAILED';
      },
    );
    await waitFor('the dead-letter log line', () => logs.some((l) => l.includes('"dead_letter"')));

    const sent = downstream.requests.find((r) => r.url === `${path}?k=${querySecret}`);
    expect(sent?.headers.authorization).toBe(`Bearer ${secrets.authorization}`);
    expect(sent?.headers['x-access-token']).toBe(secrets.token);
    expect(sent?.headers['x-ref']).toBe(secrets.reference);
    expect(sent?.body).toBe(JSON.stringify({ card: secrets.body }));
    expect(downstream.requests.find((r) => r.url === `${path}-large`)?.body).toBe(`${secrets.largeBody}\n`.repeat(3_000));

    const answers = [
      ...(await Promise.all(ids.map((id) => getText(`/retry-tasks/${id}`)))),
      ...(await Promise.all(ids.map((id) => getText(`/retry-tasks/${id}/attempts`)))),
      await getText('/retry-tasks?limit=1000'),
      await getText('/dead-letters'),
    ].join('\n');
    for (const value of [...Object.values(secrets), querySecret]) expect(answers).not.toContain(value);
    expect(answers).toContain(`/fail/${pathSecret}?sig=REDACTED`);

    const start = JSON.parse(logs.find((l) => l.includes('"event":"start"')) as string) as Record<string, unknown>;
    expect(start.encryptionKeyIds).toEqual(['test']);
    expect(logs.join('')).not.toContain(TEST_ENCRYPTION_KEY.slice('test:'.length));
    const deadLetter = JSON.parse(logs.find((l) => l.includes('"dead_letter"')) as string) as Record<string, unknown>;
    expect(deadLetter.target).toBe(downstream.url);
    for (const value of [...Object.values(secrets), pathSecret, querySecret]) expect(logs.join('')).not.toContain(value);

    const raw = await store.dump();
    // The dump holds the tasks (the key is stored as text in every store; SQLite keeps the id as its bytes).
    expect(raw).toContain(created.body.idempotencyKey);
    for (const [name, value] of Object.entries(secrets)) expect(raw.includes(value), `${name} found in the ${store.kind} store`).toBe(false);
  });

  it('ends a task FAILED, without a request, when a referenced secret is gone at dispatch', async () => {
    const name = `GONE_${randomBytes(6).toString('hex').toUpperCase()}`;
    process.env[`RETRYD_SECRET_${name}`] = 'present-at-enqueue';
    const path = `/${store.kind}/gone`;
    const created = await post('/retry-tasks', {
      targetUrl: `${downstream.url}${path}`,
      method: 'POST',
      headers: { Authorization: `Bearer {{secret:${name}}}` },
      delayMs: 200,
    });
    expect(created.status).toBe(201);
    delete process.env[`RETRYD_SECRET_${name}`];
    await waitFor('the task to fail', async () => (await get(`/retry-tasks/${created.body.taskId as string}`)).status === 'FAILED');
    const task = await get(`/retry-tasks/${created.body.taskId as string}`);
    expect(task).toMatchObject({
      deadLetterReason: 'secret_unavailable',
      attemptNumber: 1,
      lastError: `header Authorization refers to secret ${name}, which the secret provider does not know`,
    });
    expect(downstream.requests.some((r) => r.url === path)).toBe(false);
  });

  async function post(path: string, body: unknown) {
    const res = await fetch(`${service.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }
  async function getText(path: string): Promise<string> {
    return (await fetch(`${service.url}${path}`)).text();
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function get(path: string): Promise<Record<string, any>> {
    return JSON.parse(await getText(path)) as Record<string, unknown>;
  }
});
