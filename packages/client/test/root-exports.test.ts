import * as core from '@retryd/core';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as client from '../src/index.js';
import type { EnqueueRequest, EnqueueTaskRequest, RetryPolicy, RetryQueueRequest } from '../src/index.js';

// What a caller of @retryd/client catches and checks comes from @retryd/client itself, and is core's very own: an
// `instanceof` against the client's export holds for what core throws.

describe('@retryd/client root exports', () => {
  it("re-exports core's errors and policy constants, the same objects", () => {
    for (const name of ['RetryExhaustedError', 'RetryableResultError', 'BrokenCircuitError', 'InvalidPolicyError', 'GiveUpReason', 'AttemptOutcome', 'CircuitState', 'BackoffType', 'JitterType', 'DEFAULT_POLICY'] as const) {
      expect(client[name], name).toBeDefined();
      expect(client[name], name).toBe(core[name]);
    }
  });

  it('an error thrown by core is an instance of the class the client exports', async () => {
    const error = await core.retry(() => Promise.reject(new Error('down')), { maxAttempts: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(client.RetryExhaustedError);
  });

  it("names the browser queue's request and the service's enqueue body apart, the old name kept for the queue's", () => {
    expectTypeOf<RetryQueueRequest>().toHaveProperty('url');
    expectTypeOf<EnqueueTaskRequest>().toHaveProperty('targetUrl');
    expectTypeOf<EnqueueRequest>().toEqualTypeOf<RetryQueueRequest>();
    expectTypeOf<RetryPolicy>().toEqualTypeOf<core.RetryPolicy>();
  });
});
