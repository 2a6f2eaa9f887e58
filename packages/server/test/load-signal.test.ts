import { GrpcStatus } from '@retryd/core';
import { describe, expect, it } from 'vitest';
import type { AttemptResult } from '../src/engine/attempt-result.js';
import { loadSignalOf } from '../src/protection/load-signal.js';

const NOW = Date.UTC(2026, 0, 1);
const http = (status: number, headers: Record<string, string> = {}): AttemptResult => ({ kind: 'response', status, headers, bodySnippet: null });
const grpc = (code: number, pushback?: string): AttemptResult => ({ kind: 'grpc', code, details: '', pushback, bodySnippet: null });

describe('loadSignalOf', () => {
  it('reads an HTTP 429 or 503 with its Retry-After, and nothing of other statuses', () => {
    expect(loadSignalOf(http(429, { 'retry-after': '3' }), NOW)).toEqual({ status: 429, retryAfterMs: 3_000 });
    expect(loadSignalOf(http(503), NOW)).toEqual({ status: 503, retryAfterMs: undefined });
    expect(loadSignalOf(http(500, { 'retry-after': '3' }), NOW)).toEqual({ status: undefined, retryAfterMs: undefined });
  });

  it('reads RESOURCE_EXHAUSTED as a 429 and UNAVAILABLE as a 503, their pushback as the wait', () => {
    expect(loadSignalOf(grpc(GrpcStatus.RESOURCE_EXHAUSTED, '250'), NOW)).toEqual({ status: 429, retryAfterMs: 250 });
    expect(loadSignalOf(grpc(GrpcStatus.UNAVAILABLE), NOW)).toEqual({ status: 503, retryAfterMs: undefined });
    expect(loadSignalOf(grpc(GrpcStatus.UNAVAILABLE, ' 0 '), NOW)).toEqual({ status: 503, retryAfterMs: 0 });
  });

  it('holds nothing for a negative or unreadable pushback (no retry of that call), nor for other codes', () => {
    expect(loadSignalOf(grpc(GrpcStatus.UNAVAILABLE, '-1'), NOW)).toEqual({ status: 503, retryAfterMs: undefined });
    expect(loadSignalOf(grpc(GrpcStatus.RESOURCE_EXHAUSTED, 'soon'), NOW)).toEqual({ status: 429, retryAfterMs: undefined });
    expect(loadSignalOf(grpc(GrpcStatus.INTERNAL, '250'), NOW)).toEqual({ status: undefined, retryAfterMs: undefined });
    expect(loadSignalOf({ kind: 'error', error: new Error('reset'), message: 'reset' }, NOW)).toEqual({ status: undefined, retryAfterMs: undefined });
  });
});
