import type { FieldError } from '../domain/errors.js';
import { isSecretHeaderValue, type StoredHeaders, type StoredHeaderValue } from '../domain/header-value.js';
import type { RetryTask } from '../domain/task.js';
import type { Keyring } from './encryption-keys.js';
import { isCredentialHeader } from './redaction.js';
import { BODY_PURPOSE, headerPurpose, openSecret, sealSecret, SecretDecryptionError } from './secret-cipher.js';
import type { SentSecrets } from './scrub-sent-secrets.js';
import {
  envSecretProvider,
  hasSecretReference,
  resolveReferences,
  secretReferences,
  unknownSecretRule,
  type SecretProvider,
} from './secret-provider.js';

/** Options of {@link TaskSecrets}. */
export interface TaskSecretsOptions {
  /** `RETRYD_ENCRYPTION_KEY`. Absent: a literal credential is refused at enqueue, and sealed values cannot be read. */
  keyring?: Keyring | undefined;
  /** Resolves `{{secret:NAME}}`, among the task's tenant's secrets and the shared ones. Default {@link envSecretProvider}. */
  provider?: SecretProvider | undefined;
  /**
   * Header names (any letter case) an operator counts as credentials besides those of `isCredentialHeader`
   * (`--credential-headers`): sealed at enqueue, or refused without a key, as the others. Default none.
   */
  credentialHeaders?: readonly string[] | undefined;
}

/** The parts of a new task that may hold secrets, in plain text, as the enqueue request gave them. */
export interface PlainParts {
  headers: Record<string, string>;
  /** Header names (lower case) the task marked secret besides the credential names. */
  secretHeaders: ReadonlySet<string>;
  body: string | null;
  sensitiveBody: boolean;
}

/** What the store keeps of those parts. */
export interface ProtectedParts {
  headers: StoredHeaders;
  body: string | null;
}

/** Why a task's secrets could not be revealed at dispatch: the attempt log's message. Never holds a secret. */
export class SecretUnavailableError extends Error {
  override readonly name = 'SecretUnavailableError';
  readonly code = 'SECRET_UNAVAILABLE';
}

/** The rule a literal credential breaks when no key is configured (the 400's `rule`). */
export const NO_KEY_RULE = 'credential headers are stored encrypted; start retryd with RETRYD_ENCRYPTION_KEY or use {{secret:NAME}}';
/** The rule a sensitive body breaks when no key is configured. */
export const NO_KEY_BODY_RULE = 'a sensitive body is stored encrypted; start retryd with RETRYD_ENCRYPTION_KEY';

/**
 * Keeps a task's secrets out of the store in plain text, the same for every store: before the insert, credential
 * headers (by name or marked by the task) are sealed with the encryption key (AES-256-GCM, bound to tenant, task and
 * header), a sensitive body too, and values that hold `{{secret:NAME}}` references are kept as written; at dispatch,
 * {@link reveal} gives the plain values back.
 */
export class TaskSecrets {
  readonly #keyring: Keyring | undefined;
  readonly #provider: SecretProvider;
  readonly #credentialHeaders: ReadonlySet<string>;

  constructor(options: TaskSecretsOptions = {}) {
    this.#keyring = options.keyring;
    this.#provider = options.provider ?? envSecretProvider();
    this.#credentialHeaders = new Set((options.credentialHeaders ?? []).map((name) => name.toLowerCase()));
  }

