import { SLOW_START_IN_FLIGHT } from '../src/protection/ready-attempt.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../src/domain/task.js';
import { DEFAULT_TARGET_SETTINGS } from '../src/protection/target-settings.js';
import { startApi, startTargetsApi, type ApiHarness } from './api-harness.js';
import { POSTGRES_URL, dropSchemas, freshSchema } from './postgres-harness.js';
import { REDIS_URL, dropPrefixes, freshPrefix } from './redis-harness.js';
import { serviceNow } from './service-clock.js';

// The /targets routes on the real service: a SQLite store, the real TargetProtection on it, a real HTTP server.

let api: ApiHarness;
let closeApi: () => Promise<void>;
beforeAll(async () => {
  ({ api, close: closeApi } = await startTargetsApi());
});
afterAll(async () => {
  await closeApi();
});

const path = (targetKey: string, rest = '') => `/targets/${encodeURIComponent(targetKey)}${rest}`;
const TARGET_KEY_RULE =
  'an http or https origin (scheme://host[:port], host in lower case, no default port, no path, query or trailing slash), ' +
  'or a grpc or grpcs one (scheme://host:port), ' +
  'URL-encoded as one path segment';

/** PUT's maxInFlight reaches the store's claims: one task of a target limited to 1 in flight at a time. */
async function limitReachesClaims(harness: ApiHarness): Promise<void> {
  // Another port of the harness's one public host: its own origin, so its own target.
  const limited = 'https://api.example.com:9443';
  const put = await harness.call('PUT', path(limited), { maxInFlight: 1 });
  expect(put.body.limits.maxInFlight).toBe(1);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const enqueued = await harness.enqueue({ targetUrl: `${limited}/jobs`, idempotencyKey: `claims-${i}` });
    expect(enqueued.status).toBe(201);
    ids.push(enqueued.body.taskId);
  }

  const claim = () =>
    harness.store
      .claimDue(Date.now(), { limit: 10, leaseMs: 60_000, workerId: 'test-worker' })
      .then((tasks) => tasks.filter((t) => ids.includes(t.taskId)));
  const first = await claim();
  expect(first).toHaveLength(1);
  expect(await claim()).toHaveLength(0);
  const view = await harness.call('GET', path(limited));
  expect(view.body).toMatchObject({ inFlight: 1, dueTasks: 2, limits: { maxInFlight: 1 } });

  // Its attempt ends (the lease handed back): the next task can be claimed, still one at a time.
  const [task] = first;
  await harness.store.releaseLeases([{ tenantId: DEFAULT_TENANT, taskId: task!.taskId, fencingToken: task!.fencingToken }], Date.now());
  expect(await claim()).toHaveLength(1);
  expect(await claim()).toHaveLength(0);
}

describe('GET /targets/{targetKey}', () => {
  it('answers 404 as problem+json for a target never named, held or configured', async () => {
    const res = await api.call('GET', path('https://never.example.com'));
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.body).toMatchObject({ code: 'NOT_FOUND', detail: 'no target https://never.example.com' });
  });

  it("shows a target its tasks named: the store's view, the breaker, the allowed rate and the default settings", async () => {
    await api.enqueue({ targetUrl: 'https://api.example.com/orders', delayMs: 60_000 });
    const res = await api.call('GET', path('https://api.example.com'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      targetKey: 'https://api.example.com',
      heldUntil: null,
      throttledUntil: null,
      nextDueAt: expect.any(Number),
      inFlight: 0,
      dueTasks: 0,
      limits: { ratePerSecond: null, burst: null, maxInFlight: null },
      breaker: { state: 'CLOSED', openUntil: null, reopenCount: 0 },
      allowedRatePerSecond: null,
      settings: DEFAULT_TARGET_SETTINGS,
    });
  });

  it('refuses a targetKey that is not exactly an origin, naming targetKey and the rule', async () => {
    const cases: [string, string][] = [
      ['https://api.example.com/orders', ' (its origin is https://api.example.com)'],
      ['https://API.example.com', ' (its origin is https://api.example.com)'],
      ['https://api.example.com:443', ' (its origin is https://api.example.com)'],
      ['https://api.example.com/', ' (its origin is https://api.example.com)'],
      ['https://api.example.com?x=1', ' (its origin is https://api.example.com)'],
      ['api.example.com', ''],
      ['ftp://files.example.com', ''],
    ];
    for (const [key, hint] of cases) {
      for (const [method, rest, body] of [
        ['GET', '', undefined],
        ['PUT', '', {}],
        ['POST', '/breaker', { action: 'open' }],
      ] as const) {
        const res = await api.call(method, path(key, rest), body);
        expect(res.status, `${method} ${key}`).toBe(400);
        expect(res.body).toMatchObject({
          code: 'VALIDATION_FAILED',
          errors: [{ field: 'targetKey', rule: TARGET_KEY_RULE, message: `targetKey must be ${TARGET_KEY_RULE}${hint}` }],
        });
      }
    }
  });

  it('takes an origin with a port and an IPv6 origin, each as one encoded segment', async () => {
    for (const key of ['https://api.example.com:8443', 'http://[2606:2800:220:1::1]:8080']) {
      const put = await api.call('PUT', path(key), { maxInFlight: 4 });
      expect(put.status, key).toBe(200);
      expect(put.body.targetKey).toBe(key);
      expect((await api.call('GET', path(key))).body.settings.maxInFlight).toBe(4);
    }
  });
});

