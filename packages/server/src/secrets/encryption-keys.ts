import { createHash } from 'node:crypto';

/** One AES-256 key and the id each ciphertext it made carries. */
export interface EncryptionKey {
  readonly id: string;
  readonly key: Buffer;
}

/**
 * The keys of `RETRYD_ENCRYPTION_KEY`: the first encrypts, every one decrypts (so a key can be rotated in without
 * losing what the older ones sealed).
 */
export interface Keyring {
  /** The key new secrets are sealed with. */
  readonly primary: EncryptionKey;
  /** Every key, by id (the primary included). */
  readonly byId: ReadonlyMap<string, EncryptionKey>;
}

/** `RETRYD_ENCRYPTION_KEY` breaks its rule; the message names the variable and the rule, never a key. */
export class EncryptionKeyError extends Error {
  override readonly name = 'EncryptionKeyError';
  readonly code = 'INVALID_CONFIG';
}

/** What a key id may be: it is written into every ciphertext, between colons. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * The id of a key given without one: `k` and the first 8 hex digits of its SHA-256, so the same key has the same id
 * wherever it is listed (given alone today, second in a rotation list tomorrow).
 */
export function derivedKeyId(key: Buffer): string {
  return `k${createHash('sha256').update(key).digest('hex').slice(0, 8)}`;
}

/**
 * Parses `RETRYD_ENCRYPTION_KEY`: comma-separated entries, each `base64` of 32 bytes, or `id:base64` (id: 1 to 32 of
 * `A-Z a-z 0-9 _ -`). The first entry encrypts; all decrypt. Standard and URL-safe base64 are both accepted.
 *
 * @example
 * ```ts
 * parseKeyring('2026b:' + newKey + ',2026a:' + oldKey).primary.id; // '2026b'
 * ```
 * @throws EncryptionKeyError naming the entry (by position) and the rule it breaks
 */
export function parseKeyring(value: string, variable = 'RETRYD_ENCRYPTION_KEY'): Keyring {
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (entries.length === 0) throw new EncryptionKeyError(`${variable} must hold at least one key (base64 of 32 bytes), got an empty value`);
  const keys: EncryptionKey[] = [];
  const byId = new Map<string, EncryptionKey>();
  entries.forEach((entry, i) => {
    const where = `${variable} entry ${i + 1}`;
    const colon = entry.indexOf(':');
    const encoded = colon < 0 ? entry : entry.slice(colon + 1);
    if (!BASE64.test(encoded)) throw new EncryptionKeyError(`${where} must be base64 of 32 bytes or id:base64`);
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== 32) throw new EncryptionKeyError(`${where} must be base64 of 32 bytes, got ${key.length} bytes`);
    const id = colon < 0 ? derivedKeyId(key) : entry.slice(0, colon);
    if (!KEY_ID_PATTERN.test(id)) throw new EncryptionKeyError(`${where} must have an id of 1 to 32 letters, digits, _ or -`);
    if (byId.has(id)) throw new EncryptionKeyError(`${where} must have an id of its own; ${id} is given twice`);
    const parsed = { id, key };
    keys.push(parsed);
    byId.set(id, parsed);
  });
  return { primary: keys[0] as EncryptionKey, byId };
}
