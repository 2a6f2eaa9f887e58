import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Keyring } from './encryption-keys.js';

/** The version prefix of every sealed value. */
export const SEALED_VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value could not be opened: unknown key id, wrong associated data, damaged text. Never holds the value. */
export class SecretDecryptionError extends Error {
  override readonly name = 'SecretDecryptionError';
  readonly code = 'SECRET_UNAVAILABLE';
}

/**
 * What a ciphertext is bound to: it opens only with the same tenant, task and purpose (`header:<lower-case name>` or
 * `body`), so a value copied to another task, tenant or header fails to decrypt.
 */
export interface SealContext {
  tenantId: string;
  taskId: string;
  purpose: string;
}

/** The purpose a sealed header is bound to: `header:` and its name in lower case (header names ignore case). */
export function headerPurpose(name: string): string {
  return `header:${name.toLowerCase()}`;
}

/** The purpose a sealed body is bound to, inline or in the blob store. */
export const BODY_PURPOSE = 'body';

function associatedData(context: SealContext): Buffer {
  // JSON keeps the parts apart whatever they contain (a tenant id with a colon cannot impersonate another split).
  return Buffer.from(JSON.stringify(['retryd-secret', SEALED_VERSION, context.tenantId, context.taskId, context.purpose]));
}

/**
 * Encrypts `plaintext` with AES-256-GCM under the keyring's primary key: `v1:<key id>:<base64url of iv, ciphertext,
 * tag>`, a fresh 96-bit random IV each time.
 *
 * @example
 * ```ts
 * const sealed = sealSecret(keyring, 'Bearer abc', { tenantId: 'default', taskId, purpose: 'header:authorization' });
 * openSecret(keyring, sealed, { tenantId: 'default', taskId, purpose: 'header:authorization' }); // 'Bearer abc'
 * ```
 */
export function sealSecret(keyring: Keyring, plaintext: string, context: SealContext): string {
  const { id, key } = keyring.primary;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(associatedData(context));
  const encrypted = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${SEALED_VERSION}:${id}:${Buffer.concat([iv, encrypted, cipher.getAuthTag()]).toString('base64url')}`;
}

/**
 * The key id a sealed value names, or undefined when it is not one: which key of the keyring sealed it, read without
 * opening it (so without any key). A rotation re-seals the values whose id is not the primary's.
 *
 * @example
 * ```ts
 * sealedKeyId('v1:2026-05:q83v…'); // '2026-05'
 * ```
 */
export function sealedKeyId(sealed: string): string | undefined {
  const parts = sealed.split(':');
  return parts.length === 3 && parts[0] === SEALED_VERSION ? parts[1] : undefined;
}

/**
 * Decrypts a value made by {@link sealSecret}, with any key of the keyring.
 * @throws SecretDecryptionError when the format, the key id or the associated data is wrong (messages name the key id,
 * never the value)
 */
export function openSecret(keyring: Keyring | undefined, sealed: string, context: SealContext): string {
  const parts = sealed.split(':');
  if (parts.length !== 3 || parts[0] !== SEALED_VERSION) {
    throw new SecretDecryptionError(`the ${context.purpose} secret is not a ${SEALED_VERSION} sealed value`);
  }
  const id = parts[1] as string;
  if (keyring === undefined) {
    throw new SecretDecryptionError(`the ${context.purpose} secret is sealed with key ${id}, but no RETRYD_ENCRYPTION_KEY is configured`);
  }
  const entry = keyring.byId.get(id);
  if (entry === undefined) {
    throw new SecretDecryptionError(`the ${context.purpose} secret is sealed with key ${id}, which RETRYD_ENCRYPTION_KEY does not list`);
  }
  const bytes = Buffer.from(parts[2] as string, 'base64url');
  if (bytes.length < IV_BYTES + TAG_BYTES) throw new SecretDecryptionError(`the ${context.purpose} secret is truncated`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', entry.key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(associatedData(context));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    // GCM says only "unable to authenticate": a wrong key with this id, another task's value, or damage.
    throw new SecretDecryptionError(`the ${context.purpose} secret does not decrypt with key ${id} for this task`);
  }
}