describe('PUT /targets/{targetKey}', () => {
  const key = 'https://put.example.com';

  it("creates a target's settings from a partial object over the defaults, and keeps what a later PUT leaves out", async () => {
    const created = await api.call('PUT', path(key), { rateLimit: { ratePerSecond: 50, burst: 5 }, breaker: { openDurationMs: 2_000 } });
    expect(created.status).toBe(200);
    expect(created.body.settings).toEqual({
      ...DEFAULT_TARGET_SETTINGS,
      rateLimit: { ratePerSecond: 50, burst: 5 },
      breaker: { ...DEFAULT_TARGET_SETTINGS.breaker, openDurationMs: 2_000 },
    });
    // The limits reach the store's gate, as GET shows them; 10 in flight is the slow start of a target with no success yet.
    expect(created.body.limits).toEqual({ ratePerSecond: 50, burst: 5, maxInFlight: SLOW_START_IN_FLIGHT });

    const changed = await api.call('PUT', path(key), { maxInFlight: 2, adaptive: { enabled: false } });
    expect(changed.body.settings).toMatchObject({
      rateLimit: { ratePerSecond: 50, burst: 5 },
      breaker: { openDurationMs: 2_000 },
      maxInFlight: 2,
      adaptive: { ...DEFAULT_TARGET_SETTINGS.adaptive, enabled: false },
    });
    const read = await api.call('GET', path(key));
    expect(read.body.settings).toEqual(changed.body.settings);
    expect(read.body.limits).toEqual({ ratePerSecond: 50, burst: 5, maxInFlight: 2 });

    // null lifts a limit (the slow start's stays until a first success).
    const lifted = await api.call('PUT', path(key), { rateLimit: { ratePerSecond: null, burst: null }, maxInFlight: null });
    expect(lifted.body.limits).toEqual({ ratePerSecond: null, burst: null, maxInFlight: SLOW_START_IN_FLIGHT });
  });

  it('names every broken field and rule at once (400 problem+json) and changes nothing', async () => {
    await api.call('PUT', path(key), { maxInFlight: 3 });
    const res = await api.call('PUT', path(key), {
      breaker: { consecutiveFailures: 0, colour: 'red' },
      rateLimit: { ratePerSecond: -1 },
      maxInFlight: 1.5,
      retryAfterHoldsTarget: 'yes',
      surprise: true,
    });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.errors.map((e: { field: string; rule: string }) => [e.field, e.rule])).toEqual(
      expect.arrayContaining([
        ['breaker.consecutiveFailures', 'an integer >= 1'],
        ['breaker.colour', expect.stringMatching(/^absent/)],
        ['rateLimit.ratePerSecond', 'null or a finite number > 0'],
        ['maxInFlight', 'null or an integer >= 1'],
        ['retryAfterHoldsTarget', 'true or false'],
        ['surprise', expect.stringMatching(/^absent/)],
      ]),
    );
    expect(res.body.errors).toHaveLength(6);
    expect((await api.call('GET', path(key))).body.settings.maxInFlight).toBe(3);
  });

  it('refuses the rules that tie fields together, a body that is not an object, and a body that is not JSON', async () => {
    const tied = await api.call('PUT', path(key), { rateLimit: { ratePerSecond: null, burst: 5 } });
    expect(tied.status).toBe(400);
    expect(tied.body.errors).toEqual([expect.objectContaining({ field: 'rateLimit.burst' })]);
    const opened = await api.call('PUT', path(key), { breaker: { openDurationMs: 10_000, maxOpenDurationMs: 5_000 } });
    expect(opened.body.errors).toEqual([expect.objectContaining({ field: 'breaker.maxOpenDurationMs' })]);

    for (const body of [[], 'text', 42]) {
      const res = await api.call('PUT', path(key), JSON.stringify(body));
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ field: 'body', rule: 'a JSON object', message: 'body must be a JSON object' }]);
    }
    const none = await api.call('PUT', path(key));
    expect(none.status).toBe(400);
    expect(none.body.errors).toEqual([{ field: 'body', rule: 'a JSON object', message: 'body must be a JSON object' }]);
    const broken = await api.call('PUT', path(key), '{"maxInFlight":');
    expect(broken.status).toBe(400);
    expect(broken.body.errors).toEqual([expect.objectContaining({ field: 'body', rule: 'a JSON document' })]);
    const text = await api.call('PUT', path(key), 'maxInFlight=1', { 'content-type': 'text/plain' });
    expect(text.body).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it('lets its maxInFlight reach claims: a target limited to 1 gets one task claimed at a time', () => limitReachesClaims(api));
});

