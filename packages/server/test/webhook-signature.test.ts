import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signAttemptHeaders } from '../src/engine/http-dispatcher.js';
import { webhookKey, webhookSignature } from '../src/security/webhook-signature.js';
import { makeTask } from './fixtures/tasks.js';

// The specification's published example, as its reference library checks it: standard-webhooks/standard-webhooks,
// libraries/javascript/src/webhook.test.ts, "sign function works".
const SPEC = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  payload: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const OTHER = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

const key = (secret: string): Buffer => {
  const decoded = webhookKey(secret);
  if (decoded === undefined) throw new Error(`not a signing secret: ${secret}`);
  return decoded;
};

describe('Standard Webhooks signatures', () => {
  it("reproduces the specification's example signature", () => {
    expect(webhookSignature([key(SPEC.secret)], SPEC.id, SPEC.timestamp, SPEC.payload)).toBe(SPEC.signature);
    // The same bytes as a Uint8Array (a body loaded from the blob store) sign the same.
    expect(webhookSignature([key(SPEC.secret)], SPEC.id, SPEC.timestamp, new TextEncoder().encode(SPEC.payload))).toBe(SPEC.signature);
  });

  it('gives one signature per secret, space separated, in order (a rotation)', () => {
    const other = createHmac('sha256', Buffer.alloc(32, 7)).update(`${SPEC.id}.${SPEC.timestamp}.${SPEC.payload}`).digest('base64');
    expect(webhookSignature([key(SPEC.secret), key(OTHER)], SPEC.id, SPEC.timestamp, SPEC.payload)).toBe(`${SPEC.signature} v1,${other}`);
    expect(webhookSignature([key(OTHER), key(SPEC.secret)], SPEC.id, SPEC.timestamp, SPEC.payload)).toBe(`v1,${other} ${SPEC.signature}`);
  });

  it('signs an empty body as the empty string', () => {
    const empty = createHmac('sha256', key(SPEC.secret)).update(`${SPEC.id}.${SPEC.timestamp}.`).digest('base64');
    expect(webhookSignature([key(SPEC.secret)], SPEC.id, SPEC.timestamp, null)).toBe(`v1,${empty}`);
    expect(webhookSignature([key(SPEC.secret)], SPEC.id, SPEC.timestamp, '')).toBe(`v1,${empty}`);
  });

  it('takes only whsec_ followed by strict base64 of 24 to 64 key bytes', () => {
    expect(key(SPEC.secret)).toHaveLength(24);
    for (const bad of [
      'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'whsec_',
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS',
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa!w',
      `whsec_${Buffer.alloc(23).toString('base64')}`,
      `whsec_${Buffer.alloc(65).toString('base64')}`,
    ]) {
      expect(webhookKey(bad), bad).toBeUndefined();
    }
    expect(webhookKey(`whsec_${Buffer.alloc(64).toString('base64')}`)).toHaveLength(64);
  });

  it("sets the three headers of an attempt over the task's own in any letter case, and refuses a secret that is not one", () => {
    const task = makeTask({ idempotencyKey: SPEC.id });
    const headers: Record<string, string> = { 'Webhook-Signature': 'forged', 'x-plain': 'p', 'idempotency-key': SPEC.id };
    expect(signAttemptHeaders(headers, task, [SPEC.secret, OTHER], SPEC.timestamp, SPEC.payload)).toBe(true);
    expect(headers).toEqual({
      'x-plain': 'p',
      'idempotency-key': SPEC.id,
      'webhook-id': SPEC.id,
      'webhook-timestamp': '1614265330',
      'webhook-signature': webhookSignature([key(SPEC.secret), key(OTHER)], SPEC.id, SPEC.timestamp, SPEC.payload),
    });
    const untouched: Record<string, string> = { 'x-plain': 'p' };
    expect(signAttemptHeaders(untouched, task, [SPEC.secret, 'whsec_short'], SPEC.timestamp, SPEC.payload)).toBe(false);
    expect(untouched).toEqual({ 'x-plain': 'p' });
  });
});
