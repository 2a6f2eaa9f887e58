import { isSecretHeaderValue, type StoredHeaders } from '../domain/header-value.js';
import type { RetryTask } from '../domain/task.js';
import type { Keyring } from './encryption-keys.js';
import { BODY_PURPOSE, headerPurpose, openSecret, sealedKeyId, sealSecret, SecretDecryptionError, type SealContext } from './secret-cipher.js';

/**
 * What re-sealing one sealed value came to:
 *
 * - `current`: it is sealed under the primary key already, and left as it is (not even opened);
 * - `resealed`: it was opened with the key it names and sealed again under the primary key, with a fresh IV and the
 *   same associated data (tenant, task, purpose), so it opens exactly where it opened before;
 * - `failed`: it could not be opened (its key is not in the keyring, it is damaged, or it was copied from another
 *   task) and is left as it is; `reason` names the key id and the rule, never the value.
 */
export type ResealedValue = { kind: 'current' } | { kind: 'resealed'; sealed: string } | { kind: 'failed'; reason: string };

/**
 * Re-seals one value made by `sealSecret` under the keyring's primary key, unless it is sealed with it already.
 *
 * @example
 * ```ts
 * const keyring = parseKeyring(`new:${newKey},old:${oldKey}`);
 * resealValue(keyring, 'v1:old:…', { tenantId: 'default', taskId, purpose: 'body' }); // { kind: 'resealed', sealed: 'v1:new:…' }
 * ```
 */
export function resealValue(keyring: Keyring, sealed: string, context: SealContext): ResealedValue {
  if (sealedKeyId(sealed) === keyring.primary.id) return { kind: 'current' };
  try {
    return { kind: 'resealed', sealed: sealSecret(keyring, openSecret(keyring, sealed, context), context) };
  } catch (error) {
    if (error instanceof SecretDecryptionError) return { kind: 'failed', reason: error.message };
    throw error;
  }
}

/** One sealed value of a task and what re-sealing it came to. */
export interface ValueReseal {
  /** Where the value is: `headers.<name>` (the name as stored) or `body`. */
  field: string;
  outcome: ResealedValue;
}

/** The parts of a stored task that {@link resealTaskSecrets} reads. */
export type SealedTask = Pick<RetryTask, 'tenantId' | 'taskId' | 'headers' | 'body' | 'sensitiveBody'>;

/** What {@link resealTaskSecrets} made of a task's headers and inline body. */
export interface TaskReseal {
  /** The headers and inline body to store: every value that could be re-sealed is, the others are as they were. */
  next: Pick<RetryTask, 'headers' | 'body'>;
  /** Whether `next` differs from what is stored (some value was re-sealed): only then is a write needed. */
  changed: boolean;
  /** Each sealed value, headers in their stored order, then the inline body. */
  values: ValueReseal[];
}

/**
 * Re-seals the sealed values a task keeps in its row under the keyring's primary key: each `{ enc }` header (bound
 * to `header:<lower-case name>`) and a sensitive inline body (bound to `body`). Header references (`{ ref }`) and
 * plain values are not secrets sealed here and are left alone; a sensitive body kept in the blob store is re-sealed
 * with {@link resealValue} once loaded.
 *
 * Pure: no store, no I/O. What is unchanged is returned as the same objects, and header names keep their order.
 */
export function resealTaskSecrets(keyring: Keyring, task: SealedTask): TaskReseal {
  const values: ValueReseal[] = [];
  const context = (purpose: string): SealContext => ({ tenantId: task.tenantId, taskId: task.taskId, purpose });
  let headers: StoredHeaders = task.headers;
  for (const name in task.headers) {
    const value = task.headers[name];
    if (value === undefined || !isSecretHeaderValue(value) || !('enc' in value)) continue;
    const outcome = resealValue(keyring, value.enc, context(headerPurpose(name)));
    values.push({ field: `headers.${name}`, outcome });
    if (outcome.kind !== 'resealed') continue;
    // Copied on the first change only: stored headers may be shared, frozen objects (the SQLite store's JSON cache).
    if (headers === task.headers) headers = { ...task.headers };
    headers[name] = { enc: outcome.sealed };
  }
  let body = task.body;
  if (task.sensitiveBody && task.body !== null) {
    const outcome = resealValue(keyring, task.body, context(BODY_PURPOSE));
    values.push({ field: 'body', outcome });
    if (outcome.kind === 'resealed') body = outcome.sealed;
  }
  return { next: { headers, body }, changed: headers !== task.headers || body !== task.body, values };
}