describe('POST /targets/{targetKey}/breaker', () => {
  const key = 'https://breaker.example.com';

  it('opens, closes and resets the breaker by hand; an open breaker holds the target', async () => {
    // An operator's opening holds for the longest open period, not one automatic period (100 ms by default).
    await api.call('PUT', path(key), { breaker: { maxOpenDurationMs: 30_000 } });
    const opened = await api.call('POST', path(key, '/breaker'), { action: 'open' });
    expect(opened.status).toBe(200);
    expect(opened.body.breaker).toMatchObject({ state: 'OPEN', openUntil: expect.any(Number) });
    expect(opened.body.breaker.openUntil).toBeGreaterThan(serviceNow() + 20_000);
    expect(opened.body.breaker.openUntil).toBeLessThanOrEqual(serviceNow() + 30_000);
    expect(opened.body.heldUntil).toBeGreaterThanOrEqual(opened.body.breaker.openUntil);
    expect((await api.call('GET', path(key))).body.breaker.state).toBe('OPEN');

    const closed = await api.call('POST', path(key, '/breaker'), { action: 'close' });
    expect(closed.body.breaker).toEqual({ state: 'CLOSED', openUntil: null, reopenCount: 0 });
    expect(closed.body.heldUntil).toBeNull();

    const reset = await api.call('POST', path(key, '/breaker'), { action: 'reset' });
    expect(reset.body.breaker).toEqual({ state: 'CLOSED', openUntil: null, reopenCount: 0 });
  });

  it('opens for the durationMs asked, past the settings\' longest open period', async () => {
    const before = serviceNow();
    const opened = await api.call('POST', path(key, '/breaker'), { action: 'open', durationMs: 3_600_000 });
    expect(opened.status).toBe(200);
    expect(opened.body.breaker.openUntil).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(opened.body.breaker.openUntil).toBeLessThanOrEqual(serviceNow() + 3_600_000);
    await api.call('POST', path(key, '/breaker'), { action: 'close' });
  });

  it('checks the request: the action, unknown fields, a missing body', async () => {
    const wrong = await api.call('POST', path(key, '/breaker'), { action: 'explode' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors).toEqual([{ field: 'action', rule: 'one of open, close, reset', message: 'action must be one of open, close, reset' }]);
    const extra = await api.call('POST', path(key, '/breaker'), { action: 'open', force: true });
    expect(extra.body.errors).toEqual([{ field: 'force', rule: 'a known parameter', message: 'force is not a known field' }]);
    const tooLong = await api.call('POST', path(key, '/breaker'), { action: 'open', durationMs: 8 * 24 * 3_600_000 });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.errors).toEqual([expect.objectContaining({ field: 'durationMs', rule: '<= 604800000' })]);
    const withClose = await api.call('POST', path(key, '/breaker'), { action: 'close', durationMs: 1_000 });
    expect(withClose.status).toBe(400);
    expect(withClose.body.errors).toEqual([expect.objectContaining({ field: 'durationMs', rule: 'only with action open' })]);
    const missing = await api.call('POST', path(key, '/breaker'), {});
    expect(missing.body.errors).toEqual([{ field: 'action', rule: 'present', message: 'action is required' }]);
    const none = await api.call('POST', path(key, '/breaker'));
    expect(none.status).toBe(400);
    expect(none.body.errors).toEqual([expect.objectContaining({ field: 'body' })]);
  });
});

