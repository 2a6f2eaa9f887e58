import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/service/logger.js';
import { DEFAULT_CONFIG, type RetrydConfig } from '../src/service/retryd-config.js';
import { startRetryd, type RunningRetryd } from '../src/service/start-retryd.js';
import { reply, startServer, type TestServer } from './engine-helpers.js';
import { dropSchemas, freshSchema, POSTGRES_URL, withClient } from './postgres-harness.js';
import { adminClient, dropPrefixes, freshPrefix, keysOf, REDIS_URL } from './redis-harness.js';
import { waitFor } from './wait-for.js';

// `retryd keys rotate-encryption`, the built command, on every store: tasks enqueued through the API under key A; the
// instances restarted with keys B,A (one keeps serving during the rotation); the rotation run with B,A; then no value
// sealed with A is left in the store's records, the tasks are sent with their plain secrets by an instance that has
// key B alone, and a second run re-seals nothing. A run with keys that cannot open the old values fails, naming the
// task and the field, never a value.

const CLI = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js');
const key = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;
const KEY_A = key('rotA');
const KEY_B = key('rotB');
const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

/** Runs the built CLI's `keys rotate-encryption` with RETRYD_ENCRYPTION_KEY set to `keys`. */
async function rotate(storeUrl: string, keys: string | undefined, ...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, RETRYD_STORE: storeUrl };
  delete env['RETRYD_ENCRYPTION_KEY'];
  if (keys !== undefined) env['RETRYD_ENCRYPTION_KEY'] = keys;
  return promisify(execFile)(process.execPath, [CLI, 'keys', 'rotate-encryption', ...args], { env, timeout: 30_000 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

/** How many values in `records` are sealed with key `keyId`. */
const sealedUnder = (keyId: string, records: string) => records.split(`v1:${keyId}:`).length - 1;

let dir: string;
let downstream: TestServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'retryd-rotate-cli-'));
  downstream = await startServer((_req, res) => reply(res, 200, 'ok'));
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
  /** The store's records as text, read through the store's own server (not its files: a WAL keeps old pages a while). */
  records: () => Promise<string>;
}

const sqlitePath = () => join(dir, 'retryd.db');
const postgresSchema = freshSchema();
const redisPrefix = freshPrefix();

const STORES: StoreUnderTest[] = [
  {
    kind: 'sqlite',
    url: () => `sqlite:${sqlitePath()}`,
    records: async () => {
      const db = new Database(sqlitePath(), { readonly: true });
      const rows = db.prepare('SELECT * FROM tasks').all();
      db.close();
      const parts = [JSON.stringify(rows)];
      for (const entry of await readdir(`${sqlitePath()}.blobs`, { recursive: true, withFileTypes: true })) {
        if (entry.isFile()) parts.push((await readFile(join(entry.parentPath, entry.name))).toString('latin1'));
      }
      return parts.join('\n');
    },
  },
  {
    kind: 'postgres',
    url: () => `${POSTGRES_URL}?schema=${postgresSchema}`,
    records: () =>
      withClient(postgresSchema, async (client) => {
        const tables = await client.query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [postgresSchema]);
        const rows: string[] = [];
        for (const { table_name: table } of tables.rows) {
          const result = await client.query<{ row: string }>(`SELECT t::text AS row FROM "${postgresSchema}"."${table}" AS t`);
          // bytea (the blobs table) shows as hex: decoded, so sealed text in a blob is found as it is.
          rows.push(...result.rows.map(({ row }) => row.replace(/\\\\x([0-9a-f]+)/g, (_, hex: string) => Buffer.from(hex, 'hex').toString('latin1'))));
        }
        return rows.join('\n');
      }),
  },
  {
    kind: 'redis',
    url: () => `${REDIS_URL}?prefix=${redisPrefix}`,
    records: async () => {
      const client = adminClient();
      try {
        const parts: string[] = [];
        for (const key of await keysOf(client, redisPrefix)) {
          const type = await client.type(key);
          const value =
            type === 'string' ? [await client.get(key)]
            : type === 'hash' ? Object.entries(await client.hgetall(key)).flat()
            : type === 'zset' ? await client.zrange(key, 0, -1)
            : type === 'set' ? await client.smembers(key)
            : [`unknown type ${type}`];
          parts.push(key, ...value.map(String));
        }
        return parts.join('\n');
      } finally {
        client.disconnect();
      }
    },
  },
];

