import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '@retryd/core';
import { canonicalRequest, parseEnqueueInput, type ParsedEnqueue } from '../src/tasks/enqueue-input.js';

// A task's requestHash tells a replay (the same request again: 200, the stored task) from a conflict (another request
// under the same key: 422). Stored tasks keep the hash they were given, so the text it is taken of must never change:
// a replay sent after an upgrade must still be recognised.

function hashOf(request: unknown): string {
  const parsed = parseEnqueueInput(request);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.value.requestHash;
}

/** The canonical request as its definition gives it: `canonicalJson` of one object (see `canonicalRequest`). */
function canonicalByDefinition(value: ParsedEnqueue, rawBody: unknown): string {
  const headers = Object.entries(value.headers)
    .map(([h, v]) => [h.toLowerCase(), v] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return canonicalJson({
    method: value.method,
    targetUrl: value.targetUrl.href,
    headers,
    body: rawBody === undefined || rawBody === null ? null : typeof rawBody === 'string' ? { text: rawBody } : { json: rawBody },
    ...(value.bodyRef === null ? {} : { bodyRef: value.bodyRef }),
    policyId: value.policyId,
    policy: value.policy,
    firstAttempt: value.firstAttempt,
    ...(value.secretHeaders.size === 0 ? {} : { secretHeaders: [...value.secretHeaders].sort() }),
    ...(value.sensitiveBody ? { sensitiveBody: true } : {}),
    ...(value.attemptTimeoutMs === null ? {} : { attemptTimeoutMs: value.attemptTimeoutMs }),
    ...(value.connectTimeoutMs === null ? {} : { connectTimeoutMs: value.connectTimeoutMs }),
    ...(value.callback === null ? {} : { callback: { url: value.callback.url.href, on: value.callback.on, policyId: value.callback.policyId } }),
  });
}

describe('the request hash', () => {
  it('is what it has always been for the same requests (stored tasks keep theirs)', () => {
    const pinned: [unknown, string][] = [
      [
        { targetUrl: 'https://api.example.com/orders', method: 'POST', body: { b: 1, a: [true, { d: null, c: 'x' }] } },
        '603e9273450852700b39626f333793b1e7ab438e7a88230a3aeddd809e52b540',
      ],
      [
        { targetUrl: 'https://api.example.com/orders', method: 'POST', body: { a: [true, { c: 'x', d: null }], b: 1 } },
        '603e9273450852700b39626f333793b1e7ab438e7a88230a3aeddd809e52b540',
      ],
      [
        {
          targetUrl: 'http://127.0.0.1:9/hooks/1?x=1',
          method: 'PUT',
          headers: { 'X-B': '2', 'content-type': 'text/plain', 'x-a': '1' },
          body: 'plain text ✓',
          policyId: 'fast',
          delayMs: 5000,
        },
        'ccdc85af76fd3c3b91d7d109251a3f24624e6c6f1a52d6595c815806af58d31c',
      ],
      [
        {
          targetUrl: 'https://api.example.com/x',
          method: 'DELETE',
          policy: { maxAttempts: 4, backoffType: 'LINEAR', initialDelayMs: 50, multiplier: 1, maxDelayMs: 500, jitterType: 'NONE', retryableStatusCodes: [503, 429] },
          notBefore: '2030-01-01T00:00:00Z',
          idempotencyKey: 'k-1',
        },
        'e33d7ac3d8c71eb369a18bceaef106d0c303b6a8a0c3f613259cc4257a0487d8',
      ],
      [
        {
          targetUrl: 'https://api.example.com/x',
          method: 'POST',
          bodyRef: 's3://bucket/key',
          headers: { authorization: 'Bearer x', 'x-s': 'y' },
          secretHeaders: ['X-S'],
          sensitiveBody: false,
        },
        '68b40c631b435dac9edb22c8d2518cc5ef9844269d3042d92030c9cc18a6a9ee',
      ],
      [
        { targetUrl: 'https://api.example.com/x', method: 'POST', body: { 'q"': 'é', n: 1.5e300, z: -0 }, sensitiveBody: true },
        'cac8eca5061209c901d416135df9a379c718bbd3c3ad56fab31d65c0d109a734',
      ],
      [{ targetUrl: 'https://api.example.com/x', method: 'GET' }, '7878fba8bab79ec28d899d41bf3a7614c1edf80c20f382b4d871eaf2ea665fac'],
      [
        { targetUrl: 'https://api.example.com/slow', method: 'POST', body: 'x', attemptTimeoutMs: 120_000, connectTimeoutMs: 2_000 },
        '322708e1561f2daa654a7128b8e29fd1d4e53532ff95fa5f26192750f74f34e2',
      ],
      // The same request without timeouts keeps the hash it had before they existed.
      [{ targetUrl: 'https://api.example.com/slow', method: 'POST', body: 'x' }, '5e438a62c12ce23015011f459090cd7035beab6f1808728894f9ac463e5cf36c'],
    ];
    for (const [request, hash] of pinned) expect(hashOf(request), JSON.stringify(request)).toBe(hash);
  });

  it('takes a callback as data: its ends in any order and a null policyId are the same request, another URL is not', () => {
    const base = { targetUrl: 'https://api.example.com/x', method: 'POST', body: 'x' };
    const told = hashOf({ ...base, callback: { url: 'https://caller.example.com/ended', on: ['failed', 'succeeded'] } });
    expect(hashOf({ ...base, callback: { url: 'https://caller.example.com/ended', on: ['succeeded', 'failed'], policyId: null } })).toBe(told);
    expect(hashOf({ ...base, callback: { url: 'https://caller.example.com/other', on: ['failed', 'succeeded'] } })).not.toBe(told);
    expect(hashOf(base)).not.toBe(told);
  });

  it('property: the text written out by hand is canonicalJson of the request as defined', () => {
    const headerName = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,12}$/).filter((h) => !['host', 'content-length', 'connection', 'te', 'trailer', 'upgrade', 'expect', 'keep-alive'].includes(h.toLowerCase()));
    const request = fc.record(
      {
        targetUrl: fc.constantFrom('https://api.example.com/x', 'http://127.0.0.1:8080/a?b=c', 'https://Example.COM:443/é'),
        method: fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE'),
        headers: fc.dictionary(headerName, fc.stringMatching(/^[\x20-\x7e]{0,20}$/), { maxKeys: 4 }),
        body: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.string()),
        policyId: fc.constantFrom('default', 'fast-1'),
        policy: fc.constantFrom(
          { maxAttempts: 3, backoffType: 'EXPONENTIAL', initialDelayMs: 100, multiplier: 2, maxDelayMs: 1000, jitterType: 'FULL' },
          { jitterType: 'NONE', maxDelayMs: 50, multiplier: 1, initialDelayMs: 50, backoffType: 'FIXED', maxAttempts: 2, retryableStatusCodes: [503] },
        ),
        delayMs: fc.integer({ min: 0, max: 10_000_000 }),
        notBefore: fc.integer({ min: 0, max: 4_000_000_000_000 }),
        sensitiveBody: fc.boolean(),
        // Connect within attempt whenever both are drawn: the rule that ties them is not what this property is about.
        attemptTimeoutMs: fc.integer({ min: 5_000, max: 1_800_000 }),
        connectTimeoutMs: fc.integer({ min: 1, max: 5_000 }),
        callback: fc.record(
          {
            url: fc.constantFrom('https://caller.example.com/ended', 'http://127.0.0.1:9/cb?t=1'),
            on: fc.subarray(['cancelled', 'failed', 'succeeded'], { minLength: 1 }),
            policyId: fc.constantFrom('default', 'callbacks'),
          },
          { requiredKeys: ['url'] },
        ),
      },
      { requiredKeys: ['targetUrl', 'method'] },
    );
    let checked = 0;
    fc.assert(
      fc.property(request, fc.boolean(), (input, markFirstSecret) => {
        const candidate: Record<string, unknown> = { ...input };
        if (candidate['delayMs'] !== undefined) delete candidate['notBefore'];
        if (candidate['policy'] !== undefined) delete candidate['policyId'];
        const names = Object.keys(input.headers ?? {});
        if (markFirstSecret && names[0] !== undefined) candidate['secretHeaders'] = [names[0].toUpperCase()];
        const parsed = parseEnqueueInput(candidate);
        if (!parsed.ok) return; // a combination the rules refuse (e.g. one header name twice in two cases)
        checked += 1;
        const text = canonicalRequest(parsed.value, candidate['body']);
        expect(text).toBe(canonicalByDefinition(parsed.value, candidate['body']));
      }),
      { numRuns: 1000 },
    );
    // Most generated requests are valid: the property is not passed by refusing them.
    expect(checked).toBeGreaterThan(900);
  });
});
