import type { AttemptTimeouts } from '../domain/attempt-timeouts.js';
import type { RetryTask } from '../domain/task.js';
import { scrubSecrets, SentSecrets } from '../secrets/scrub-sent-secrets.js';
import { SecretUnavailableError, type TaskSecrets } from '../secrets/task-secrets.js';
import type { AttemptDispatcher, AttemptResult } from './attempt-result.js';
import { DeadLetterReason } from '../domain/dead-letter-reason.js';
import type { LoadBody } from './http-dispatcher.js';

/**
 * Reveals a task's secrets just before its request is built, and nowhere else: sealed headers opened, `{{secret:NAME}}`
 * references resolved (its target's signing secrets too), a sensitive body opened (loaded from the blob store first
 * when it is kept there), each among the secrets of the task's tenant and the shared ones. The plain values live only
 * in the request handed to the inner dispatcher, and what comes back is scrubbed of them (the response's excerpt and
 * an error's message, `[REDACTED]` where they stood) before anything stores or shows it: a target that echoes its
 * request must not hand a secret to whoever reads the attempt log. A secret that cannot be revealed (an unknown name, a
 * key no longer configured) ends the attempt with reason `secret_unavailable`: no retry can mend it.
 */
export class RevealingDispatcher implements AttemptDispatcher {
  constructor(
    private readonly inner: AttemptDispatcher,
    private readonly secrets: TaskSecrets,
    private readonly loadBody?: LoadBody | undefined,
  ) {}

  dispatch(task: RetryTask, attemptNumber: number, signingSecrets?: readonly string[], timeouts?: AttemptTimeouts): Promise<AttemptResult> {
    // Most tasks carry no secret and go to targets that do not sign: sent as they are, without a copy or a promise
    // more on the hot path.
    if (signingSecrets === undefined && !this.secrets.needsReveal(task)) {
      return timeouts === undefined ? this.inner.dispatch(task, attemptNumber) : this.inner.dispatch(task, attemptNumber, undefined, timeouts);
    }
    return this.#revealThenDispatch(task, attemptNumber, signingSecrets, timeouts);
  }

  async #revealThenDispatch(
    task: RetryTask,
    attemptNumber: number,
    signingSecrets: readonly string[] | undefined,
    timeouts: AttemptTimeouts | undefined,
  ): Promise<AttemptResult> {
    let revealed: RetryTask = task;
    let signWith: readonly string[] | undefined;
    // Signing secrets are not in it: the request carries their HMAC, never them.
    const sent = new SentSecrets();
    try {
      if (signingSecrets !== undefined) signWith = await this.secrets.revealSigningSecrets(task.tenantId, signingSecrets);
      if (this.secrets.needsReveal(task)) revealed = await this.secrets.reveal(task, sent);
      if (task.sensitiveBody && task.bodyRef !== null) {
        const sealed = await this.#load(task.bodyRef);
        if (typeof sealed !== 'string') return sealed;
        const body = this.secrets.openBody(task, sealed);
        sent.add(body);
        revealed = { ...revealed, body, bodyRef: null };
      }
    } catch (error) {
      if (!(error instanceof SecretUnavailableError)) throw error;
      return { kind: 'error', error, message: error.message, deadLetterReason: DeadLetterReason.SECRET_UNAVAILABLE };
    }
    const result =
      timeouts !== undefined
        ? await this.inner.dispatch(revealed, attemptNumber, signWith, timeouts)
        : signWith === undefined
          ? await this.inner.dispatch(revealed, attemptNumber)
          : await this.inner.dispatch(revealed, attemptNumber, signWith);
    return sent.size === 0 ? result : scrubbed(result, sent.forms());
  }

  /** The sealed body from the blob store, or the attempt's error when it cannot be read (retried as any other). */
  async #load(ref: string): Promise<string | AttemptResult> {
    if (this.loadBody === undefined) {
      return { kind: 'error', error: new Error('no blob store'), message: `cannot load body ${ref}: no blob store configured` };
    }
    try {
      const data = await this.loadBody(ref);
      return typeof data === 'string' ? data : Buffer.from(data).toString('utf8');
    } catch (error) {
      return { kind: 'error', error, message: `cannot load body ${ref}: ${error instanceof Error ? error.message : String(error)}` };
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** The result with its excerpt and its message scrubbed of every form of the secrets sent. */
function scrubbed(result: AttemptResult, forms: readonly string[]): AttemptResult {
  if (result.kind === 'response') {
    return result.bodySnippet === null ? result : { ...result, bodySnippet: scrubSecrets(result.bodySnippet, forms) };
  }
  if (result.kind === 'grpc') {
    // The message's excerpt is base64; the status message is text, and may echo a header.
    return { ...result, details: scrubSecrets(result.details, forms), bodySnippet: result.bodySnippet === null ? null : scrubSecrets(result.bodySnippet, forms) };
  }
  return { ...result, message: scrubSecrets(result.message, forms) };
}