describe.each(STORES)('retryd keys rotate-encryption on $kind', (store) => {
  const url = store.url;
  const secrets = { authorization: secret('auth'), apiKey: secret('apikey'), card: secret('card'), large: secret('large'), token: secret('token') };
  const large = `${secrets.large}\n`.repeat(3_000);
  const ids: Record<string, string> = {};

  async function start(keys: string, role: RetrydConfig['role']): Promise<RunningRetryd> {
    return startRetryd(
      {
        ...DEFAULT_CONFIG,
        port: 0,
        store: url(),
        role,
        allowTargets: ['127.0.0.1/32'],
        attemptTimeoutMs: 5_000,
        graceMs: 500,
        sqliteSync: 'normal',
        encryptionKey: keys,
      },
      createLogger('silent'),
    );
  }

  async function enqueue(service: RunningRetryd, body: unknown): Promise<string> {
    const res = await fetch(`${service.url}/retry-tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { taskId: string }).taskId;
  }

  beforeAll(async () => {
    // Key A alone, and no workers: the tasks wait in the store, sealed under A.
    const underA = await start(KEY_A, 'api');
    try {
      ids['inline'] = await enqueue(underA, {
        targetUrl: `${downstream.url}/${store.kind}/inline`,
        method: 'POST',
        headers: { Authorization: `Bearer ${secrets.authorization}`, 'X-Api-Key': secrets.apiKey, 'X-Plain': 'plain' },
        body: { card: secrets.card },
        sensitiveBody: true,
      });
      ids['blob'] = await enqueue(underA, {
        targetUrl: `${downstream.url}/${store.kind}/blob`,
        method: 'PUT',
        headers: { 'content-type': 'text/plain', 'X-Vault-Token': secrets.token },
        body: large,
        sensitiveBody: true,
      });
    } finally {
      await underA.close();
    }
  });

  it('re-seals every value sealed under the old key while an instance serves, and the tasks are sent under the new key alone', async () => {
    const raw = await store.records();
    // Five values: the inline task's two credential headers and body, the other's credential header and blob body.
    expect(sealedUnder('rotA', raw)).toBe(5);
    for (const value of Object.values(secrets)) expect(raw).not.toContain(value);

    // Keys that cannot open what A sealed: every value fails, named by task and field, and nothing is written.
    const wrong = await rotate(url(), KEY_B);
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toContain('values: 0 re-encrypted, 0 skipped (already under key rotB), 5 failed');
    for (const field of ['headers.Authorization', 'headers.X-Api-Key', 'body']) {
      expect(wrong.stderr).toContain(`task ${ids['inline']} (tenant default) ${field}: `);
    }
    expect(wrong.stderr).toContain(`task ${ids['blob']} (tenant default) headers.X-Vault-Token: the header:x-vault-token secret is sealed with key rotA, which RETRYD_ENCRYPTION_KEY does not list`);
    for (const value of Object.values(secrets)) expect(wrong.stdout + wrong.stderr).not.toContain(value);
    expect(sealedUnder('rotB', await store.records())).toBe(0);

    // Step 1 of the procedure: the instances restarted with B first and A after it. One serves during the rotation and
    // takes a task of its own, sealed under B.
    const serving = await start(`${KEY_B},${KEY_A}`, 'api');
    try {
      ids['new'] = await enqueue(serving, {
        targetUrl: `${downstream.url}/${store.kind}/new`,
        method: 'POST',
        headers: { Authorization: `Bearer ${secrets.authorization}-new` },
      });
      // Step 2: the rotation, with the same keys.
      const run = await rotate(url(), `${KEY_B},${KEY_A}`, '--batch', '1');
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(
        'key:    rotB\n' +
          'tasks:  2 re-encrypted, 1 skipped (already under key rotB), 0 failed\n' +
          'values: 5 re-encrypted, 1 skipped (already under key rotB), 0 failed\n',
      );
      // The instance still reads the tasks it shows.
      expect((await fetch(`${serving.url}/retry-tasks/${ids['inline']}`)).status).toBe(200);
    } finally {
      await serving.close();
    }

    const rotated = await store.records();
    expect(sealedUnder('rotA', rotated)).toBe(0);
    expect(sealedUnder('rotB', rotated)).toBe(6);
    for (const value of Object.values(secrets)) expect(rotated).not.toContain(value);

    // Step 3: the old key removed. Every task is sent, with its secrets in clear.
    const underB = await start(KEY_B, 'all');
    try {
      await waitFor('the three tasks to be sent', () => downstream.requests.filter((r) => r.url.startsWith(`/${store.kind}/`)).length >= 3);
      const sent = (path: string) => downstream.requests.find((r) => r.url === `/${store.kind}/${path}`);
      expect(sent('inline')?.headers.authorization).toBe(`Bearer ${secrets.authorization}`);
      expect(sent('inline')?.headers['x-api-key']).toBe(secrets.apiKey);
      expect(sent('inline')?.headers['x-plain']).toBe('plain');
      expect(sent('inline')?.body).toBe(JSON.stringify({ card: secrets.card }));
      expect(sent('blob')?.headers['x-vault-token']).toBe(secrets.token);
      expect(sent('blob')?.body).toBe(large);
      expect(sent('new')?.headers.authorization).toBe(`Bearer ${secrets.authorization}-new`);
      await waitFor(
        'the tasks to succeed',
        async () => {
          const tasks = await Promise.all(Object.values(ids).map(async (id) => (await (await fetch(`${underB.url}/retry-tasks/${id}`)).json()) as { status: string }));
          return tasks.every((t) => t.status === 'SUCCEEDED');
        },
      );
    } finally {
      await underB.close();
    }

    // Safe to run twice: nothing is left to re-seal, with the new key alone or with both.
    for (const keys of [KEY_B, `${KEY_B},${KEY_A}`]) {
      const again = await rotate(url(), keys);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('tasks:  0 re-encrypted, 3 skipped (already under key rotB), 0 failed');
      expect(again.stdout).toContain('values: 0 re-encrypted, 6 skipped (already under key rotB), 0 failed');
    }
  });
});

describe('retryd keys rotate-encryption: usage', () => {
  it.each([
    ['no RETRYD_ENCRYPTION_KEY', undefined, [], 'retryd: RETRYD_ENCRYPTION_KEY must be set to the keys the instances use, the new key first and the old ones after it'],
    ['an empty RETRYD_ENCRYPTION_KEY', '', [], 'retryd: RETRYD_ENCRYPTION_KEY must be set'],
    ['a malformed RETRYD_ENCRYPTION_KEY', 'c2hvcnQ=', [], 'retryd: RETRYD_ENCRYPTION_KEY entry 1 must be base64 of 32 bytes, got 5 bytes'],
    ['--batch 0', KEY_A, ['--batch', '0'], 'retryd: --batch must be an integer from 1 to 1000, got "0"'],
    ['an unknown store', KEY_A, ['--store', 'mysql://db'], 'retryd: Expected `--store` to be'],
    ['an unknown flag', KEY_A, ['--bogus'], "error: unknown option '--bogus'"],
  ])('refuses %s with one line naming what is wrong, exit code 2', async (_, keys, args, message) => {
    const { code, stderr } = await rotate(`sqlite:${join(dir, 'usage.db')}`, keys, ...args);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  it('refuses a SQLite store that does not exist rather than rotate an empty one it would create', async () => {
    const path = join(dir, 'missing', 'retryd.db');
    const { code, stderr } = await rotate(`sqlite:${path}`, KEY_A);
    expect(code).toBe(2);
    expect(stderr).toBe(
      `retryd: no retryd store at --store sqlite:${path}: the SQLite file ${path} does not exist. Check --store (or RETRYD_STORE); retryd migrate --store … or retryd serve creates one\n`,
    );
    expect(existsSync(path)).toBe(false);
  });

  it('--help names the variable and every flag with its environment variable', async () => {
    const { code, stdout } = await promisify(execFile)(process.execPath, [CLI, 'keys', 'rotate-encryption', '--help']).then((r) => ({ code: 0, ...r }));
    expect(code).toBe(0);
    for (const text of ['RETRYD_ENCRYPTION_KEY', '--store', 'RETRYD_STORE', '--blobs', 'RETRYD_BLOBS', '--batch']) expect(stdout).toContain(text);
  });
});
