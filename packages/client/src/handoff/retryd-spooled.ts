import type { SpoolEntry } from '../spool/spool-entry.js';

/**
 * The call failed in a way worth retrying and retryd could not take it (it did not answer, or answered 408, 429 or a
 * 5xx), so it was kept in the spool, on disk, to be forwarded when retryd answers again: the handler's work ends here
 * and the answer is `202 { status: 'spooled', idempotencyKey }`. The task, once forwarded, carries that key.
 */
export class RetrydSpooled extends Error {
  override readonly name = 'RetrydSpooled';
  readonly code = 'RETRYD_SPOOLED';
  readonly idempotencyKey: string;

  constructor(
    readonly entry: SpoolEntry,
    options: { cause?: unknown } = {},
  ) {
    super(`the call to ${entry.request.targetUrl} failed, retryd could not take it, and it was spooled to be handed over later (key ${entry.request.idempotencyKey})`, options);
    this.idempotencyKey = entry.request.idempotencyKey;
  }
}

/** True for a {@link RetrydSpooled}, also one made by another copy of this package. */
export function isRetrydSpooled(error: unknown): error is RetrydSpooled {
  return error instanceof RetrydSpooled || (error instanceof Error && (error as { code?: unknown }).code === 'RETRYD_SPOOLED' && 'idempotencyKey' in error);
}

/** The body `202` answers for a spooled call: the key the task will carry once retryd has it. */
export function spooledAnswer(error: RetrydSpooled): { status: 'spooled'; idempotencyKey: string } {
  return { status: 'spooled', idempotencyKey: error.idempotencyKey };
}
