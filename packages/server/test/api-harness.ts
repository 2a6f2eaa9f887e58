import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { Agent, request } from 'undici';
import { buildApp, type AppAccess, type BuildAppOptions } from '../src/api/build-app.js';
import type { BlobStore } from '../src/blobs/blob-store.js';
import { DEFAULT_TENANT, type RetryTask } from '../src/domain/task.js';
import { TargetGuard, parseAllowList, type HostLookup } from '../src/security/target-guard.js';
import { openStore } from '../src/service/open-store.js';
import type { TargetControl } from '../src/protection/target-control.js';
import { TargetProtection } from '../src/protection/target-protection.js';
import type { Store } from '../src/store/store.js';
import { TaskService, type TaskServiceOptions } from '../src/tasks/task-service.js';
import { parseKeyring } from '../src/secrets/encryption-keys.js';
import { TaskSecrets } from '../src/secrets/task-secrets.js';
import { OpenApiResponseCheck } from './openapi-responses.js';

/** The encryption key of test services (`RETRYD_ENCRYPTION_KEY` format), id `test`: 32 bytes of 0x2a. */
export const TEST_ENCRYPTION_KEY = `test:${Buffer.alloc(32, 42).toString('base64')}`;
/** {@link TEST_ENCRYPTION_KEY}, parsed. */
export const TEST_KEYRING = parseKeyring(TEST_ENCRYPTION_KEY);

/** Host names the tests use, resolved without DNS: public, private, and one with both kinds of address. */
export const FAKE_DNS: Record<string, string[]> = {
  'api.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'internal.example.com': ['10.20.30.40'],
  'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
};

export const fakeLookup: HostLookup = async (hostname) => {
  const addresses = FAKE_DNS[hostname.toLowerCase()];
  if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return addresses;
};

/** A JSON answer of the API. */
export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // Tests read fields of whatever came back; the schemas are checked field by field.
  body: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The raw text, for answers that are not JSON. */
  text: string;
}

export interface ApiHarness {
  url: string;
  app: FastifyInstance;
  store: Store;
  blobs: BlobStore;
  service: TaskService;
  /** How often `wake()` was called. */
  wakes: () => number;
  /** Policy changes reported through `onPolicyChanged`. */
  policyChanges: string[];
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
  /** Enqueues a valid task and returns it (201). */
  enqueue(overrides?: Record<string, unknown>): Promise<ApiResponse>;
  /** The stored task (with internal fields). */
  stored(taskId: string): Promise<RetryTask>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  allowTargets?: string;
  /** Default `sqlite::memory:`. */
  storeUrl?: string;
  /** Wraps the store the service and the app see (fault injection). */
  wrapStore?: (store: Store) => Store;
  service?: Partial<TaskServiceOptions>;
  app?: Partial<BuildAppOptions>;
  /** Access control made on the opened store (API keys, scopes, tenant limits); absent: none, as in `buildApp`. */
  access?: (store: Store) => AppAccess;
}

const agent = new Agent({ connections: 128 });

/** A real server on a random loopback port, on a fresh in-memory SQLite store. */
export async function startApi(options: HarnessOptions = {}): Promise<ApiHarness> {
  const opened = await openStore(options.storeUrl ?? 'sqlite::memory:');
  const store = options.wrapStore?.(opened.store) ?? opened.store;
  const blobs = opened.blobs;
  let wakes = 0;
  const policyChanges: string[] = [];
  const service = new TaskService({
    store,
    blobs,
    targetGuard: new TargetGuard({ allow: parseAllowList(options.allowTargets), lookup: fakeLookup }),
    wake: () => void wakes++,
    onPolicyChanged: (tenantId, policyId) => void policyChanges.push(`${tenantId}/${policyId}`),
    // Test services have a key, as a production one taking credentials must.
    secrets: new TaskSecrets({ keyring: TEST_KEYRING }),
    ...options.service,
  });
  await service.ensureDefaultPolicy();
  const access = options.access?.(store);
  const app = await buildApp({ taskService: service, store, ...(access === undefined ? {} : { access }), ...options.app });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  let responseCheck: OpenApiResponseCheck | undefined;
  const call: ApiHarness['call'] = async (method, path, body, headers = {}) => {
    const res = await request(`${url}${path}`, {
      method: method as 'GET',
      dispatcher: agent,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await res.body.text();
    const contentType = String(res.headers['content-type'] ?? '');
    const isJson = contentType.includes('json');
    const parsed = isJson && text !== '' ? JSON.parse(text) : {};
    // Every answer a test sees is checked against the published document: a route that answers what it does not
    // document fails the test that made it answer so.
    responseCheck ??= new OpenApiResponseCheck(app.swagger());
    responseCheck.check(method, path, res.statusCode, contentType, parsed);
    return { status: res.statusCode, headers: res.headers, body: parsed, text };
  };

  return {
    url,
    app,
    store,
    blobs,
    service,
    wakes: () => wakes,
    policyChanges,
    call,
    enqueue: (overrides = {}) =>
      call('POST', '/retry-tasks', { targetUrl: 'https://api.example.com/orders', method: 'POST', body: { order: 1 }, ...overrides }),
    stored: async (taskId) => {
      const task = await store.getTask(DEFAULT_TENANT, taskId);
      if (task === undefined) throw new Error(`no task ${taskId}`);
      return task;
    },
    close: async () => {
      await app.close();
      await service.close();
      await opened.store.close();
    },
  };
}

/** The API harness with the real TargetProtection on its store (made as the harness opens the store). */
export async function startTargetsApi(options: HarnessOptions = {}): Promise<{ api: ApiHarness; close: () => Promise<void> }> {
  let protection: TargetProtection | undefined;
  const control = (): TargetProtection => {
    if (protection === undefined) throw new Error('the protection is not wired yet');
    return protection;
  };
  const targetControl: TargetControl = {
    listTargets: (tenantId, page) => control().listTargets(tenantId, page),
    getTarget: (ref) => control().getTarget(ref),
    putSettings: (ref, patch) => control().putSettings(ref, patch),
    breaker: (ref, action, durationMs) => control().breaker(ref, action, durationMs),
    release: (ref) => control().release(ref),
  };
  const api = await startApi({
    ...options,
    wrapStore: (store) => {
      protection = new TargetProtection({ store });
      return store;
    },
    app: { ...options.app, targetControl },
  });
  return {
    api,
    close: async () => {
      protection?.close();
      await api.close();
    },
  };
}
