import { headerValue, type HeadersLike } from '@retryd/core';
import { WebhookRefusal, WebhookVerificationError } from './webhook-verification-error.js';
import { base64Bytes, isBase64, secretKeyBytes } from './webhook-secret.js';

/** Options of {@link createWebhookVerifier}. */
export interface WebhookVerifierOptions {
  /**
   * The target's signing secret (`whsec_…`), or several during a rotation: a request signed with any of them passes.
   */
  secrets: string | readonly string[];
  /** How far `webhook-timestamp` may be from now, in seconds, either way. Default 300 (the specification's). */
  toleranceSeconds?: number;
  /** The current time in epoch ms. Default `Date.now`. */
  now?: () => number;
}

/** What a verified request is: its id (retryd's idempotency key of the task, the same on every attempt) and timestamp. */
export interface VerifiedWebhook {
  id: string;
  /** The signing time, in epoch seconds. */
  timestamp: number;
}

/** Checks one request: its exact body (the bytes received, or their text) and its headers. */
export type WebhookVerifier = (body: string | Uint8Array, headers: HeadersLike) => Promise<VerifiedWebhook>;

const encoder = new TextEncoder();
/** WebCrypto's `CryptoKey`, named through `crypto.subtle` so that Node's types need no DOM library. */
type HmacKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/**
 * A verifier for requests signed per Standard Webhooks, as the retryd service signs them for a target with signing
 * secrets: `webhook-id`, `webhook-timestamp` (seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of
 * "id.timestamp.body">`, space separated when the sender holds several secrets). It uses WebCrypto
 * (`crypto.subtle`), so it runs in Node, browsers and edge runtimes alike; the comparison is WebCrypto's own
 * `verify`, which does not leak through timing.
 *
 * Verify the body as received, before parsing it: re-serialised JSON is other bytes. Use `webhook-id` to drop
 * repeats: retryd sends the same id on every attempt of a task.
 *
 * @throws TypeError naming `secrets` or `toleranceSeconds` when one breaks its rule
 * @example
 * ```ts
 * const verify = createWebhookVerifier({ secrets: process.env.RETRYD_SIGNING_SECRET! });
 * const { id } = await verify(rawBody, req.headers); // throws WebhookVerificationError when it does not hold
 * ```
 */
export function createWebhookVerifier(options: WebhookVerifierOptions): WebhookVerifier {
  const list = typeof options.secrets === 'string' ? [options.secrets] : options.secrets;
  if (!Array.isArray(list) || list.length === 0) throw new TypeError('secrets must be a secret or a non-empty list of secrets');
  const keyBytes = list.map((secret, i) => secretKeyBytes(secret, typeof options.secrets === 'string' ? 'secrets' : `secrets[${i}]`));
  const tolerance = options.toleranceSeconds ?? 300;
  if (!Number.isFinite(tolerance) || tolerance < 0) throw new TypeError(`toleranceSeconds must be a finite number >= 0, got ${tolerance}`);
  const now = options.now ?? Date.now;
  let keys: Promise<HmacKey[]> | undefined;

  return async (body, headers) => {
    const id = required(headers, 'webhook-id');
    const stamp = required(headers, 'webhook-timestamp');
    const signatures = required(headers, 'webhook-signature');
    if (!/^\d{1,15}$/.test(stamp)) throw new WebhookVerificationError(WebhookRefusal.INVALID_TIMESTAMP, 'webhook-timestamp must be whole seconds since the epoch');
    const timestamp = Number(stamp);
    const skew = Math.abs(now() / 1000 - timestamp);
    if (skew > tolerance) {
      throw new WebhookVerificationError(WebhookRefusal.TIMESTAMP_OUT_OF_TOLERANCE, `webhook-timestamp is ${Math.round(skew)} s from now, more than the tolerance of ${tolerance} s`);
    }
    keys ??= Promise.all(keyBytes.map((bytes) => crypto.subtle.importKey('raw', bytes as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])));
    const signed = signedContent(id, stamp, body);
    const candidates = signatures
      .split(' ')
      .filter((entry) => entry.startsWith('v1,') && isBase64(entry.slice(3)))
      .map((entry) => base64Bytes(entry.slice(3)));
    for (const key of await keys) {
      for (const signature of candidates) {
        if (await crypto.subtle.verify('HMAC', key, signature as Uint8Array<ArrayBuffer>, signed)) return { id, timestamp };
      }
    }
    throw new WebhookVerificationError(WebhookRefusal.NO_MATCHING_SIGNATURE, 'webhook-signature has no v1 signature that matches the body with the secret');
  };
}

function required(headers: HeadersLike, name: string): string {
  const value = headerValue(headers, name);
  if (value === undefined || value === '') throw new WebhookVerificationError(WebhookRefusal.MISSING_HEADER, `the ${name} header is missing`);
  return value;
}

/** `id.timestamp.` followed by the body's exact bytes. */
function signedContent(id: string, timestamp: string, body: string | Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  const signed = new Uint8Array(prefix.length + bytes.length);
  signed.set(prefix, 0);
  signed.set(bytes, prefix.length);
  return signed;
}
