import { headerValue, type HeadersLike } from '@retryd/core';
import { WebhookRefusal, WebhookVerificationError } from './webhook-verification-error.js';
import { base64Bytes, isBase64, secretKeyBytes } from './webhook-secret.js';

/** Default of {@link WebhookVerifierOptions.maxBodyBytes}: 1 MiB, as fastify's default body limit. */
export const DEFAULT_WEBHOOK_MAX_BODY_BYTES = 1024 * 1024;
/**
 * Most `v1` signatures one `webhook-signature` header may hold: 8. The retryd service sends one per signing secret, at
 * most 5 during a rotation; a header with more is refused rather than compared.
 */
export const MAX_WEBHOOK_SIGNATURES = 8;
/**
 * Longest `webhook-signature` header read: 2,048 characters, room for 8 `v1` and 8 `v1a` (Ed25519) signatures. A
 * longer one is refused before it is split.
 */
export const MAX_WEBHOOK_SIGNATURE_HEADER_LENGTH = 2048;

/** Options of {@link createWebhookVerifier}. */
export interface WebhookVerifierOptions {
  /**
   * The target's signing secret (`whsec_…`, at least 24 key bytes), or several during a rotation: a request signed
   * with any of them passes.
   */
  secrets: string | readonly string[];
  /** How far `webhook-timestamp` may be from now, in seconds, either way. Default 300 (the specification's). */
  toleranceSeconds?: number;
  /**
   * Largest body verified, in bytes (UTF-8 bytes for a string): a larger one is refused with `WEBHOOK_BODY_TOO_LARGE`
   * before any MAC is computed. Default {@link DEFAULT_WEBHOOK_MAX_BODY_BYTES} (1 MiB); raise it for a target whose
   * tasks carry larger bodies (the retryd service accepts up to 10 MiB), as the receiver's own body limit must be.
   */
  maxBodyBytes?: number;
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
/** The base64 of an HMAC-SHA256 (32 bytes): 44 characters, padded. */
const V1_SIGNATURE_LENGTH = 44;

/**
 * A verifier for requests signed per Standard Webhooks, as the retryd service signs them for a target with signing
 * secrets: `webhook-id`, `webhook-timestamp` (seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of
 * "id.timestamp.body">`, space separated when the sender holds several secrets). It uses WebCrypto
 * (`crypto.subtle`), so it runs in Node, browsers and edge runtimes alike.
 *
 * What a request costs is bounded before any secret is used: the timestamp is checked first, a body over
 * `maxBodyBytes` and a signature header with more than {@link MAX_WEBHOOK_SIGNATURES} `v1` signatures (or longer than
 * {@link MAX_WEBHOOK_SIGNATURE_HEADER_LENGTH}) are refused, and the MAC is computed once per secret, then compared with
 * every candidate in constant time. Requests from any Standard Webhooks sender verify, and so do the
 * specification's libraries' (`standardwebhooks`) on what retryd sends.
 *
 * Verify the body as received, before parsing it: re-serialised JSON is other bytes. Use `webhook-id` to drop
 * repeats: retryd sends the same id on every attempt of a task.
 *
 * @throws TypeError naming `secrets`, `toleranceSeconds` or `maxBodyBytes` when one breaks its rule (a secret that
 *   is not `whsec_` and base64, or holds fewer than 24 key bytes)
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
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_WEBHOOK_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 0) throw new TypeError(`maxBodyBytes must be an integer >= 0, got ${maxBodyBytes}`);
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
    const candidates = v1Candidates(signatures);
    const bytes = bodyBytes(body, maxBodyBytes);
    keys ??= Promise.all(keyBytes.map((key) => crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])));
    const signed = signedContent(id, stamp, bytes);
    for (const key of await keys) {
      const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, signed));
      // Every candidate is compared, a match or not: which of them matched is no secret, but the MAC is.
      let matched = false;
      for (const candidate of candidates) matched = equalBytes(mac, candidate) || matched;
      if (matched) return { id, timestamp };
    }
    throw new WebhookVerificationError(WebhookRefusal.NO_MATCHING_SIGNATURE, 'webhook-signature has no v1 signature that matches the body with the secret');
  };
}

function required(headers: HeadersLike, name: string): string {
  const value = headerValue(headers, name);
  if (value === undefined || value === '') throw new WebhookVerificationError(WebhookRefusal.MISSING_HEADER, `the ${name} header is missing`);
  return value;
}

/**
 * The `v1` signatures of a `webhook-signature` header, decoded: those that are not the base64 of 32 bytes cannot
 * match and are dropped; other versions (`v1a`, later ones) are ignored.
 *
 * @throws WebhookVerificationError `SIGNATURE_HEADER_TOO_LARGE` past {@link MAX_WEBHOOK_SIGNATURE_HEADER_LENGTH}
 *   characters or {@link MAX_WEBHOOK_SIGNATURES} `v1` signatures
 */
function v1Candidates(header: string): Uint8Array[] {
  if (header.length > MAX_WEBHOOK_SIGNATURE_HEADER_LENGTH) {
    throw new WebhookVerificationError(
      WebhookRefusal.SIGNATURE_HEADER_TOO_LARGE,
      `webhook-signature must be at most ${MAX_WEBHOOK_SIGNATURE_HEADER_LENGTH} characters, got ${header.length}`,
    );
  }
  const entries = header.split(' ').filter((entry) => entry.startsWith('v1,'));
  if (entries.length > MAX_WEBHOOK_SIGNATURES) {
    throw new WebhookVerificationError(
      WebhookRefusal.SIGNATURE_HEADER_TOO_LARGE,
      `webhook-signature must hold at most ${MAX_WEBHOOK_SIGNATURES} v1 signatures, got ${entries.length}`,
    );
  }
  return entries
    .map((entry) => entry.slice(3))
    .filter((text) => text.length === V1_SIGNATURE_LENGTH && isBase64(text))
    .map(base64Bytes);
}

/** The body's bytes, refused past `max` before it is encoded whole. */
function bodyBytes(body: string | Uint8Array, max: number): Uint8Array {
  // A string has at least one UTF-8 byte per UTF-16 code unit: one longer than `max` need not be encoded to be refused.
  const bytes = typeof body === 'string' ? (body.length > max ? undefined : encoder.encode(body)) : body;
  if (bytes === undefined || bytes.length > max) {
    const size = bytes === undefined ? `more than ${max}` : String(bytes.length);
    throw new WebhookVerificationError(WebhookRefusal.BODY_TOO_LARGE, `the body must be at most ${max} bytes (maxBodyBytes), got ${size}`);
  }
  return bytes;
}

/** `id.timestamp.` followed by the body's exact bytes. */
function signedContent(id: string, timestamp: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix, 0);
  signed.set(body, prefix.length);
  return signed;
}

/** Whether two byte strings are equal, in time that depends on their length only. */
function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}
