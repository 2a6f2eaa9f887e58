import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiKeyRecord, ApiKeyScope } from '../store/store.js';

/** Every API key starts with this, so secret scanners and people can tell one at a glance. */
export const API_KEY_PREFIX = 'rtd_';

/** A key id: 16 lower-case hex digits (64 random bits), public, shown in lists and logs. */
const KEY_ID = /^[0-9a-f]{16}$/;
/** The secret part: 32 random bytes, base64url (43 characters). */
const SECRET = /^[A-Za-z0-9_-]{43}$/;

/** What an API key looks like, for the messages that refuse something that is not one. */
export const API_KEY_RULE = `${API_KEY_PREFIX}, 16 lower-case hex digits, _, then 43 base64url characters (A-Z a-z 0-9 - _), as retryd keys create prints one`;

/** An API key split into its public id and its secret part. */
export interface ApiKeyParts {
  keyId: string;
  secret: string;
}

/**
 * A new API key: `rtd_<keyId>_<secret>`, with 64 random bits of id and 256 of secret. The secret part is what the
 * store never sees: it keeps {@link hashSecret} of it.
 */
export function generateApiKey(): ApiKeyParts & { token: string } {
  const keyId = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { keyId, secret, token: `${API_KEY_PREFIX}${keyId}_${secret}` };
}

/** Splits a presented key; undefined when it is not shaped like one (no store read is spent on it). */
export function parseApiKey(token: string): ApiKeyParts | undefined {
  if (!token.startsWith(API_KEY_PREFIX)) return undefined;
  const rest = token.slice(API_KEY_PREFIX.length);
  const keyId = rest.slice(0, 16);
  const secret = rest.slice(17);
  if (rest[16] !== '_' || !KEY_ID.test(keyId) || !SECRET.test(secret)) return undefined;
  return { keyId, secret };
}

/** Lower-case hex SHA-256 of a key's secret part: what the store keeps. A fast hash is enough for 256 random bits. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/**
 * What the store keeps of the secret part of a key of `scope`: {@link hashSecret} of it, or for a `metrics` key the
 * hash of `metrics:` and the secret. A version of retryd from before the `metrics` scope reads an unknown scope as
 * wider than `admin`: one running beside this one (a rolling upgrade, a rollback) must not accept a metrics key at
 * all, and with this hash its secret matches nothing there.
 */
export function storedHashOf(secret: string, scope: ApiKeyScope): string {
  return hashSecret(scope === 'metrics' ? `metrics:${secret}` : secret);
}

/** Whether two lower-case hex hashes are equal, compared in constant time. */
export function hashesMatch(presentedHash: string, storedHash: string): boolean {
  const presented = Buffer.from(presentedHash, 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

/** Whether `secret` is the secret part of the key `record` keeps, compared in constant time. */
export function secretMatches(secret: string, record: Pick<ApiKeyRecord, 'scope' | 'secretHash'>): boolean {
  return hashesMatch(storedHashOf(secret, record.scope), record.secretHash);
}

/** Whether a string is a key id (for paths such as `/api-keys/{keyId}`). */
export function isKeyId(value: string): boolean {
  return KEY_ID.test(value);
}
