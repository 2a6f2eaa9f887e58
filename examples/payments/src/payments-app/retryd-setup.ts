import { randomBytes } from 'node:crypto';
import type { RetryPolicy } from '@retryd/core';

/** The policy retryd retries the app's settlement callbacks under. */
export const CALLBACK_POLICY_ID = 'payments-callback';

/**
 * How hard retryd pushes a callback the app does not take (the worker restarting, its database down): every 100 ms
 * to 2 s with full jitter, for an hour. A callback still refused after that is a dead letter in retryd, and the
 * worker's start-up pass settles its payment (see `PaymentProcessor.reconcileHandedOff`). A real app would allow days.
 */
export const CALLBACK_POLICY: RetryPolicy = {
  maxAttempts: 5_000,
  backoffType: 'EXPONENTIAL',
  initialDelayMs: 100,
  multiplier: 2,
  maxDelayMs: 2_000,
  jitterType: 'FULL',
  totalBudgetMs: 3_600_000,
  estimatedCallMs: 1_000,
  retryableStatusCodes: [408, 425, 429, 500, 502, 503, 504],
};

/** The name of the callbacks' signing secret in retryd's secrets file (`--secrets-file`). */
export const CALLBACK_SECRET_NAME = 'PAYMENTS_CALLBACK_KEY';

/** A new Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

async function send(serviceUrl: string, method: string, path: string, body: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${serviceUrl}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, text: await response.text() };
}

/**
 * What the operator sets up in retryd once, before the worker hands anything off: the callback policy, and signing
 * for the worker's origin (retryd signs every request it sends there, callbacks included, with the secret its secrets
 * file holds under {@link CALLBACK_SECRET_NAME}; the worker holds the same secret and verifies). Both are idempotent.
 *
 * @param callbackOrigin - the worker's origin as retryd sees it, e.g. `http://127.0.0.1:8081`
 */
export async function configureRetryd(serviceUrl: string, callbackOrigin: string): Promise<void> {
  const policy = await send(serviceUrl, 'POST', '/retry-policies', { policyId: CALLBACK_POLICY_ID, ...CALLBACK_POLICY });
  if (policy.status === 409) {
    const updated = await send(serviceUrl, 'PUT', `/retry-policies/${CALLBACK_POLICY_ID}`, CALLBACK_POLICY);
    if (updated.status !== 200) throw new Error(`retryd PUT /retry-policies/${CALLBACK_POLICY_ID} answered ${updated.status}: ${updated.text}`);
  } else if (policy.status !== 200 && policy.status !== 201) {
    throw new Error(`retryd POST /retry-policies answered ${policy.status}: ${policy.text}`);
  }
  const signing = { signing: { enabled: true, secrets: [`{{secret:${CALLBACK_SECRET_NAME}}}`] } };
  const target = await send(serviceUrl, 'PUT', `/targets/${encodeURIComponent(callbackOrigin)}`, signing);
  if (target.status !== 200) throw new Error(`retryd PUT /targets/${callbackOrigin} answered ${target.status}: ${target.text}`);
}
