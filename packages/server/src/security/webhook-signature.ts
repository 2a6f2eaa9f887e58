import { createHmac } from 'node:crypto';

// Standard Webhooks signatures (https://www.standardwebhooks.com): what a receiver checks with any of the
// specification's libraries. Pure functions of their arguments; the dispatcher supplies the time and the body sent.

/** The prefix of a Standard Webhooks secret: `whsec_` followed by the base64 of the key bytes. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** Key sizes the specification allows, in bytes. */
export const WEBHOOK_KEY_BYTES = { min: 24, max: 64 } as const;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** What a signing secret must be, for the messages that refuse one (never quoting it). */
export const WEBHOOK_SECRET_RULE = `whsec_ followed by the base64 of ${WEBHOOK_KEY_BYTES.min} to ${WEBHOOK_KEY_BYTES.max} key bytes`;

/**
 * The HMAC key of a Standard Webhooks secret (`whsec_MfKQ9r8G…` → the bytes its base64 holds), or undefined when the
 * value is not one (no prefix, not strict base64, a key shorter or longer than the specification allows).
 */
export function webhookKey(secret: string): Buffer | undefined {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) return undefined;
  const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  // Buffer.from skips what is not base64: a typo would silently make another key.
  if (!BASE64.test(encoded)) return undefined;
  const key = Buffer.from(encoded, 'base64');
  return key.length >= WEBHOOK_KEY_BYTES.min && key.length <= WEBHOOK_KEY_BYTES.max ? key : undefined;
}

/**
 * The `webhook-signature` value of a message: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` for each key, in order,
 * space separated (several during a secret rotation, so the receiver may hold either secret). `body` is the exact
 * bytes sent; null is the empty body.
 *
 * @example
 * ```ts
 * webhookSignature([webhookKey('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')!], 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
 * // 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='
 * ```
 */
export function webhookSignature(keys: readonly Uint8Array[], id: string, timestamp: number, body: string | Uint8Array | null): string {
  const prefix = `${id}.${timestamp}.`;
  const signatures: string[] = [];
  for (const key of keys) {
    const hmac = createHmac('sha256', key).update(prefix);
    if (body !== null) hmac.update(body);
    signatures.push(`v1,${hmac.digest('base64')}`);
  }
  return signatures.join(' ');
}

/** The three request headers of a signed attempt (lower case, as retryd sends its own). */
export const WEBHOOK_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