describe('POST /targets/{targetKey}/release', () => {
  const key = 'https://held.example.com';

  it("ends a target's hold, whichever instance made it, but keeps an open breaker's", async () => {
    // A Retry-After hold another instance wrote: this one never saw the answer.
    await api.store.holdTarget({ tenantId: DEFAULT_TENANT, targetKey: key }, Date.now() + 600_000, Date.now());
    expect((await api.call('GET', path(key))).body.heldUntil).toBeGreaterThan(Date.now() + 500_000);
    const released = await api.call('POST', path(key, '/release'));
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ targetKey: key, heldUntil: null, breaker: { state: 'CLOSED' } });
    // Releasing a target not held changes nothing.
    expect((await api.call('POST', path(key, '/release'))).body.heldUntil).toBeNull();

    const opened = await api.call('POST', path(key, '/breaker'), { action: 'open', durationMs: 60_000 });
    await api.store.holdTarget({ tenantId: DEFAULT_TENANT, targetKey: key }, Date.now() + 600_000, Date.now());
    const kept = await api.call('POST', path(key, '/release'));
    expect(kept.body.breaker.state).toBe('OPEN');
    expect(kept.body.heldUntil).toBe(opened.body.breaker.openUntil);
    await api.call('POST', path(key, '/breaker'), { action: 'close' });
  });

  it('names the target key and its rule when the key is not an origin', async () => {
    const res = await api.call('POST', `/targets/${encodeURIComponent('https://held.example.com/path')}/release`);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'targetKey' })]);
  });
});

describe('GET /targets', () => {
  it('lists every target in targetKey order, page by page', async () => {
    const keys = ['https://page-a.example.com', 'https://page-b.example.com', 'https://page-c.example.com'];
    for (const key of keys) await api.call('PUT', path(key), { maxInFlight: 10 });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await api.call('GET', `/targets?limit=2${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((t: { targetKey: string }) => t.targetKey));
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor !== undefined && pages < 100);
    expect(seen).toEqual([...seen].sort());
    expect(seen).toEqual(expect.arrayContaining([...keys, 'https://api.example.com']));
    const one = (await api.call('GET', '/targets?limit=1000')).body.items.find((t: { targetKey: string }) => t.targetKey === keys[0]);
    expect(one).toMatchObject({ limits: { maxInFlight: 10 }, settings: { maxInFlight: 10 }, breaker: { state: 'CLOSED' } });
  });

  it('checks the query like every listing', async () => {
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=many', 'limit'],
      ['state=OPEN', 'state'],
    ]) {
      const res = await api.call('GET', `/targets?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ field })]);
    }
  });
});

describe('the OpenAPI document', () => {
  it('documents the routes and the shapes, and the Target schema names every field an answer has', async () => {
    const doc = (await api.call('GET', '/openapi.json')).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/targets', '/targets/{targetKey}', '/targets/{targetKey}/breaker', '/targets/{targetKey}/release']));
    expect(doc.paths['/targets/{targetKey}/release'].post.operationId).toBe('releaseTarget');
    expect(doc.paths['/targets/{targetKey}'].put.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/TargetSettingsPatch' });
    const schemas = doc.components.schemas;
    const answer = (await api.call('GET', path('https://api.example.com'))).body;
    expect([...schemas.Target.required].sort()).toEqual(Object.keys(answer).sort());
    expect(Object.keys(schemas.Target.properties).sort()).toEqual(Object.keys(answer).sort());
    // The settings schemas follow the settings themselves, section by section and field by field (a list is one field).
    const shape = (value: object): unknown =>
      Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeof v === 'object' && v !== null && !Array.isArray(v) ? shape(v) : true]));
    type Schema = { properties?: Record<string, Schema> };
    const schemaShape = (schema: Schema): unknown =>
      Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, v.properties === undefined ? true : schemaShape(v)]));
    expect(schemaShape(schemas.TargetSettings)).toEqual(shape(DEFAULT_TARGET_SETTINGS));
    expect(schemaShape(schemas.TargetSettingsPatch)).toEqual(shape(DEFAULT_TARGET_SETTINGS));
    expect(schemas.TargetSettings.properties.signing.properties.secrets).toEqual({ type: 'array', items: { type: 'string' }, default: [] });
    expect(schemas.BreakerRequest.properties.action.enum).toEqual(['open', 'close', 'reset']);
  });
});

