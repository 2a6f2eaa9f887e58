import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '@retryd/core/testing';
import { Purger } from '../src/retention/purger.js';
import { DEFAULT_RETENTION } from '../src/retention/retention-periods.js';
import { T0 } from './fixtures/tasks.js';
import { startApi, type ApiHarness } from './api-harness.js';

// Retention through the API: the tenant's periods, a registered policy's own, a cancel dated by them, and a task gone
// with its key once the purge passed.

const clock = new ManualClock(T0);
let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ service: { clock } });
});
afterAll(async () => {
  await api.close();
});

const fields = { maxAttempts: 4, backoffType: 'EXPONENTIAL', initialDelayMs: 200, multiplier: 2, maxDelayMs: 5_000, jitterType: 'FULL' };
const service = Object.fromEntries(Object.keys(DEFAULT_RETENTION).map((f) => [f, 'service']));

describe('retention', () => {
  it("shows the tenant's periods and where each comes from", async () => {
    const res = await api.call('GET', '/retention');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...DEFAULT_RETENTION, own: {}, from: service });
  });

  it("sets a registered policy's own periods, refusing a bad one by field and rule, and an unknown policy", async () => {
    await api.call('POST', '/retry-policies', { policyId: 'payments', ...fields });
    const set = await api.call('PUT', '/retry-policies/payments/retention', { deadLettersMs: 90 * 86_400_000 });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({
      ...DEFAULT_RETENTION,
      deadLettersMs: 90 * 86_400_000,
      own: { deadLettersMs: 90 * 86_400_000 },
      from: { ...service, deadLettersMs: 'policy' },
    });
    expect((await api.call('GET', '/retry-policies/payments/retention')).body).toEqual(set.body);

    const bad = await api.call('PUT', '/retry-policies/payments/retention', { succeededMs: 1_000, forever: true });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([
      expect.objectContaining({ field: 'succeededMs', rule: 'an integer number of ms from 60000 (a minute) to 315360000000 (ten years)' }),
      expect.objectContaining({ field: 'forever', rule: 'one of succeededMs, deadLettersMs, cancelledMs' }),
    ]);
    expect((await api.call('PUT', '/retry-policies/ghost/retention', {})).status).toBe(404);
    expect((await api.call('GET', '/retry-policies/ghost/retention')).status).toBe(404);
    // {} removes the policy's own periods.
    expect((await api.call('PUT', '/retry-policies/payments/retention', {})).body).toEqual({ ...DEFAULT_RETENTION, own: {}, from: service });
  });

  it('dates a cancel by the retention of its policy, and the purge deletes the task then, freeing its key', async () => {
    await api.call('PUT', '/retry-policies/default/retention', { cancelledMs: 120_000 });
    const created = await api.enqueue({ idempotencyKey: 'cancel-me', delayMs: 60_000 });
    expect(created.status).toBe(201);
    const cancelled = await api.call('DELETE', `/retry-tasks/${created.body.taskId}`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'CANCELLED', expiresAt: T0 + 120_000 });

    const purger = new Purger({ store: api.store, blobs: api.blobs, clock, owner: 'p', report: (error) => { throw error; } });
    expect(await purger.pass()).toBe(0);
    await clock.advance(120_000);
    expect(await purger.pass()).toBe(1);
    expect((await api.call('GET', `/retry-tasks/${created.body.taskId}`)).status).toBe(404);
    const again = await api.enqueue({ idempotencyKey: 'cancel-me', delayMs: 60_000 });
    expect(again.status).toBe(201);
    expect(again.body.taskId).not.toBe(created.body.taskId);
  });
});
