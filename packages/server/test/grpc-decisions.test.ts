import { GrpcStatus, type RetryPolicy } from '@retryd/core';
import { seededRandom } from '@retryd/core/testing';
import { describe, expect, it } from 'vitest';
import { grpcTargetOf } from '../src/domain/grpc-target.js';
import { targetKeyOf } from '../src/domain/target-key.js';
import type { RetryTask } from '../src/domain/task.js';
import type { AttemptResult } from '../src/engine/attempt-result.js';
import { decideAttemptOutcome } from '../src/engine/decide-outcome.js';
import { parseEnqueueInput } from '../src/tasks/enqueue-input.js';
import { makeTask, T0 } from './fixtures/tasks.js';

// The pure parts of gRPC targets: the decision on a gRPC status, the URL's key, the enqueue rules.

const POLICY: RetryPolicy = { maxAttempts: 5, backoffType: 'FIXED', initialDelayMs: 100, multiplier: 1, maxDelayMs: 100, jitterType: 'NONE' };
const NOW = T0 + 25;
const RETENTION = { succeededMs: 1_000_000, deadLettersMs: 2_000_000, cancelledMs: 3_000_000 };
const ctx = (overrides: Partial<{ policy: RetryPolicy; maxRetryAfterMs: number }> = {}) => ({
  policy: POLICY,
  now: NOW,
  random: seededRandom(1),
  workerId: 'w1',
  retention: RETENTION,
  ...overrides,
});
const task = (): RetryTask =>
  makeTask({ status: 'IN_FLIGHT', targetUrl: 'grpc://127.0.0.1:50051/pay.v1.Payments/Charge', targetKey: 'grpc://127.0.0.1:50051', updatedAt: T0 });
const grpc = (code: number, details = '', pushback?: string, bodySnippet: string | null = null): AttemptResult => ({ kind: 'grpc', code, details, pushback, bodySnippet });
const decide = (result: AttemptResult, overrides: Parameters<typeof ctx>[0] = {}) => decideAttemptOutcome(task(), { startedAt: T0, result }, ctx(overrides));

describe('the decision on a gRPC status', () => {
  it('succeeds on OK, keeping the reply excerpt and no status or error', () => {
    const { next, attempt } = decide(grpc(GrpcStatus.OK, '', undefined, 'CgNmb28='));
    expect(next.status).toBe('SUCCEEDED');
    expect(attempt).toMatchObject({ responseStatus: null, errorMessage: null, responseBodySnippet: 'CgNmb28=', outcome: 'succeeded' });
  });

  it.each([
    ['UNAVAILABLE', GrpcStatus.UNAVAILABLE],
    ['RESOURCE_EXHAUSTED', GrpcStatus.RESOURCE_EXHAUSTED],
    ['DEADLINE_EXCEEDED', GrpcStatus.DEADLINE_EXCEEDED],
  ])('retries %s by default, after the policy delay', (name, code) => {
    const { next, attempt } = decide(grpc(code, 'busy'));
    expect(next).toMatchObject({ status: 'PENDING', nextAttemptAt: NOW + 100, lastError: `grpc ${name}: busy`, lastResponseStatus: null });
    expect(attempt?.outcome).toBe('retry_scheduled');
  });

  it.each([
    ['INVALID_ARGUMENT', GrpcStatus.INVALID_ARGUMENT],
    ['ABORTED', GrpcStatus.ABORTED],
    ['INTERNAL', GrpcStatus.INTERNAL],
    ['UNKNOWN', 99],
  ])('ends FAILED on %s, named in the reason', (name, code) => {
    const { next } = decide(grpc(code));
    expect(next).toMatchObject({ status: 'FAILED', deadLetterReason: `permanent_status:${name}`, lastError: `grpc ${name}` });
  });

  it("retries the policy's own codes instead of the defaults", () => {
    const policy = { ...POLICY, retryableStatusCodes: ['ABORTED' as const] };
    expect(decide(grpc(GrpcStatus.ABORTED), { policy }).next.status).toBe('PENDING');
    expect(decide(grpc(GrpcStatus.UNAVAILABLE), { policy }).next).toMatchObject({ status: 'FAILED', deadLetterReason: 'permanent_status:UNAVAILABLE' });
    // A policy of HTTP statuses (changed after enqueue) leaves gRPC at its defaults.
    expect(decide(grpc(GrpcStatus.UNAVAILABLE), { policy: { ...POLICY, retryableStatusCodes: [503] } }).next.status).toBe('PENDING');
  });

  it('waits the pushback instead of the policy delay, within --max-retry-after', () => {
    expect(decide(grpc(GrpcStatus.UNAVAILABLE, '', '2500')).next).toMatchObject({ status: 'PENDING', nextAttemptAt: NOW + 2_500 });
    expect(decide(grpc(GrpcStatus.UNAVAILABLE, '', '7200000'), { maxRetryAfterMs: 3_600_000 }).next).toMatchObject({
      status: 'EXHAUSTED',
      deadLetterReason: 'retry_after_beyond_limit',
    });
  });

  it('does not retry when the pushback is negative or not a number', () => {
    for (const pushback of ['-1', 'soon']) {
      expect(decide(grpc(GrpcStatus.UNAVAILABLE, 'stop', pushback)).next).toMatchObject({ status: 'FAILED', deadLetterReason: 'retry_refused' });
    }
    // A pushback on a code that is not retried changes nothing.
    expect(decide(grpc(GrpcStatus.INVALID_ARGUMENT, '', '100')).next.deadLetterReason).toBe('permanent_status:INVALID_ARGUMENT');
  });
});