describe('an app without per-target protection', () => {
  it('does not serve /targets', async () => {
    const bare = await startApi();
    try {
      expect((await bare.call('GET', '/targets')).body).toMatchObject({ status: 404, code: 'NOT_FOUND' });
      expect(Object.keys((await bare.call('GET', '/openapi.json')).body.paths)).not.toContain('/targets');
    } finally {
      await bare.close();
    }
  });
});

// The same path on the networked stores: the route, the protection's limit and the store's gate together.
describe.each([
  ['PostgreSQL', () => `${POSTGRES_URL}?schema=${freshSchema()}`, dropSchemas],
  ['Redis', () => `${REDIS_URL}?prefix=${freshPrefix()}`, dropPrefixes],
])('/targets on %s', (_name, storeUrl, drop) => {
  let harness: ApiHarness;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ api: harness, close } = await startTargetsApi({ storeUrl: storeUrl() }));
  });
  afterAll(async () => {
    await close();
    await drop();
  });

  it("lets a PUT's maxInFlight reach claims", () => limitReachesClaims(harness));

  it('holds the target while its breaker is open by hand, and lists it', async () => {
    const key = 'https://api.example.com:7443';
    const opened = await harness.call('POST', path(key, '/breaker'), { action: 'open' });
    expect(opened.body.breaker.state).toBe('OPEN');
    expect(opened.body.heldUntil).toBeGreaterThanOrEqual(opened.body.breaker.openUntil);
    const listed = (await harness.call('GET', '/targets?limit=1000')).body.items.map((t: { targetKey: string }) => t.targetKey);
    expect(listed).toContain(key);
  });
});

describe('GET /retry-tasks/{taskId} says why a due task waits', () => {
  const key = 'https://api.example.com:10443';
  const enqueue = async (overrides: Record<string, unknown>) => {
    const res = await api.enqueue({ targetUrl: `${key}/jobs`, ...overrides });
    expect(res.status).toBe(201);
    return res.body.taskId as string;
  };
  const waitingOf = async (taskId: string) => (await api.call('GET', `/retry-tasks/${taskId}`)).body.waiting;

  it('queued, at its in-flight limit, held by the breaker until its openUntil; nothing for a task not due yet', async () => {
    const due = await enqueue({ idempotencyKey: 'wait-due' });
    const other = await enqueue({ idempotencyKey: 'wait-other' });
    const later = await enqueue({ idempotencyKey: 'wait-later', delayMs: 60_000 });
    expect(await waitingOf(due)).toEqual({ reason: 'queued', until: null, detail: 'due; waiting for a free worker; 2 tasks due on its target' });
    expect((await api.call('GET', `/retry-tasks/${later}`)).body).not.toHaveProperty('waiting');

    await api.call('PUT', path(key), { maxInFlight: 1 });
    const [claimed] = await api.store.claimDue(Date.now(), { limit: 10, leaseMs: 60_000, workerId: 'test-worker' }).then((ts) => ts.filter((t) => t.targetKey === key));
    const waiting = claimed!.taskId === due ? other : due;
    expect(await waitingOf(waiting)).toEqual({ reason: 'max_in_flight', until: null, detail: 'target at its limit of 1 attempts in flight' });
    expect((await api.call('GET', `/retry-tasks/${claimed!.taskId}`)).body).not.toHaveProperty('waiting');

    const opened = await api.call('POST', path(key, '/breaker'), { action: 'open', durationMs: 60_000 });
    const openUntil = opened.body.breaker.openUntil as number;
    expect(await waitingOf(waiting)).toEqual({
      reason: 'breaker_open',
      until: openUntil,
      detail: `target's circuit breaker open until ${new Date(openUntil).toISOString()}, then probes`,
    });
    await api.call('POST', path(key, '/breaker'), { action: 'close' });
    await api.store.releaseLeases([{ tenantId: DEFAULT_TENANT, taskId: claimed!.taskId, fencingToken: claimed!.fencingToken }], Date.now());
    expect((await waitingOf(waiting)).reason).toBe('queued');
  });
});
