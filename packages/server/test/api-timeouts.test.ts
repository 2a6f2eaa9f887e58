import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTargetsApi, type ApiHarness } from './api-harness.js';

// A task's own timeouts at enqueue (single and batch) and a target's in its settings: every broken rule names the field
// and the rule; what is taken is shown back, and is part of the request an idempotency key stands for.

let api: ApiHarness;
let closeApi: () => Promise<void>;
beforeAll(async () => {
  ({ api, close: closeApi } = await startTargetsApi());
});
afterAll(async () => {
  await closeApi();
});

const RULE = 'a whole number of ms from 1 to 1800000 (30 minutes)';
const path = (targetKey: string) => `/targets/${encodeURIComponent(targetKey)}`;

type FieldError = { field: string; rule: string; message: string };

describe('POST /retry-tasks: attemptTimeoutMs and connectTimeoutMs', () => {
  it.each([
    ['zero', 'attemptTimeoutMs', 0, '0'],
    ['a fraction', 'attemptTimeoutMs', 1.5, '1.5'],
    ['more than 30 minutes', 'attemptTimeoutMs', 1_800_001, '1800001'],
    ['a string', 'attemptTimeoutMs', '200', '"200"'],
    ['negative', 'connectTimeoutMs', -5, '-5'],
    ['a boolean', 'connectTimeoutMs', true, 'true'],
  ])('refuses %s in %s, naming the field and the rule', async (_case, field, value, shown) => {
    const res = await api.enqueue({ [field]: value });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    expect(res.body.errors).toEqual([{ field, rule: RULE, message: `${field} must be ${RULE}, got ${shown}` }]);
  });

  it('refuses a connect timeout longer than the attempt timeout given with it', async () => {
    const res = await api.enqueue({ attemptTimeoutMs: 200, connectTimeoutMs: 500 });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: 'connectTimeoutMs', rule: '<= attemptTimeoutMs (200)', message: 'connectTimeoutMs must be <= attemptTimeoutMs (200), got 500' },
    ]);
  });

  it('names the entry of a batch, and takes the valid entries beside it', async () => {
    const res = await api.call('POST', '/retry-tasks/batch', {
      tasks: [
        { targetUrl: 'https://api.example.com/a', method: 'POST', attemptTimeoutMs: 1_800_000, connectTimeoutMs: 1 },
        { targetUrl: 'https://api.example.com/b', method: 'POST', connectTimeoutMs: 0 },
      ],
    });
    expect(res.status).toBe(200);
    const [ok, bad] = res.body.results as { status: number; task?: Record<string, unknown>; error?: { errors: FieldError[] } }[];
    expect(ok).toMatchObject({ status: 201, task: { attemptTimeoutMs: 1_800_000, connectTimeoutMs: 1 } });
    expect(bad?.status).toBe(400);
    expect(bad?.error?.errors).toEqual([{ field: 'tasks[1].connectTimeoutMs', rule: RULE, message: `tasks[1].connectTimeoutMs must be ${RULE}, got 0` }]);
  });

  it('stores and shows the timeouts given, and null where none is', async () => {
    const own = await api.enqueue({ attemptTimeoutMs: 120_000, connectTimeoutMs: 2_000 });
    const attemptOnly = await api.enqueue({ attemptTimeoutMs: 200 });
    const none = await api.enqueue();
    expect(own).toMatchObject({ status: 201, body: { attemptTimeoutMs: 120_000, connectTimeoutMs: 2_000 } });
    expect(attemptOnly.body).toMatchObject({ attemptTimeoutMs: 200, connectTimeoutMs: null });
    expect(none.body).toMatchObject({ attemptTimeoutMs: null, connectTimeoutMs: null });
    expect((await api.call('GET', `/retry-tasks/${own.body.taskId}`)).body).toMatchObject({ attemptTimeoutMs: 120_000, connectTimeoutMs: 2_000 });
    expect(await api.stored(own.body.taskId)).toMatchObject({ attemptTimeoutMs: 120_000, connectTimeoutMs: 2_000 });
  });

  it('counts the timeouts as part of the request: the same key with other timeouts is a 422, with the same ones a replay', async () => {
    const first = await api.enqueue({ idempotencyKey: 'timeouts-1', attemptTimeoutMs: 5_000 });
    expect(first.status).toBe(201);
    expect((await api.enqueue({ idempotencyKey: 'timeouts-1', attemptTimeoutMs: 5_000 })).status).toBe(200);
    for (const change of [{ attemptTimeoutMs: 6_000 }, { attemptTimeoutMs: 5_000, connectTimeoutMs: 100 }, {}]) {
      const res = await api.enqueue({ idempotencyKey: 'timeouts-1', ...change });
      expect(res.status, JSON.stringify(change)).toBe(422);
      expect(res.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    }
  });
});

describe('PUT /targets/{targetKey}: attemptTimeoutMs and connectTimeoutMs', () => {
  const key = 'https://slow.example.com';

  it('refuses a timeout out of bounds, and a connect timeout longer than the attempt timeout, and changes nothing', async () => {
    const res = await api.call('PUT', path(key), { attemptTimeoutMs: 0, connectTimeoutMs: 2.5 });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: 'attemptTimeoutMs', rule: `null or ${RULE}`, message: `attemptTimeoutMs must be null or ${RULE}` },
      { field: 'connectTimeoutMs', rule: `null or ${RULE}`, message: `connectTimeoutMs must be null or ${RULE}` },
    ]);
    expect((await api.call('PUT', path(key), { attemptTimeoutMs: 100 })).status).toBe(200);
    const tied = await api.call('PUT', path(key), { connectTimeoutMs: 150 });
    expect(tied.status).toBe(400);
    expect(tied.body.errors).toEqual([{ field: 'connectTimeoutMs', rule: '<= attemptTimeoutMs (100)', message: 'connectTimeoutMs must be <= attemptTimeoutMs (100)' }]);
    expect((await api.call('GET', path(key))).body.settings).toMatchObject({ attemptTimeoutMs: 100, connectTimeoutMs: null });
  });

  it("keeps the target's timeouts, shows them, and null gives its tasks the service's again", async () => {
    const set = await api.call('PUT', path(key), { attemptTimeoutMs: 120_000, connectTimeoutMs: 3_000 });
    expect(set.body.settings).toMatchObject({ attemptTimeoutMs: 120_000, connectTimeoutMs: 3_000 });
    const cleared = await api.call('PUT', path(key), { attemptTimeoutMs: null });
    expect(cleared.body.settings).toMatchObject({ attemptTimeoutMs: null, connectTimeoutMs: 3_000 });
  });
});