describe('gRPC target URLs', () => {
  it('keys a target by scheme, host as http: spells it, and port', () => {
    expect(targetKeyOf('grpc://API.Example.com:50051/pay.v1.Payments/Charge')).toBe('grpc://api.example.com:50051');
    expect(targetKeyOf('grpcs://[::1]:443/a.B/C')).toBe('grpcs://[::1]:443');
    expect(grpcTargetOf(new URL('grpcs://Pay.Example:8443/pay.v1.Payments/Charge'))).toMatchObject({
      tls: true,
      hostname: 'pay.example',
      port: 8443,
      service: 'pay.v1.Payments',
      method: 'Charge',
      href: 'grpcs://pay.example:8443/pay.v1.Payments/Charge',
    });
  });

  it.each([
    ['grpc://h.example/a.B/C', 'the port is required'],
    ['grpc://h.example:1/a.B', 'the path must be /package.Service/Method'],
    ['grpc://h.example:1/a.B/C/D', 'the path must be /package.Service/Method'],
    ['grpc://h.example:1/a.B/C?x=1', 'no query or fragment'],
    ['grpc://u:p@h.example:1/a.B/C', 'never in the URL'],
  ])('refuses %s', (url, rule) => {
    const target = grpcTargetOf(new URL(url));
    expect('rule' in target && target.rule).toContain(rule);
  });

  it('takes method POST or none, and a base64 body; the method of a gRPC task is POST', () => {
    const parsed = parseEnqueueInput({ targetUrl: 'grpc://h.example:1/a.B/C', body: 'CgNmb28=', headers: { 'X-Id-Bin': 'AAE=' } });
    expect(parsed).toMatchObject({ ok: true, value: { method: 'POST', body: 'CgNmb28=', headers: { 'X-Id-Bin': 'AAE=' } } });
    const refused = parseEnqueueInput({ targetUrl: 'grpc://h.example:1/a.B/C', method: 'PUT', body: 'CgNmb28', headers: { 'x-note': 'caf\u00e9' } });
    expect(refused.ok ? [] : refused.errors.map((e) => e.field)).toEqual(['method', 'headers.x-note', 'body']);
  });
});