  /** Whether a header is a credential by its name: by `isCredentialHeader`'s rule, or named by the operator. */
  isCredential(name: string): boolean {
    return isCredentialHeader(name) || (this.#credentialHeaders.size > 0 && this.#credentialHeaders.has(name.toLowerCase()));
  }

  /** Whether an encryption key is configured. */
  get canSeal(): boolean {
    return this.#keyring !== undefined;
  }

  /**
   * Seals what must not be stored in plain text (see the class). Errors name the field (prefixed with `path`) and the
   * rule: a literal credential or a sensitive body without a key, a reference to a secret the provider does not know.
   */
  async protect(
    tenantId: string,
    taskId: string,
    plain: PlainParts,
    path: string,
  ): Promise<{ ok: true; value: ProtectedParts } | { ok: false; errors: FieldError[] }> {
    // Most tasks carry no secret: their headers are kept as they are, without a copy.
    if (!this.needsProtection(plain)) return { ok: true, value: { headers: plain.headers, body: plain.body } };
    const errors: FieldError[] = [];
    const fail = (field: string, rule: string) => errors.push({ field: `${path}${field}`, rule, message: `${path}${field}: ${rule}` });
    const headers: StoredHeaders = {};
    for (const name in plain.headers) {
      const value = plain.headers[name] as string;
      const referring = hasSecretReference(value);
      for (const ref of referring ? secretReferences(value) : []) {
        if ((await this.#provider.resolve({ tenantId, name: ref })) === undefined) fail(`headers.${name}`, unknownSecretRule(tenantId, ref));
      }
      if (this.isCredential(name) || plain.secretHeaders.has(name.toLowerCase())) {
        if (this.#keyring !== undefined) headers[name] = { enc: sealSecret(this.#keyring, value, { tenantId, taskId, purpose: headerPurpose(name) }) };
        else if (referring) headers[name] = { ref: value };
        else fail(`headers.${name}`, NO_KEY_RULE);
      } else {
        headers[name] = referring ? { ref: value } : value;
      }
    }
    let body = plain.body;
    if (plain.sensitiveBody && body !== null) {
      if (this.#keyring === undefined) fail('sensitiveBody', NO_KEY_BODY_RULE);
      else body = sealSecret(this.#keyring, body, { tenantId, taskId, purpose: BODY_PURPOSE });
    }
    return errors.length > 0 ? { ok: false, errors } : { ok: true, value: { headers, body } };
  }

  /**
   * Whether {@link protect} has anything to do: a sensitive body, or a header that is a credential, is marked secret or
   * holds a reference. When not, it keeps the parts as they are, and a caller may skip it.
   */
  needsProtection(plain: PlainParts): boolean {
    return plain.sensitiveBody || this.#hasSecretHeader(plain);
  }

  /** Whether a header is a credential, is marked secret or holds a reference: one that {@link protect} must handle. */
  #hasSecretHeader(plain: PlainParts): boolean {
    for (const name in plain.headers) {
      if (this.isCredential(name) || hasSecretReference(plain.headers[name] as string)) return true;
      if (plain.secretHeaders.size > 0 && plain.secretHeaders.has(name.toLowerCase())) return true;
    }
    return false;
  }

  /** Whether a stored task has anything to reveal before it can be sent. Cheap: no allocation. */
  needsReveal(task: RetryTask): boolean {
    if (task.sensitiveBody) return true;
    for (const name in task.headers) if (isSecretHeaderValue(task.headers[name] as StoredHeaderValue)) return true;
    return false;
  }

  /**
   * The task as it is sent: every header a plain string (sealed ones opened, references resolved among the task's
   * tenant's secrets and the shared ones), a sensitive inline body opened. A sensitive body kept in the blob store is
   * opened with {@link openBody} once loaded. Each plain value revealed is handed to `sent`, when given, so that what
   * the target answers can be scrubbed of it.
   * @throws SecretUnavailableError naming the header and why (unknown secret, unknown key id, wrong task)
   */
  async reveal(task: RetryTask, sent?: SentSecrets): Promise<RetryTask> {
    const headers: Record<string, string> = {};
    const collect = sent === undefined ? undefined : (secret: string) => sent.add(secret);
    for (const name in task.headers) {
      const value = task.headers[name];
      if (value === undefined) continue;
      if (!isSecretHeaderValue(value)) {
        headers[name] = value;
        continue;
      }
      const written = 'enc' in value ? this.#open(task, value.enc, headerPurpose(name), `header ${name}`) : value.ref;
      const resolved = await resolveReferences(written, task.tenantId, this.#provider, collect);
      if (!resolved.ok) {
        throw new SecretUnavailableError(`header ${name} refers to secret ${resolved.name}, which the secret provider does not know`);
      }
      headers[name] = resolved.value;
      sent?.addHeader(resolved.value);
    }
    const body = task.sensitiveBody && task.body !== null ? this.openBody(task, task.body) : task.body;
    if (task.sensitiveBody && body !== null) sent?.add(body);
    return { ...task, headers, body };
  }

  /**
   * The values of a target's signing secrets (`{{secret:NAME}}` references, see `TargetSettings.signing`), in order,
   * among the secrets of the target's tenant and the shared ones.
   * @throws SecretUnavailableError naming the secret the provider does not know
   */
  async revealSigningSecrets(tenantId: string, references: readonly string[]): Promise<string[]> {
    const values: string[] = [];
    for (const reference of references) {
      const resolved = await resolveReferences(reference, tenantId, this.#provider);
      if (!resolved.ok) {
        throw new SecretUnavailableError(`the target's signing secret ${resolved.name} is unknown to the secret provider`);
      }
      values.push(resolved.value);
    }
    return values;
  }

  /** Opens a sensitive body (inline, or as loaded from the blob store). @throws SecretUnavailableError */
  openBody(task: RetryTask, sealed: string): string {
    return this.#open(task, sealed, BODY_PURPOSE, 'the body');
  }

  #open(task: RetryTask, sealed: string, purpose: string, what: string): string {
    try {
      return openSecret(this.#keyring, sealed, { tenantId: task.tenantId, taskId: task.taskId, purpose });
    } catch (error) {
      if (error instanceof SecretDecryptionError) throw new SecretUnavailableError(`${what}: ${error.message}`);
      throw error;
    }
  }
}
